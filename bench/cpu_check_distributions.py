"""Check on the CPU the matchstick distributions that a GPU run wrote, at random points.

    python bench/gpu_matchsticks.py --json gpu_matchsticks.json      # on the GPU machine
    python bench/cpu_check_distributions.py gpu_matchsticks.json     # on any machine

For each grid of the file, P(x) = Σ_R counts[R]·x^R is evaluated modulo 8 primes below
2^28 (the GPU's evaluation primes are the largest below 2^29, so these are others) at
random points x, and compared with the same values computed on the CPU by the NumPy twin of
the kernel (:func:`gpuqueens.problems.matchsticks.evaluation.sweep_values`: the same
method, another implementation on other hardware). A distribution with any wrong count
gives a different P(x) at a random x with probability at least 1 - E/p for each prime (P
has degree E), so 8 agreeing lanes leave a chance below (E/p)^8 of a wrong distribution
passing. Rows written without their counts (files from before the counts were kept) are
checked at x = 1 against their total. CPU time: about 80 s and 1.5 GB for 20×20, seconds
up to 16×16. Exit status 1 if a grid disagrees.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpuqueens.problems.matchsticks.evaluation import LANES, lane_words, sweep_values  # noqa: E402
from gpuqueens.problems.matchsticks.grid import orient  # noqa: E402
from gpuqueens.problems.matchsticks.modular import is_prime  # noqa: E402

#: The check's primes stay below this (and so apart from the GPU's evaluation primes).
CHECK_PRIME_LIMIT = 1 << 28


def check_primes(count: int = LANES) -> list[int]:
    """The ``count`` largest primes below :data:`CHECK_PRIME_LIMIT`.

    >>> check_primes(2)
    [268435399, 268435367]
    """
    primes, candidate = [], CHECK_PRIME_LIMIT - 1
    while len(primes) < count:
        if is_prime(candidate):
            primes.append(candidate)
        candidate -= 2
    return primes


def polynomial_values(counts: list[int], primes: list[int], xs: list[int]) -> list[int]:
    """Σ_R counts[R]·x^R mod p for each lane (p, x), by Horner's rule on Python integers.

    >>> polynomial_values([1, 4, 10, 8], [7, 11], [1, 2])
    [2, 3]
    """
    values = []
    for p, x in zip(primes, xs):
        value = 0
        for c in reversed(counts):
            value = (value * x + c) % p
        values.append(value)
    return values


def check_row(row: dict, rng: random.Random) -> tuple[bool, str]:
    """(agrees, what was compared) for one row of a ``gpu_matchsticks.py --json`` file."""
    m, n = (int(side) for side in row["grid"].split("x"))
    h, w = orient(m, n)
    primes = check_primes()
    if "counts" in row:
        counts = [int(c) for c in row["counts"]]
        xs = [rng.randrange(2, p) for p in primes]
        what = "P(x) at 8 random points"
    else:
        counts = [int(row["total"])]   # P(1) is the total
        xs = [1] * len(primes)
        what = "the total, P(1)"
    want = polynomial_values(counts, primes, xs)
    got = [int(v) for v in sweep_values(h, w, lane_words(primes, xs))]
    return got == want, what


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the JSON file of bench/gpu_matchsticks.py --json")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random points (default: fresh)")
    args = parser.parse_args(argv)
    rows = json.loads(args.results.read_text())
    rng = random.Random(args.seed)
    failed = 0
    for row in rows:
        start = time.perf_counter()
        agrees, what = check_row(row, rng)
        failed += not agrees
        print(f"{row['grid']}: {what}: {'equal to the CPU' if agrees else 'DIFFERENT from the CPU'} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
