"""Random prefix sets for the tests that compare two searches prefix by prefix."""

import numpy as np

from gpuqueens.problems.nqueens.prefixes import Prefixes, enumerate_prefixes


def random_prefix_subset(seed: int, max_size: int, sizes=(6, 14)) -> tuple[int, int, Prefixes]:
    """``(n, mark, subset)``: n and mark drawn from ``seed``, then up to ``max_size`` prefixes."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(*sizes))
    mark = int(rng.integers(2, n))
    prefixes = enumerate_prefixes(n, mark)
    size = min(len(prefixes), int(rng.integers(1, max_size)))
    return n, mark, prefixes.take(np.sort(rng.choice(len(prefixes), size=size, replace=False)))
