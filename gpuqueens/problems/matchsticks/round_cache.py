"""One prepared round of a centre join per process, shared by the units that run there.

Every unit of a round (one centre pattern of the puzzle table, or of problem 2) needs the
round's half sweeps: gigabytes that take a minute to build (7×7: ~6 GB). A process builds
them once, for its first unit of the round, and keeps them for its next units. A process
of the user's own pool or Dask cluster outlives the table, so the round is forgotten
once no unit has used it for :data:`IDLE_SECONDS` (and at once by :meth:`RoundCache.clear`,
which the table calls in its own process when it ends).

>>> built = []
>>> cache = RoundCache(lambda h, w: built.append((h, w)) or f"round {h}×{w}")
>>> with cache.using(2, 3) as first:
...     with cache.using(2, 3) as again:       # a second thread's unit, say: no new build
...         pass
>>> first, again is first, built
('round 2×3', True, [(2, 3)])
>>> cache.clear(); cache.held
False
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Callable, Iterator

from .bounds import unit_square_bound
from .round_store import RoundStore

__all__ = ["RoundCache", "forget_join_leftovers", "IDLE_SECONDS"]

#: A round that no unit of this process has used for this long is forgotten.
IDLE_SECONDS = 60.0


class RoundCache:
    """The one round ``build(*key)`` of this process; ``forget(replaced)`` runs when it is
    dropped (to free what the round left elsewhere, such as its arrays on the GPU), with
    ``replaced`` true when the next round of the same count takes its place."""

    def __init__(self, build: Callable[..., Any],
                 forget: Callable[[bool], None] | None = None):
        self._build = build
        self._forget = forget
        self._lock = threading.Lock()   # threads of one process share one copy of the round
        self._key: tuple | None = None
        self._round: Any = None
        self._active = 0
        self._timer: threading.Timer | None = None
        self._uses = 0      # a timer expires the round only if no unit came after it started

    @property
    def held(self) -> bool:
        """Whether a round is kept."""
        return self._key is not None

    @contextlib.contextmanager
    def using(self, *key: Any, store: str | None = None) -> Iterator[Any]:
        """The round of ``key``, built here unless it is the one kept (which it replaces).
        ``store``: the directory of a :class:`.round_store.RoundStore` that the processes
        of one count share (the round is then built by the first of them only)."""
        with self._lock:
            self._active += 1
            self._uses += 1
            self._cancel_timer()
            try:
                if self._key != (key, store):
                    self._drop(replaced=True)    # free the old round before building the new
                    build = functools.partial(self._build, *key)
                    self._round = build() if store is None else RoundStore(store).shared(key, build)
                    self._key = (key, store)
            except BaseException:
                self._active -= 1
                raise
            held = self._round
        try:
            yield held
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0 and self._key is not None:
                    self._timer = threading.Timer(IDLE_SECONDS, self._expire, (self._uses,))
                    self._timer.daemon = True
                    self._timer.start()

    def clear(self) -> None:
        """Forget the round now."""
        with self._lock:
            self._cancel_timer()
            self._drop()

    def _expire(self, uses: int) -> None:
        with self._lock:
            if self._active == 0 and self._uses == uses:
                self._timer = None
                self._drop()

    def _drop(self, replaced: bool = False) -> None:
        had = self._key is not None
        self._key = self._round = None
        if had and self._forget is not None:
            self._forget(replaced)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def forget_join_leftovers(replaced: bool = False) -> None:
    """Free what a round of the centre join leaves beside its parts: the parts kept on the
    GPU, and the unit-square bound's tables unless the next round ``replaced`` it (every
    round of a table shares them: 7×7 with S = 100 rebuilt them in 2.7 s a round)."""
    from .gpu_join import release_device_sides  # NumPy only until a device is asked for

    if not replaced:
        unit_square_bound.cache_clear()
    release_device_sides()
