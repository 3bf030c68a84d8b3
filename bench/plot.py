#!/usr/bin/env python3
"""plot.py: draws bench.c's CSV in the style of the paper's key figure: throughput
(billions of items per second) against input size on a log axis, one curve per variant,
one panel per element type.

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


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RESULTS.csv PLOT.png")
    header, rows = read(sys.argv[1])
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
    # bench.c writes "gpu:" and "driver:" lines; the CPU sweep (cpu_sweep.c) "cpu:" and "dlscan:".
    machine = next((h for h in header if h.startswith(("gpu:", "cpu:"))), "gpu: unknown")
    versions = next((h for h in header if h.startswith(("driver:", "dlscan:"))), "")
    fig.suptitle(f"Device-wide prefix scan throughput, {machine[4:].strip()} ({versions})", fontsize=11)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
