"""Matchstick grids: valid stick removals counted by removed sticks and surviving squares.

>>> matchstick_counts(1, 1, backend="cpu")
[1, 0, 0, 0, 1]
"""

from .api import MatchstickTable, matchstick_counts, matchstick_table, matchsticks

__all__ = ["matchsticks", "matchstick_counts", "matchstick_table", "MatchstickTable"]
