"""gpuqueens: exact solution counts for N-Queens and matchstick-grid puzzles, on GPU or CPU.

>>> import gpuqueens
>>> gpuqueens.count(8)
92
>>> gpuqueens.count(8, unique=True)
12
>>> gpuqueens.matchstick_counts(1, 1)
[1, 0, 0, 0, 1]

The GPU is used when CuPy is installed and a CUDA device works (counting matchstick
configurations by squares only when asked with ``backend="gpu"``, and puzzle tables from a
shorter side of 6); otherwise everything runs on the CPU with NumPy and gives the same
numbers.
"""

from ._checks import MAX_N
from ._version import __version__
from .backends import BackendUnavailableError, DeviceCheckError, GPUFallbackWarning
from .estimates import LongRunWarning
from .ledger import CheckpointError
from .problems.matchsticks import MatchstickTable, matchstick_counts, matchstick_table, matchsticks
from .problems.nqueens import NQueensResult, count, nqueens


__all__ = [
    "count",
    "nqueens",
    "NQueensResult",
    "matchsticks",
    "matchstick_counts",
    "matchstick_table",
    "MatchstickTable",
    "MAX_N",
    "BackendUnavailableError",
    "GPUFallbackWarning",
    "LongRunWarning",
    "CheckpointError",
    "DeviceCheckError",
    "__version__",
]
