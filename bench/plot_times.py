"""Plot seconds against n for gpuqueens, ygch/n_queens and the seed program.

    python bench/plot_times.py out/device_run/side_by_side.json [-o docs/figures/nqueens-gpu-times.svg]

Reads the rows that bench/device_run.sh's table step writes (n, gpuqueens_s, seed_s,
ygch_s: warm seconds measured in one run on one GPU) and draws one line per program on a
log scale. Needs matplotlib (``pip install ".[bench]"``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

PROGRAMS = (("gpuqueens_s", "gpuqueens"), ("ygch_s", "ygch/n_queens"), ("seed_s", "seed program"))


def series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    """The (n, seconds) points of one program, where it was measured."""
    points = [(r["n"], r[key]) for r in rows if r.get(key)]
    return [n for n, _ in points], [s for _, s in points]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("nqueens-gpu-times.svg"))
    parser.add_argument("--title", default="N-Queens, all solutions: warm seconds on one GPU")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = json.loads(args.results.read_text())
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for key, label in PROGRAMS:
        ns, seconds = series(rows, key)
        if ns:
            ax.plot(ns, seconds, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("seconds")
    ax.set_title(args.title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
