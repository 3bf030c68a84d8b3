"""bench_torch_across.py: dlscan.cumsum(x, group=...) over torch.distributed's NCCL (issue 43), on
the GPUs of one host: checks int64 and float32 sums and an int32 max over uneven slices against
torch on the whole array, then times int32 sums of 2^28, 2^20 and 2^14 items a GPU (CUDA events
around each call, the median of 9 after 5 warm-up rounds, the slowest rank), beside a local
dlscan.cumsum and torch's all-gather of one value. Compare with bench_across (C) on the same host.

    torchrun --nproc_per_node=2 bench/bench_torch_across.py
"""

import torch
import torch.distributed as dist
import dlscan
dist.init_process_group("nccl")
rank, ranks = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
g = dist.group.WORLD
gen = torch.Generator().manual_seed(11)
ok = True
for dtype, fn, excl in ((torch.int64, dlscan.cumsum, False), (torch.float32, dlscan.cumsum, True), (torch.int32, dlscan.cummax, False)):
    whole = torch.randint(-100, 100, (300001,), generator=gen).to(dtype)
    cuts = sorted(torch.randint(0, len(whole) + 1, (ranks - 1,), generator=gen).tolist())
    bounds = [0] + cuts + [len(whole)]
    part = whole[bounds[rank]:bounds[rank + 1]].cuda()
    total = torch.zeros(1, dtype=dtype, device="cuda")
    out = fn(part, exclusive=excl, total=total, group=g)
    if fn is dlscan.cumsum:
        ref = torch.cumsum(whole.double(), 0)
        if excl:
            ref = torch.cat([torch.zeros(1, dtype=torch.float64), ref[:-1]])
    else:
        ref = torch.cummax(whole, 0).values.double()
    want = ref[bounds[rank]:bounds[rank + 1]]
    good = torch.equal(out.double().cpu(), want) and float(total.item()) == float((torch.cumsum(whole.double(), 0)[-1] if fn is dlscan.cumsum else ref[-1]))
    ok &= good
    print(f"rank {rank}: {dtype} {fn.__name__} {'exclusive' if excl else 'inclusive'}: {'ok' if good else 'WRONG'}", flush=True)

def timed(f, reps=9):
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    out = []
    for r in range(reps + 5):
        dist.barrier(device_ids=[rank]); torch.cuda.synchronize()
        s.record(); f(); e.record(); e.synchronize()
        if r >= 5:
            out.append(s.elapsed_time(e) * 1000)
    t = torch.tensor([sorted(out)[reps // 2]], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()

for n in (1 << 28, 1 << 20, 1 << 14):
    x = torch.ones(n, dtype=torch.int32, device="cuda"); y = torch.empty_like(x)
    one = torch.zeros(2, dtype=torch.int32, device="cuda"); all_ = torch.zeros(2 * ranks, dtype=torch.int32, device="cuda")
    t_across = timed(lambda: dlscan.cumsum(x, out=y, group=g))
    t_local = timed(lambda: dlscan.cumsum(x, out=y))
    t_gather = timed(lambda: dist.all_gather_into_tensor(all_, one, group=g))
    if rank == 0:
        print(f"python int32 n/GPU={n} ranks={ranks}: across {t_across:.1f} us, local scan {t_local:.1f} us, all-gather {t_gather:.1f} us", flush=True)
ok_t = torch.tensor([int(ok)], device="cuda"); dist.all_reduce(ok_t, op=dist.ReduceOp.MIN)
if rank == 0:
    print("torch.distributed checks:", "ok" if ok_t.item() else "FAILED")
dist.destroy_process_group()
