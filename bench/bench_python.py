#!/usr/bin/env python3
"""bench_python.py: dlscan from Python against torch.cumsum (also in PyTorch's deterministic
mode), cupy.cumsum and a copy of the same bytes, on PyTorch tensors of one CUDA device, in one
process; and what a call from Python costs over the same call from C.

    python3 bench/bench_python.py [--quick] [--min-log 10] [--max-log 28] [--repeats 5]
                                  [--c-bench build/bench/bench] [--csv FILE] [--markdown FILE]
                                  [--plot FILE]

Variants, for int32, float32, int64 and float64 sums of a type into itself:
    copy         y.copy_(x): the same bytes read and written (the floor: 2 * n * item size)
    dlscan       dlscan.cumsum(x, out=y)
    dlscan-new   dlscan.cumsum(x, dtype=x.dtype): the output made by torch.empty each call
    dlscan-det   dlscan.cumsum(x, out=y, deterministic=True) (floats)
    torch        torch.cumsum(x, 0, out=y)
    torch-det    the same under torch.use_deterministic_algorithms(True) (floats)
    cupy         cupy.cumsum(xc, out=yc) on CuPy views of the same memory (where CuPy is)

Method, as bench/bench.c's: every variant is first checked against a float64 (or int64)
torch.cumsum; then per size, 3 warm-up calls, then rounds of back-to-back calls (about 4 ms of
them) between two CUDA events on the current stream, the variants alternating round by round;
the median per-call time of --repeats rounds. host_us is the host's time to enqueue one call
in the same loop (time.perf_counter): where it is as long as the per-call time, the calls are
bound by the host. --c-bench runs bench/bench (the C program) on dlscan's C calls of each type
up to 2^18 just before that type's Python calls, and sets their host time beside Python's: the
cost of a call from Python over C (the host's speed drifts over minutes, so the two run close
together). Small sizes take 9 rounds, not --repeats.

    python3 bench/bench_python.py --axis [--log 26] [--types float32,int32] [--csv FILE]
                                  [--markdown FILE]

--axis: scans along an axis of 2-D tensors of 2^log items, as bench/bench_axis.c's shapes: rows
[B, L] (dim -1) and columns [N, M] (dim 0); variants copy, dlscan.cumsum(x, axis=d, out=y),
torch.cumsum(x, d, out=y) and cupy.cumsum(xc, axis=d, out=yc), each checked first. A variant
whose first call takes more than 50 ms (torch down short columns takes seconds) is timed by that
one call.
"""
import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import time

torch = dlscan = cupy = None  # imported by main(): --replot needs none of them

TYPE_NAMES = ["int32", "float32", "int64", "float64"]


def import_libraries():
    global torch, dlscan, cupy
    import torch
    import dlscan
    try:
        import cupy
    except ImportError:
        cupy = None


def variants(dtype):
    """(name, description, function of (x, y, xc, yc) that enqueues one call)."""
    floats = dtype.is_floating_point
    v = [("copy", "y.copy_(x)", lambda x, y, xc, yc: y.copy_(x)),
         ("dlscan", "dlscan.cumsum(x, out=y)", lambda x, y, xc, yc: dlscan.cumsum(x, out=y)),
         ("dlscan-new", "dlscan.cumsum(x, dtype=x.dtype)",
          lambda x, y, xc, yc: dlscan.cumsum(x, dtype=x.dtype))]
    if floats:
        v.append(("dlscan-det", "dlscan.cumsum(x, out=y, deterministic=True)",
                  lambda x, y, xc, yc: dlscan.cumsum(x, out=y, deterministic=True)))
    v.append(("torch", "torch.cumsum(x, 0, out=y)",
              lambda x, y, xc, yc: torch.cumsum(x, 0, out=y)))
    if floats:
        v.append(("torch-det", "torch.cumsum(x, 0, out=y), use_deterministic_algorithms(True)",
                  torch_deterministic))
    if cupy is not None:
        v.append(("cupy", "cupy.cumsum(xc, out=yc)",
                  lambda x, y, xc, yc: cupy.cumsum(xc, out=yc)))
    return v


def torch_deterministic(x, y, xc, yc):
    torch.use_deterministic_algorithms(True)
    try:
        torch.cumsum(x, 0, out=y)
    finally:
        torch.use_deterministic_algorithms(False)


def check(name, fn, x, y, xc, yc):
    """The variant's output against an exact (int64 / float64) sum; float sums within a
    relative 1e-5 of the running sum of magnitudes."""
    y.fill_(-7)
    result = fn(x, y, xc, yc)
    got = result if name == "dlscan-new" else y
    if name == "copy":
        ok = torch.equal(got, x)
    elif x.dtype.is_floating_point:
        expected = torch.cumsum(x.double(), 0)
        scale = torch.cumsum(x.double().abs(), 0)
        ok = bool(torch.all((got.double() - expected).abs() <= 1e-5 * scale + 1e-6))
    else:
        ok = torch.equal(got, torch.cumsum(x.long(), 0).to(x.dtype))
    if not ok:
        sys.exit(f"bench_python: {name} gave a wrong result for {x.dtype}, n = {len(x)}")


def measure(fn, args, calls, start, stop):
    """One round of `calls` back-to-back calls: (GPU us per call, host us per call)."""
    start.record()
    host_start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    host = time.perf_counter() - host_start
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / calls, host * 1e6 / calls


def provenance():
    gpu = torch.cuda.get_device_name()
    commit = os.environ.get("DLSCAN_GIT_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "unknown"
    return [f"gpu: {gpu}", f"dlscan {dlscan.__version__} (commit {commit}), "
            f"PyTorch {torch.__version__}, CuPy {cupy.__version__ if cupy else 'absent'}, "
            f"Python {platform.python_version()}, CUDA {torch.version.cuda}",
            f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]


def run_c_bench(program, type_name, min_log, max_log):
    """bench/bench's dlscan calls of one type: (type, n) -> (per_call_us, host_us)."""
    path = f"/tmp/bench_python_c_{os.getpid()}.csv"
    subprocess.run([program, "--variants", "dlscan", "--types", type_name, "--min-log",
                    str(min_log), "--max-log", str(max_log), "--repeats", "9", "--csv", path],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        return read_c_csv(path)
    finally:
        os.remove(path)


def read_csv(path):
    """A CSV of bench/bench or of this program: its '# ' header lines and its rows."""
    with open(path) as f:
        lines = f.readlines()
    header = [line[2:].strip() for line in lines if line.startswith("#")]
    return header, list(csv.DictReader(line for line in lines if not line.startswith("#")))


def read_c_csv(path):
    """bench/bench's CSV: (type, n) -> (per_call_us, host_us) of its dlscan variant."""
    return {(r["type"], int(r["n"])): (float(r["per_call_us"]), float(r["host_us"]))
            for r in read_csv(path)[1]
            if r["variant"] == "dlscan" and r["op"] == "sum" and r["kind"] == "inclusive"}


AXIS_ROWS = [16, 64, 256, 1024, 4096, 32000, 131072, 1 << 20, None]  # None: one row
AXIS_COLUMNS = [2, 16, 256, 4096, 65536]


def axis_check(name, got, x, dim):
    """A variant's scan along dim against torch.cumsum in int64 or float64."""
    if name == "copy":
        ok = torch.equal(got, x)
    elif x.dtype.is_floating_point:
        expected = torch.cumsum(x.double(), dim)
        scale = torch.cumsum(x.double().abs(), dim)
        ok = bool(torch.all((got.double() - expected).abs() <= 1e-5 * scale + 1e-6))
    else:
        ok = torch.equal(got, torch.cumsum(x.long(), dim).to(x.dtype))
    if not ok:
        sys.exit(f"bench_python: {name} gave a wrong result along dim {dim} of {tuple(x.shape)}")


def axis_main(o):
    """--axis: rows and columns of 2^log items against a copy, torch.cumsum and cupy.cumsum."""
    total = 1 << o.log
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows = []
    for type_name in o.types.split(","):
        dtype = getattr(torch, type_name)
        shapes = [("rows", (total // L if L else 1, L or total), -1) for L in AXIS_ROWS]
        shapes += [("columns", (total // M, M), 0) for M in AXIS_COLUMNS]
        for layout, shape, dim in shapes:
            x = (torch.randint(-1000, 1000, shape, device="cuda").to(dtype)
                 if not dtype.is_floating_point else torch.randn(shape, device="cuda", dtype=dtype))
            y = torch.empty_like(x)
            xc, yc = (cupy.from_dlpack(x), cupy.from_dlpack(y)) if cupy else (None, None)
            vs = [("copy", lambda: y.copy_(x)),
                  ("dlscan", lambda: dlscan.cumsum(x, axis=dim, out=y)),
                  ("torch", lambda: torch.cumsum(x, dim, out=y))]
            if cupy is not None:
                vs.append(("cupy", lambda: cupy.cumsum(xc, axis=dim, out=yc)))
            times = {}
            for name, fn in vs:
                y.fill_(-7)
                fn()
                axis_check(name, y, x, dim)
                first, _ = measure(fn, (), 1, start, stop)
                if first > 50e3:
                    times[name] = first
                    continue
                calls = max(3, min(4000, int(4000 / max(first, 0.1))))
                times[name] = statistics.median(measure(fn, (), calls, start, stop)[0]
                                                for _ in range(o.repeats))
            for name, _ in vs:
                rows.append(dict(type=type_name, layout=layout, shape=f"{shape[0]}x{shape[1]}",
                                 variant=name, n=x.numel(), per_call_us=times[name]))
            print(f"{type_name} {layout} {shape}: " + "  ".join(
                f"{name} {times[name]:.1f}" for name, _ in vs), flush=True)
    header = provenance()
    if o.csv:
        with open(o.csv, "w") as f:
            for line in header:
                f.write(f"# {line}\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    by = {(r["type"], r["layout"], r["shape"], r["variant"]): r["per_call_us"] for r in rows}
    out = ["# dlscan from Python along an axis, against torch.cumsum and cupy.cumsum", ""]
    out += [f"{line}  " for line in header] + [""]
    out += ["Microseconds per call (medians of back-to-back calls; one call where it takes more "
            "than 50 ms). The floor is `copy`: the same bytes read and written.", "",
            "| type | layout | shape | copy | dlscan | dlscan / copy | torch.cumsum | "
            "torch / dlscan | cupy.cumsum | cupy / dlscan |", "|---|---|---|---|---|---|---|---|---|---|"]
    for t, layout, shape in dict.fromkeys((r["type"], r["layout"], r["shape"]) for r in rows):
        copy, d = by[(t, layout, shape, "copy")], by[(t, layout, shape, "dlscan")]
        tc, cp = by[(t, layout, shape, "torch")], by.get((t, layout, shape, "cupy"))
        out.append(f"| {t} | {layout} | {shape} | {copy:.1f} | {d:.1f} | {copy / d:.3f} | "
                   f"{tc:.1f} | {tc / d:.2f} | {'-' if cp is None else f'{cp:.1f}'} | "
                   f"{'-' if cp is None else f'{cp / d:.2f}'} |")
    text = "\n".join(out) + "\n"
    print(text)
    if o.markdown:
        with open(o.markdown, "w") as f:
            f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="2^10 .. 2^28 in steps of 2^2")
    p.add_argument("--min-log", type=int, default=10)
    p.add_argument("--max-log", type=int, default=28)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--types", default=",".join(TYPE_NAMES))
    p.add_argument("--c-bench", help="bench/bench, the C program, for the cost over C")
    p.add_argument("--csv")
    p.add_argument("--markdown")
    p.add_argument("--plot")
    p.add_argument("--replot", metavar="CSV", help="only draw --plot from a CSV of this program")
    p.add_argument("--axis", action="store_true", help="rows and columns of 2-D tensors")
    p.add_argument("--log", type=int, default=26, help="--axis: 2^log items a shape")
    o = p.parse_args()
    if o.replot:
        header, rows = read_csv(o.replot)
        gpu = next((line for line in header if line.startswith("gpu:")), "gpu: ?")
        for r in rows:
            r["n"], r["items_per_second"] = int(r["n"]), float(r["items_per_second"])
        plot(rows, o.plot, gpu)
        return
    import_libraries()
    if o.axis:
        if o.types == ",".join(TYPE_NAMES):
            o.types = "float32,int32"
        axis_main(o)
        return
    step = 2 if o.quick else 1
    sizes = [1 << k for k in range(o.min_log, o.max_log + 1, step)]
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows, c = [], {}
    for type_name in o.types.split(","):
        dtype = getattr(torch, type_name)
        if o.c_bench and o.min_log <= 18:
            c.update(run_c_bench(o.c_bench, type_name, o.min_log, min(18, o.max_log)))
        vs = variants(dtype)
        x = (torch.randint(-1000, 1000, (sizes[-1],), device="cuda").to(dtype)
             if not dtype.is_floating_point else torch.randn(sizes[-1], device="cuda", dtype=dtype))
        y = torch.empty_like(x)
        for n in sizes:
            xs, ys = x[:n], y[:n]
            xc, yc = (cupy.from_dlpack(xs), cupy.from_dlpack(ys)) if cupy else (None, None)
            args = (xs, ys, xc, yc)
            calls = {}
            for name, _, fn in vs:
                check(name, fn, *args)
                for _ in range(3):
                    fn(*args)
                us, _ = measure(fn, args, 1, start, stop)
                calls[name] = max(3, min(4000, int(4000 / max(us, 0.1))))
            samples = {name: [] for name, _, _ in vs}
            for _ in range(9 if n <= 1 << 18 else o.repeats):
                for name, _, fn in vs:
                    samples[name].append(measure(fn, args, calls[name], start, stop))
            for name, _, _ in vs:
                per_call = statistics.median(s[0] for s in samples[name])
                host = statistics.median(s[1] for s in samples[name])
                rows.append(dict(type=type_name, variant=name, n=n,
                                 bytes_moved=2 * n * x.element_size(), per_call_us=per_call,
                                 items_per_second=n / per_call * 1e6, host_us=host))
            print(f"{type_name} 2^{n.bit_length() - 1}: " + "  ".join(
                f"{r['variant']} {r['per_call_us']:.2f}" for r in rows[-len(vs):]), flush=True)
    header = provenance()
    if o.csv:
        with open(o.csv, "w") as f:
            for line in header:
                f.write(f"# {line}\n")
            for name, description, _ in variants(torch.float32):
                f.write(f"# variant {name}: {description}\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    text = markdown(header, rows, c)
    print(text)
    if o.markdown:
        with open(o.markdown, "w") as f:
            f.write(text)
    if o.plot:
        plot(rows, o.plot, header[0])


def markdown(header, rows, c):
    by = {(r["type"], r["variant"], r["n"]): r for r in rows}
    types = list(dict.fromkeys(r["type"] for r in rows))
    sizes = sorted({r["n"] for r in rows})
    names = list(dict.fromkeys(r["variant"] for r in rows))
    out = ["# dlscan from Python against torch.cumsum and cupy.cumsum", ""]
    out += [f"{line}  " for line in header] + [""]
    big = sizes[-1]
    out += [f"## Large arrays: 2^{big.bit_length() - 1} items, microseconds per call "
            "(median of back-to-back calls)", "",
            "The floor is `copy`: the same bytes read and written.", "",
            "| type | copy | dlscan | dlscan, deterministic | torch.cumsum | torch.cumsum, "
            "deterministic mode | cupy.cumsum | dlscan / copy | torch / dlscan | "
            "torch deterministic / dlscan deterministic | cupy / dlscan |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]

    def us(t, v, n):
        r = by.get((t, v, n))
        return r["per_call_us"] if r else None

    def cell(value, digits=1):
        return "-" if value is None else f"{value:.{digits}f}"

    for t in types:
        copy, d, dd = us(t, "copy", big), us(t, "dlscan", big), us(t, "dlscan-det", big)
        tc, td, cp = us(t, "torch", big), us(t, "torch-det", big), us(t, "cupy", big)
        out.append(f"| {t} sum | {cell(copy)} | {cell(d)} | {cell(dd)} | {cell(tc)} | "
                   f"{cell(td)} | {cell(cp)} | {cell(copy / d, 3)} | {cell(tc / d, 2)} | "
                   f"{cell(td / dd if td and dd else None, 2)} | "
                   f"{cell(cp / d if cp else None, 2)} |")
    out += ["", "## Small arrays: microseconds per call, and the host's time to enqueue one", "",
            "`dlscan` passes out=; `dlscan-new` makes its output with torch.empty. `host` is "
            "the host's time per call in the same back-to-back loop; `C host` is bench/bench's "
            "for the same call from C (`dlscan_scan_inclusive`, measured just before this "
            "type's Python calls), and `Python - C` the difference, dlscan with out= against "
            "C. Medians of 9 rounds.", "",
            "| type | n | dlscan | dlscan-new | torch.cumsum | dlscan host | dlscan-new host | "
            "torch host | C per call | C host | Python - C (host) | torch / dlscan |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in types:
        for n in sizes:
            if n > 1 << 18:
                continue
            r, rn, rt = by[(t, "dlscan", n)], by[(t, "dlscan-new", n)], by[(t, "torch", n)]
            cc = c.get((t, n))
            out.append(
                f"| {t} | 2^{n.bit_length() - 1} | {r['per_call_us']:.2f} | "
                f"{rn['per_call_us']:.2f} | {rt['per_call_us']:.2f} | {r['host_us']:.2f} | "
                f"{rn['host_us']:.2f} | {rt['host_us']:.2f} | {cell(cc and cc[0], 2)} | "
                f"{cell(cc and cc[1], 2)} | {cell(cc and r['host_us'] - cc[1], 2)} | "
                f"{rt['per_call_us'] / r['per_call_us']:.2f} |")
    out += ["", "## Every size: billions of items per second", ""]
    for t in types:
        out += [f"### {t}", "", "| n | " + " | ".join(names) + " |",
                "|---|" + "---|" * len(names)]
        for n in sizes:
            cells = [cell(by[(t, v, n)]["items_per_second"] / 1e9, 2) if (t, v, n) in by
                     else "-" for v in names]
            out.append(f"| 2^{n.bit_length() - 1} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def plot(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    styles = {"copy": dict(color="black", linestyle="--"),
              "dlscan": dict(color="tab:red", linewidth=2.5),
              "dlscan-new": dict(color="tab:red", linestyle="-.", linewidth=1),
              "dlscan-det": dict(color="tab:red", linestyle=":", linewidth=1.5),
              "torch": dict(color="tab:orange", linewidth=2),
              "torch-det": dict(color="tab:orange", linestyle=":"),
              "cupy": dict(color="tab:green", linewidth=2)}
    types = list(dict.fromkeys(r["type"] for r in rows))
    fig, axes = plt.subplots(1, len(types), figsize=(4.5 * len(types), 4), sharey=True)
    for ax, t in zip(axes if len(types) > 1 else [axes], types):
        for v in dict.fromkeys(r["variant"] for r in rows if r["type"] == t):
            pts = [(r["n"], r["items_per_second"] / 1e9) for r in rows
                   if r["type"] == t and r["variant"] == v]
            ax.plot(*zip(*pts), label=v, **styles.get(v, {}))
        ax.set_xscale("log", base=2)
        ax.set_title(f"{t} sum")
        ax.set_xlabel("items")
        ax.grid(alpha=0.3)
    first = axes[0] if len(types) > 1 else axes
    first.set_ylabel("billions of items per second")
    labels = {}  # every variant of every panel, once
    for ax in (axes if len(types) > 1 else [axes]):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            labels.setdefault(label, handle)
    first.legend(labels.values(), labels.keys(), fontsize=8)
    fig.suptitle(f"dlscan from Python, {title.removeprefix('gpu: ')}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
