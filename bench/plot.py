#!/usr/bin/env python3
"""plot.py: draws bench.c's CSV in the style of the paper's key figure: throughput
(billions of items per second) against input size on a log axis, one curve per variant,
one panel per element type. bench_pairs.c's CSV (scans into a wider type, told apart by its
in_type column) becomes the fraction of the floor against input size, dlscan's and CUB's
curves, one panel per pair; bench_segmented.c's (told apart by its mode column) the same, one
panel per mode (by key, over offsets), one color per run length; bench_compact.c's (told apart by
its shape column) the same for int32 items (reduce_by_key: int32 keys and values): a first
panel with every call at the shape "half" (50% kept, runs of mean 2), then one panel per call,
one color per shape. bench_across.c's (told apart by its gpus column): the strong scaling's speedup
against one GPU beside the 2p/3 bound, the weak scaling's time beside the 1.5-pass bound, and the
small slices' latency against items per GPU, beside NCCL's all-gather of one value.
bench_axis.c's (told apart by its layout column): the fraction of the floor of every variant, rows
[B, L] against L and columns [N, M] against M, one row of panels per type.

    python3 bench/plot.py results.csv plot.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


# One fixed color per variant, so that the same curve looks the same in every panel.
STYLES = {
    "memcpy": dict(color="black", linestyle="--"),
    "dlscan": dict(color="tab:red", linewidth=2.5),
    "dlscan-det": dict(color="tab:red", linestyle=":", linewidth=1.5),
    "dlscan-blocks": dict(color="tab:pink"),
    "dlscan-persistent": dict(color="tab:pink", linestyle=":"),
    "cub": dict(color="tab:blue", linewidth=2),
    "hillis-steele": dict(color="tab:olive"),
    "blelloch": dict(color="tab:green"),
    "reduce-then-scan": dict(color="tab:purple"),
    "chained-scan": dict(color="tab:brown"),
    "lookback-serial": dict(color="tab:orange"),
    "lookback-split": dict(color="tab:cyan"),
    "sequential": dict(color="tab:gray"),
}


def read(path):
    header, rows = [], []
    with open(path) as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                header.append(line[1:].strip())
            else:
                lines.append(line)
        rows = list(csv.DictReader(lines))
    return header, rows


def plot_pairs(rows):
    """bench_pairs.c: floor time over each variant's time, per pair, against n."""
    pairs = list(dict.fromkeys((r["in_type"], r["out_type"]) for r in rows))
    columns = min(3, len(pairs))
    grid_rows = (len(pairs) + columns - 1) // columns
    fig, axes = plt.subplots(grid_rows, columns, figsize=(5.5 * columns, 4.5 * grid_rows), squeeze=False)
    for ax in axes.flat[len(pairs):]:
        ax.set_visible(False)
    top = max([1.15] + [1.05 * float(r["fraction_of_floor"]) for r in rows if r["variant"] in ("dlscan", "cub")])
    for ax, (in_type, out_type) in zip(axes.flat, pairs):
        for variant in ("dlscan", "cub"):
            points = sorted((int(r["n"]), float(r["fraction_of_floor"])) for r in rows
                            if (r["in_type"], r["out_type"]) == (in_type, out_type) and r["variant"] == variant)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=variant,
                    **STYLES.get(variant, {}))
        ax.axhline(1.0, label="floor (a copy of the same bytes)", **STYLES["memcpy"])
        ax.axhline(0.95, color="gray", linestyle=":", linewidth=1, label="0.95 of the floor")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, top)
        ax.set_xlabel("input size (items)")
        ax.set_ylabel("fraction of the floor (floor time / time)")
        ax.set_title(f"{in_type} -> {out_type}, inclusive sum")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    return fig, "Scans into a wider type against a copy of the same bytes"


def plot_segmented(rows):
    """bench_segmented.c: floor time over each variant's time, per mode, one color per run
    length, dlscan solid and CUB dashed, against n."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    lengths = list(dict.fromkeys(r["length"] for r in rows))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    titles = {"keys": "by key", "offsets": "over offsets (CUB: by key, keys made from the offsets)"}
    fig, axes = plt.subplots(1, len(modes), figsize=(7 * len(modes), 5.5), squeeze=False)
    top = max([1.15] + [1.05 * float(r["fraction_of_floor"]) for r in rows if r["variant"] in ("dlscan", "cub")])
    def describe(length):  # "r32": lengths uniform in 1 .. 63
        return f"{length} (1..{2 * int(length[1:]) - 1})" if length.startswith("r") else length

    for ax, mode in zip(axes[0], modes):
        for k, length in enumerate(lengths):
            for variant, style in (("dlscan", dict(linewidth=2)), ("cub", dict(linestyle="--", linewidth=1.2))):
                points = sorted((int(r["n"]), float(r["fraction_of_floor"])) for r in rows
                                if (r["mode"], r["length"], r["variant"]) == (mode, length, variant))
                ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", color=colors[k % len(colors)],
                        label=f"{variant}, run length {describe(length)}", **style)
        ax.axhline(1.0, label="floor (a copy of the same bytes)", **STYLES["memcpy"])
        ax.axhline(0.95, color="gray", linestyle=":", linewidth=1, label="0.95 of the floor")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, top)
        ax.set_xlabel("input size (items)")
        ax.set_ylabel("fraction of the floor (floor time / time)")
        ax.set_title(titles.get(mode, mode))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right", ncol=2)
    r = rows[0]
    return fig, f"Segmented inclusive {r['op']}s ({r['key_type']} keys, {r['type']} values) against a copy"


# bench_compact.c's shapes, in its order, and the two that make the shape "half".
COMPACT_SHAPES = {"kept1": "1% kept", "kept50": "50% kept", "kept99": "99% kept",
                  "run1": "runs of 1", "run2": "runs of mean 2", "run8": "runs of mean 8",
                  "run64": "runs of mean 64", "run1024": "runs of mean 1024"}
COMPACT_HALF = ("kept50", "run2")


def plot_compact(rows):
    """bench_compact.c: floor time over dlscan's (solid) and CUB's (dashed) against n, int32
    items: every call at the shape "half", then one panel per call, one color per shape."""
    rows = [r for r in rows if r["key_type"] == "int32" and r["value_type"] in ("none", "int32")
            and r["check"] == "ok" and r["implementation"] in ("dlscan", "cub")]
    calls = list(dict.fromkeys(r["call"] for r in rows))
    # A panel is a title and its curves; a curve, a label and its rows.
    panels = [("every call, 50% kept / runs of mean 2",
               [(call, [r for r in rows if r["call"] == call and r["shape"] in COMPACT_HALF])
                for call in calls])]
    for call in calls:
        of_call = [r for r in rows if r["call"] == call]
        curves = [(label, [r for r in of_call if r["shape"] == shape])
                  for shape, label in COMPACT_SHAPES.items()]
        panels.append((call, [c for c in curves if c[1]]))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    columns = 3
    grid_rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(grid_rows, columns, figsize=(6 * columns, 4.8 * grid_rows),
                             squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    top = max([1.15] + [1.05 * float(r["fraction_of_floor"]) for r in rows])
    for ax, (title, curves) in zip(axes.flat, panels):
        for k, (label, selected) in enumerate(curves):
            for variant, style in (("dlscan", dict(linewidth=2)),
                                   ("cub", dict(linestyle="--", linewidth=1.2))):
                points = sorted((int(r["n"]), float(r["fraction_of_floor"])) for r in selected
                                if r["implementation"] == variant)
                ax.plot([p[0] for p in points], [p[1] for p in points], marker=".",
                        color=colors[k % len(colors)], label=f"{variant}, {label}", **style)
        ax.axhline(1.0, label="floor (a copy of the bytes read and written)", **STYLES["memcpy"])
        ax.axhline(0.9, color="gray", linestyle=":", linewidth=1, label="0.9 of the floor")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, top)
        ax.set_xlabel("input size (items)")
        ax.set_ylabel("fraction of the floor (floor time / time)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
    return fig, "Stream compaction against a copy of the bytes it moves (int32 items)"


def plot_across(rows):
    """bench_across.c: scans across p GPUs over NCCL (and through the peer exchange), against one
    GPU and the 1.5-pass bound."""
    types = list(dict.fromkeys(r["type"] for r in rows))
    fig, axes = plt.subplots(len(types), 3, figsize=(15, 4.2 * len(types)), squeeze=False)
    for line, t in zip(axes, types):
        mine = [r for r in rows if r["type"] == t]
        strong = [r for r in mine if r["row"] == "strong"]
        ps = [int(r["gpus"]) for r in strong]
        one = float(strong[0]["one_gpu_us"]) if strong else 1.0
        line[0].plot(ps, [one / float(r["across_us"]) for r in strong], "o-", color="tab:red", label="dlscan across p")
        line[0].plot(ps, [max(1.0, 2 * p / 3) for p in ps], "--", color="black", label="bound 2p/3")
        line[0].set_title(f"{t}: strong scaling, {int(strong[0]['items_per_gpu']) if strong else 0} items")
        line[0].set_xlabel("GPUs")
        line[0].set_ylabel("speedup over one GPU")
        weak = [r for r in mine if r["row"] == "weak"]
        line[1].plot([int(r["gpus"]) for r in weak], [float(r["across_us"]) for r in weak], "o-", color="tab:red",
                     label="dlscan across p")
        line[1].plot([int(r["gpus"]) for r in weak], [float(r["bound_us"]) for r in weak], "--", color="black",
                     label="1.5-pass bound")
        line[1].set_title(f"{t}: weak scaling, {weak[0]['items_per_gpu'] if weak else 0} items a GPU")
        line[1].set_xlabel("GPUs")
        line[1].set_ylabel("us per call")
        small = [r for r in mine if r["row"] == "small"]
        for p in sorted({int(r["gpus"]) for r in small}):
            these = [r for r in small if int(r["gpus"]) == p]
            n = [int(r["items_per_gpu"]) for r in these]
            line[2].plot(n, [float(r["across_us"]) for r in these], "o-", label=f"dlscan across {p}")
            if "peers_us" in these[0]:  # the peer exchange's columns (since 2026-12-07)
                line[2].plot(n, [float(r["peers_us"]) for r in these], "s-", label=f"through peers, {p}")
            if p > 1:
                line[2].plot(n, [float(r["all_gather_us"]) for r in these], ":", label=f"all-gather, {p}")
                if "peer_gather_us" in these[0]:
                    line[2].plot(n, [float(r["peer_gather_us"]) for r in these], "-.", label=f"peer all-gather, {p}")
        line[2].set_xscale("log", base=2)
        line[2].set_title(f"{t}: small slices")
        line[2].set_xlabel("items a GPU")
        line[2].set_ylabel("us per call")
        for ax in line:
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    return fig, "Scans across GPUs over NCCL"


def plot_axis(rows):
    """bench_axis.c: floor time over each variant's time, rows against their length L and
    columns against their width M (2^log items each), one row of panels per type."""
    types = list(dict.fromkeys(r["type"] for r in rows))
    fig, axes = plt.subplots(len(types), 2, figsize=(13, 4.8 * len(types)), squeeze=False)
    styles = {"dlscan": STYLES["dlscan"], "dlscan-offsets": dict(color="tab:orange"),
              "cub": STYLES["cub"], "cub-by-key": dict(color="tab:cyan", linestyle="-.")}
    for line, type_name in zip(axes, types):
        for ax, layout, x_name, x_label in ((line[0], "rows", "axis_length", "row length L ([B, L], B x L items)"),
                                            (line[1], "columns", "axis_stride", "width M ([N, M], N x M items)")):
            for variant, style in styles.items():
                points = sorted((int(r[x_name]), float(r["fraction_of_floor"])) for r in rows
                                if (r["type"], r["layout"], r["variant"]) == (type_name, layout, variant))
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=variant, **style)
            ax.axhline(1.0, label="floor (memcpy of the items)", **STYLES["memcpy"])
            ax.axhline(0.9, color="gray", linestyle=":", linewidth=1, label="0.9 of the floor")
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, 1.1)
            ax.set_xlabel(x_label)
            ax.set_ylabel("fraction of the floor (floor time / time)")
            ax.set_title(f"{type_name} {layout}, inclusive {rows[0]['op']}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
    return fig, "Scans along an axis against a copy"


def plot_types(rows):
    """bench.c and the CPU sweep: items per second, per type, against n."""
    types = list(dict.fromkeys(r["type"] for r in rows))
    fig, axes = plt.subplots(1, len(types), figsize=(6 * len(types), 5), squeeze=False)
    for ax, type_name in zip(axes[0], types):
        curves = defaultdict(list)
        for r in rows:
            if r["type"] == type_name:
                curves[r["variant"]].append((int(r["n"]), float(r["items_per_second"]) / 1e9))
        for variant, points in curves.items():
            points.sort()
            style = STYLES.get(variant, {})
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=variant, **style)
        kind = rows[0]["kind"] + " " + rows[0]["op"]
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input size (items)")
        ax.set_ylabel("throughput (billions of items / s)")
        ax.set_title(f"{type_name} {kind}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return fig, "Device-wide prefix scan throughput"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RESULTS.csv PLOT.png")
    header, rows = read(sys.argv[1])
    if rows and "gpus" in rows[0]:
        fig, title = plot_across(rows)
    elif rows and "layout" in rows[0]:
        fig, title = plot_axis(rows)
    elif rows and "shape" in rows[0]:
        fig, title = plot_compact(rows)
    elif rows and "mode" in rows[0]:
        fig, title = plot_segmented(rows)
    elif rows and "in_type" in rows[0]:
        fig, title = plot_pairs(rows)
    else:
        fig, title = plot_types(rows)
    # bench.c writes "gpu:" and "driver:" lines; the CPU sweep (cpu_sweep.c) "cpu:" and "dlscan:".
    machine = next((h for h in header if h.startswith(("gpu:", "cpu:"))), "gpu: " + (header[0] if header else "unknown"))
    versions = next((h for h in header if h.startswith(("driver:", "dlscan:"))), "")
    fig.suptitle(f"{title}, {machine[4:].strip()} ({versions})", fontsize=11)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
