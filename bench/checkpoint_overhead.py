"""Whole-run checkpoint overhead: the same count with and without a checkpoint, alternately.

    python bench/checkpoint_overhead.py [N] [--backend cpu|gpu] [--repeat 3] [--workers 1]

One process by default (--workers 1), so that the timings do not depend on the machine's cores.
"""
import argparse
import os
import statistics
import tempfile
import time

import gpuqueens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="?", default=17)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1: this one)")
    args = parser.parse_args()
    plain, ckpt = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        a = gpuqueens.count(args.n, backend=args.backend, progress=False, workers=args.workers)
        plain.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "run.sqlite")
            start = time.perf_counter()
            b = gpuqueens.count(args.n, backend=args.backend, progress=False, checkpoint=path,
                                workers=args.workers)
            ckpt.append(time.perf_counter() - start)
        assert a == b, (a, b)
    m1, m2 = statistics.median(plain), statistics.median(ckpt)
    print("plain", [round(x, 2) for x in plain], "checkpoint", [round(x, 2) for x in ckpt])
    print(f"n={args.n} {args.backend}: median plain {m1:.2f} s, with checkpoint {m2:.2f} s, "
          f"overhead {100 * (m2 - m1) / m1:+.2f}%")


if __name__ == "__main__":
    main()
