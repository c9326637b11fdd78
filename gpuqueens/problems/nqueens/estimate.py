"""How long an N-Queens count takes, estimated before it starts, from measured rates.

The time of a count grows with its number of solutions Q(n), and the time per solution
grows slowly with n (each solution sits in a larger search tree). So, per backend,

    seconds(n) = s · g^(n − n₀) · Q(n),

with ``s`` and ``g`` fitted (least squares on log seconds per solution) to counts measured on
real machines, and ``g`` held at 1 or more: a time per solution that seems to fall only
shows fixed costs (start-up, compiling) that weigh less as n grows. Q(n) is OEIS A000170
up to n = 27, the largest n counted; beyond it each step multiplies Q by n·e^(1−α) with
α = 1.944, from Q(n) = ((1 + o(1)) n e^(−α))^n (Simkin, 2021), which gives the ratio
Q(27)/Q(26) = 10.5 within 1%.

Calibration (the measured seconds are in :data:`MEASURED_SECONDS`):

* ``"cpu"``: one core, the NumPy path, ``gpuqueens.count(n, backend="cpu")`` without a
  checkpoint: for each n the least CPU time (``time.process_time``) of the runs of
  ``python bench/nqueens_estimate_calibration.py 14 15 16 17 --repeat 3``, three times on
  2026-11-23 on a 2-core AMD EPYC virtual machine (Linux, Python 3.11.7, NumPy 2.4.6).
  Other jobs kept that machine busy (load average 3 to 6) and slowed even the CPU time:
  the same path took 27.3 s for n = 17 there on a quieter day (docs/scaling.md), 1.6×
  less than here, so on an idle core of that kind the estimate errs long.
* ``"gpu"``: one NVIDIA H200 (CuPy 14.2, CUDA 13.0), warm (kernel compiled),
  ``gpuqueens.nqueens(n, backend="gpu")``, measured 2026-11-28 (docs/performance.md): n =
  18 0.035 s, 19 0.140 s, 20 0.965 s, 21 8.232 s, 22 72.39 s. n = 18 is left out of the
  fit (its time is mostly set-up). An H100 ran another GPU counter (ygch/n_queens) within
  1–8% of the H200's times; an older GPU is slower.

The estimate serves :func:`warn_if_long`: a :class:`gpuqueens.LongRunWarning` for a count
expected to take more than about an hour. It is a rough figure (a factor of two either
way), not a promise.

>>> round(estimated_seconds(21, "gpu"))  # measured: 8.232 s
8
>>> from gpuqueens.estimates import format_duration
>>> format_duration(estimated_seconds(24, "gpu"))
'1.7 hours'
"""

from __future__ import annotations

import math

from ...estimates import warn_if_long

__all__ = ["MEASURED_SECONDS", "solution_count", "estimated_seconds", "warn_if_long_count"]

#: Seconds of one count, per backend and n (see the module's calibration notes).
MEASURED_SECONDS: dict[str, dict[int, float]] = {
    "cpu": {14: 0.177, 15: 0.845, 16: 4.744, 17: 42.595},
    "gpu": {19: 0.140, 20: 0.965, 21: 8.232, 22: 72.39},
}

# OEIS A000170, n = 1..27: the number of solutions, the size of the work.
_A000170 = (1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
            14772512, 95815104, 666090624, 4968057848, 39029188884, 314666222712,
            2691008701644, 24233937684440, 227514171973736, 2207893435808352,
            22317699616364044, 234907967154122528)
_ALPHA = 1.944  # Q(n) = ((1 + o(1)) n e^-alpha)^n


def solution_count(n: int) -> float:
    """Q(n): known for n <= 27, extrapolated beyond.

    >>> solution_count(8), f"{solution_count(28):.2e}"
    (92, '2.56e+18')
    """
    if n <= len(_A000170):
        return _A000170[n - 1]
    count = float(_A000170[-1])
    for k in range(len(_A000170) + 1, n + 1):
        count *= k * math.exp(1 - _ALPHA)
    return count


def _fit(measured: dict[int, float]) -> tuple[int, float, float]:
    """``(n0, s, g)`` of the model fitted to ``{n: seconds}``."""
    xs = sorted(measured)
    n0 = xs[-1]
    ys = [math.log(measured[n] / solution_count(n)) for n in xs]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else 0.0
    if slope < 0:
        slope = 0.0  # a falling time per solution is fixed cost fading: hold it level
    return n0, math.exp(mean_y + slope * (n0 - mean_x)), math.exp(slope)


_MODELS = {backend: _fit(measured) for backend, measured in MEASURED_SECONDS.items()}


def estimated_seconds(n: int, backend: str, workers: int = 1) -> float:
    """Expected seconds to count n on ``backend`` (``"cpu"`` or ``"gpu"``) with ``workers``
    workers sharing the units evenly (each one CPU core, or one GPU).

    >>> estimated_seconds(16, "cpu") < 3600 < estimated_seconds(21, "cpu")
    True
    """
    n0, seconds_per_solution, growth = _MODELS[backend]
    return seconds_per_solution * growth ** (n - n0) * solution_count(n) / max(1, workers)


def warn_if_long_count(n: int, backend: str, workers: int = 1, *, stacklevel: int = 2) -> float:
    """A :class:`gpuqueens.LongRunWarning` when counting n is expected to take over an hour;
    returns the estimate (seconds), which the run then watches its pace against.

    ``stacklevel`` counts from the caller of this function, as for :func:`warnings.warn`.
    """
    where = "one CPU core" if backend == "cpu" else "one GPU (at a rate measured on an H200)"
    if workers > 1:
        where = f"{workers} workers, each counted as {where},"
    seconds = estimated_seconds(n, backend, workers)
    warn_if_long(f"counting n={n} on {where}", seconds, stacklevel=stacklevel + 1)
    return seconds
