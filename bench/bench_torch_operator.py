"""bench_torch_operator.py: PyTorch's ways to run a float32 linear recurrence h[t] = a[t] h[t-1] + b[t]
on the GPU, beside a copy of the same bytes and, where the dlscan package is installed, dlscan's
linear_recurrence, in one process (issue 44's comparison; bench_operator.c times dlscan from C).

  python3 bench/bench_torch_operator.py [--logs 20,22,24] [--repeats 5]

Variants, each timed with CUDA events around back-to-back calls (batches of about 4 ms, the median
of --repeats batches):
  copy          a copy of 12 bytes an item (what the recurrence reads and writes): the floor;
  assoc_scan    torch._higher_order_ops.associative_scan over (a, b) with the recurrence's combine,
                eager (where the installed PyTorch has it);
  chunk_loop    a Python loop over chunks of 2^16 items, each the closed form
                A = cumprod(a), h = A (h0 + cumsum(b / A)) from the chunk's carry (fragile: A
                underflows for long chunks, which is why it is chunked);
  dlscan        dlscan.linear_recurrence(a, b).
Prints one markdown row per size: us per call, and each over dlscan (how many times slower).
"""

import argparse
import statistics

import torch


def time_us(fn, repeats):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once = start.elapsed_time(stop) * 1e3
    calls = max(1, min(1000, int(4000 / max(once, 1.0))))
    samples = []
    for _ in range(repeats):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e3 / calls)
    return statistics.median(samples)


def combine(x, y):
    (a1, b1), (a2, b2) = x, y
    return a1 * a2, a2 * b1 + b2


def chunk_loop(a, b, chunk=1 << 16):
    h = torch.empty_like(b)
    carry = torch.zeros((), dtype=b.dtype, device=b.device)
    for start in range(0, a.numel(), chunk):
        ac, bc = a[start:start + chunk], b[start:start + chunk]
        big_a = torch.cumprod(ac, 0)
        h[start:start + chunk] = big_a * (carry + torch.cumsum(bc / big_a, 0))
        carry = h[start + ac.numel() - 1]
    return h


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", default="20,22,24")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    try:
        from torch._higher_order_ops import associative_scan
    except ImportError:
        associative_scan = None
    try:
        import dlscan
    except ImportError:
        dlscan = None
    print(f"# gpu: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"associative_scan: {'yes' if associative_scan else 'no'}, dlscan: {'yes' if dlscan else 'no'}")
    print("| n | copy us | assoc_scan us | chunk_loop us | dlscan us | assoc_scan / dlscan | chunk_loop / dlscan |")
    print("|---|---|---|---|---|---|---|")
    for log in [int(x) for x in args.logs.split(",")]:
        n = 1 << log
        a = torch.rand(n, device="cuda") * 0.5 + 0.5
        b = torch.rand(n, device="cuda") * 2 - 1
        src = torch.empty(3 * n // 2, device="cuda")  # 6 bytes an item: read and written, 12
        dst = torch.empty_like(src)
        copy = time_us(lambda: dst.copy_(src), args.repeats)
        assoc = time_us(lambda: associative_scan(combine, (a, b), 0), args.repeats) if associative_scan else float("nan")
        loop = time_us(lambda: chunk_loop(a, b), args.repeats)
        mine = time_us(lambda: dlscan.linear_recurrence(a, b), args.repeats) if dlscan else float("nan")
        print(f"| 2^{log} | {copy:.1f} | {assoc:.1f} | {loop:.1f} | {mine:.1f} | {assoc / mine:.1f} | {loop / mine:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
