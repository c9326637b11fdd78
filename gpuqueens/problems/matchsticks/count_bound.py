"""A proven upper bound on every count of problem 1, from one floating-point sweep.

The CRT (:mod:`.modular`) returns a count exactly when the primes' product exceeds it, so
the number of primes follows from an upper bound on the counts. C(E, R) is one; the counts
themselves have only about three quarters of its bits. This module gives a much tighter
bound, at the cost of one sweep of a single value per state (the work of one lane of
:mod:`.evaluation`, instead of an R axis or E + 1 lanes per prime).

**The bound.** The count polynomial P(x) = Σ_R X_R x^R has nonnegative coefficients, so
for every x > 0 and every R, ``X_R <= P(x) / x^R``; for x <= 1 and R <= top this is at
most ``P(x) / x^top``. So ``max_{R <= top} X_R <= min_x P(x) / x^top`` over any set of
x in (0, 1]. For the whole distribution x = 1 (P(1), all valid configurations) is the
best such x; for a short R range smaller x help (:data:`BOUND_POINTS`).

**Computing P(x) from above in float64.** The sweep is the transfer of :mod:`.transfer`
at a fixed x: one float64 per frontier state, a removed stick multiplies by x. Every
value is a sum of products of nonnegative numbers, so a computed value can only fall
short of the exact one through rounding, and each output of a point step is the exact
result of at most :data:`ROUNDINGS_PER_STEP` rounded operations (three additions, or two
additions or one followed by one product by x or by the rounded x²). Round to nearest
gives fl(a ∘ b) >= (1 - u)(a ∘ b), u = 2^-53, while the result is a normal number, and
the operations are monotone in nonnegative operands, so after t steps every computed
value is at least (1 - u)^(k·t) times the exact one (k = :data:`ROUNDINGS_PER_STEP`).
Underflow is kept away: every :data:`RESCALE_STEPS` steps the values are scaled by a
power of two (exact, tracked as an integer exponent per x) so that the largest is below
1, and then raised to at least :data:`FLOOR` (raising a value keeps it an upper
approximation); in the following steps a value shrinks at most by x² ≥ 2^-13 per step and
grows at most fourfold, so every nonzero value stays a normal number far from overflow.
Hence

    P(x) <= computed · 2^exponent / (1 - u)^K <= computed · 2^exponent · (1 + 2Ku),

K = k · steps (Bernoulli: (1 - u)^K >= 1 - Ku, and 1/(1 - t) <= 1 + 2t for t <= 1/2).
The division by x^top and the rounding up are done in exact rational arithmetic. On top
of the proof the bound keeps a margin: a factor 1 + 2^-20 and :data:`MARGIN_BITS` bits,
and it never exceeds C(E, R) (:func:`.modular.binomial_bound`), which stays the cap.

The sweep is written over an array module ``xp`` (NumPy or CuPy): the GPU path runs it on
the device.

>>> count_bound(2, 2)  # 43 valid configurations: 44 after rounding up, times 2^2
176
>>> count_bound(10, 10).bit_length(), modular.binomial_bound(220).bit_length()
(170, 216)
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import ModuleType

import numpy as np

from . import modular
from .grid import orient, stick_count

__all__ = ["BOUND_POINTS", "ROUNDINGS_PER_STEP", "RESCALE_STEPS", "FLOOR", "MARGIN_BITS",
           "scaled_values", "count_bound", "bound_points", "estimated_bound_bits"]

#: The x values tried for a short R range: 2^(-j/2), j = 0..13 (the bound is convex in
#: log x, so this spacing loses at most a fraction of a bit against the best x).
BOUND_POINTS = tuple(2.0 ** (-j / 2) for j in range(14))
#: Rounded operations behind one output of a point step (three at most; one spare).
ROUNDINGS_PER_STEP = 4
#: Steps between two rescalings: values grow at most 4^16 = 2^32 and shrink at most
#: (x_min²)^16 = 2^-208 in between.
RESCALE_STEPS = 16
#: Least value after a rescaling: 2^-700 · 2^-208 stays above the normal range's 2^-1022.
FLOOR = 2.0 ** -700
#: Bits of margin on top of the proven bound.
MARGIN_BITS = 2
_UNIT_ROUNDOFF = Fraction(1, 1 << 53)


def bound_points(sticks: int, top: int) -> tuple[float, ...]:
    """The x values to sweep for R <= top: x = 1 alone for the whole distribution (no x < 1
    beats P(1) there, since P(x)/x^E >= P(1)), else :data:`BOUND_POINTS`."""
    return (1.0,) if top >= sticks else BOUND_POINTS


def scaled_values(h: int, w: int, xs, xp: ModuleType = np) -> tuple[list[float], list[int]]:
    """``(values, exponents)`` with P(x) ≈ value · 2^exponent for each x of ``xs`` (an h×w
    grid, h <= w): the float64 sweep, each value below the exact P(x) / 2^exponent by a
    factor of at most (1 - u)^(ROUNDINGS_PER_STEP · steps) (module docstring)."""
    if min(xs) < 2.0 ** -6.5 or max(xs) > 1.0:
        raise ValueError("the rescaling schedule is proven for 2^-6.5 <= x <= 1")
    lanes = len(xs)
    x = xp.asarray(np.asarray(xs, dtype=np.float64))
    x2 = x * x
    v = xp.zeros((1 << (h + 2), lanes), dtype=xp.float64)
    v[0] = 1.0  # nothing decided: every frontier stick absent, weight x^0
    exponent = xp.zeros(lanes, dtype=xp.int64)
    steps = 0
    for j in range(w + 1):
        for i in range(h + 1):
            down, right = i < h, j < w
            view = v.reshape(1 << (h - i), 2, 1 << i, 2, lanes)
            o00, o01 = view[:, 0, :, 0], view[:, 0, :, 1]
            o10, o11 = view[:, 1, :, 0], view[:, 1, :, 1]
            s0 = o00 + o11           # (left, up) with l + u != 1: nothing may be kept
            s1 = o01 + o10 + o11     # l + u >= 1: one stick may be kept
            new = xp.zeros_like(view)
            if down and right:
                new[:, 0, :, 0] = s0 * x2
                new[:, 0, :, 1] = s1 * x
                new[:, 1, :, 0] = s1 * x
                new[:, 1, :, 1] = s1 + o00  # any (l, u) with both new sticks kept
            elif down or right:
                new[:, 0, :, 0] = s0 * x
                new[:, int(right), :, int(down)] = s1
            else:
                new[:, 0, :, 0] = s0
            v = new.reshape(v.shape)
            steps += 1
            if steps % RESCALE_STEPS == 0:
                _, e = xp.frexp(v.max(axis=0))  # largest = m·2^e, 1/2 <= m < 1
                v = xp.maximum(xp.ldexp(v, -e), FLOOR)
                exponent += e
    values, exponents = v[0], exponent
    if hasattr(values, "get"):
        values, exponents = values.get(), exponents.get()
    return [float(a) for a in values], [int(e) for e in exponents]


def count_bound(m: int, n: int, max_removed: int | None = None, *, xp: ModuleType = np) -> int:
    """An integer at least every count X_R, R <= max_removed (default E), of problem 1 on
    an m×n grid, proven in the module docstring; at most C(E, R) for the R asked.

    >>> count_bound(10, 10, 2) == modular.binomial_bound(220, 2)  # few R: C(E, R) is tighter
    True
    """
    h, w = orient(m, n)
    sticks = stick_count(h, w)
    top = sticks if max_removed is None else min(max_removed, sticks)
    cap = modular.binomial_bound(sticks, top)
    xs = bound_points(sticks, top)
    values, exponents = scaled_values(h, w, xs, xp)
    rounding = 1 + 2 * ROUNDINGS_PER_STEP * (h + 1) * (w + 1) * _UNIT_ROUNDOFF
    best = cap
    for x, value, exponent in zip(xs, values, exponents):
        if not math.isfinite(value):
            continue  # cannot happen (values stay below 2^32); then x gives no bound
        scaled = Fraction(value) * Fraction(2) ** exponent / Fraction(x) ** top
        bound = math.ceil(scaled * rounding * (1 + Fraction(1, 1 << 20))) << MARGIN_BITS
        best = min(best, bound)
    return best


#: log2 P(1) ≈ a·(h+1)(w+1) + b·(h+w+2) + c, least squares over the sweep's values for
#: 3 <= h <= w <= 40 (h <= 12) and the squares to 18×18: within 0.002 bits of every one of
#: them and of 19×19 and 20×20 (602.81, 667.76 bits); h = 2 within 0.09 bits; h = 1 drifts
#: by 0.01 bits per column (P(1) = 2^1.855 per column there).
_TOTAL_BITS_FIT = (1.65559373, -1.46670746, -0.7580376)


def estimated_bound_bits(h: int, w: int, top: int) -> float:
    """log2 of :func:`count_bound` for R <= top, in constant time, for the cost estimates
    (never for choosing primes): the fitted bits of P(1) plus the margin, capped by
    log2 max C(E, R). For top below the typical R the true bound is smaller still (x < 1
    helps), so this overestimates there.

    >>> round(estimated_bound_bits(10, 10, 220), 2), count_bound(10, 10).bit_length()
    (169.3, 170)
    """
    a, b, c = _TOTAL_BITS_FIT
    total = a * (h + 1) * (w + 1) + b * (h + w + 2) + c + MARGIN_BITS
    sticks = stick_count(h, w)
    k = min(top, sticks // 2)  # max C(E, R) over R <= top
    binomial = (math.lgamma(sticks + 1) - math.lgamma(k + 1) - math.lgamma(sticks - k + 1)) / math.log(2)
    return max(0.0, min(total, binomial))
