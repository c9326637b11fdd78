"""The GPU path: the transfer matrix of :mod:`.transfer` run with CuPy arrays.

Importable without CuPy; :func:`cupy_module` imports it only when the GPU backend runs.
"""

from __future__ import annotations

__all__ = ["cupy_module"]


def cupy_module():
    """The ``cupy`` module (``xp`` for :func:`.transfer.count_by_removed`)."""
    import cupy

    return cupy
