"""Memory that READ bodies land in (``io.sluice.flight.memory.LandingPool``): buffers of a power of
two bytes (at least 64 KiB), reused once nothing points into them, allocated by ``allocate``
(``numpy.empty`` by default; ``sluice.torch`` passes pinned memory for a CUDA device).

A landing is handed out as a writable memoryview of exactly the body's length, exported by an
array object of its own over the pooled buffer. Every memoryview cut from it, and every Arrow
buffer made from those, keeps that exporter alive; the buffer returns to the pool only when the
exporter dies, so a batch that keeps a slice of a body keeps the whole buffer from being reused
under it. The pool keeps at most ``idle_bytes`` of idle buffers. Thread safe: buffers come back
on whichever thread drops the last reference.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable, Dict, List, Optional

import numpy as np

__all__ = ["LandingPool"]

_MIN = 64 << 10

#: Allocates a writable, C-contiguous uint8 array of the given number of bytes.
Allocate = Callable[[int], np.ndarray]


def _numpy_empty(size: int) -> np.ndarray:
    return np.empty(size, dtype=np.uint8)


class LandingPool:
    def __init__(self, idle_bytes: int = 256 << 20, allocate: Optional[Allocate] = None) -> None:
        self._idle: Dict[int, List[np.ndarray]] = {}
        self._idle_bytes = 0
        self._limit = idle_bytes
        self._allocate = allocate or _numpy_empty
        self._lock = threading.Lock()
        self._outstanding = 0

    def acquire(self, length: int) -> memoryview:
        """A writable view of ``length`` bytes; its memory goes back to the pool when the view,
        every view cut from it and every buffer made from those are gone."""
        size = max(_MIN, 1 << max(0, length - 1).bit_length())
        with self._lock:
            free = self._idle.get(size)
            memory = free.pop() if free else None
            if memory is not None:
                self._idle_bytes -= size
            self._outstanding += size
        if memory is None:
            try:
                memory = self._allocate(size)
            except BaseException:
                with self._lock:
                    self._outstanding -= size
                raise
            if memory.dtype != np.uint8 or memory.nbytes != size or not memory.flags.c_contiguous:
                raise ValueError(f"landing allocator returned {memory.dtype} x {memory.nbytes}, not {size} contiguous bytes")
        exporter = memory[:length]  # an array object of this landing alone; its base is the pooled buffer
        weakref.finalize(exporter, self._give_back, memory)
        return memoryview(exporter).cast("B")

    def _give_back(self, memory: np.ndarray) -> None:
        with self._lock:
            self._outstanding -= memory.nbytes
            if self._idle_bytes + memory.nbytes <= self._limit:
                self._idle.setdefault(memory.nbytes, []).append(memory)
                self._idle_bytes += memory.nbytes

    @property
    def idle_bytes(self) -> int:
        return self._idle_bytes

    @property
    def outstanding_bytes(self) -> int:
        """Bytes of buffers handed out and not yet back (held by readers or batches)."""
        return self._outstanding
