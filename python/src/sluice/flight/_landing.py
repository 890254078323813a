"""Memory that READ bodies land in (``io.sluice.flight.memory.LandingPool``): buffers of a power of
two bytes (at least 64 KiB), reused once no batch holds them. A landing is handed out as a
writable memoryview of exactly the body's length; Arrow's buffers keep it (and so the memory)
alive, and when the last of them goes the buffer returns to the pool, which keeps at most
``idle_bytes`` of idle buffers. Thread safe: buffers come back on whichever thread drops them.
"""

from __future__ import annotations

import threading
import weakref
from typing import Dict, List

__all__ = ["LandingPool"]

_MIN = 64 << 10


class LandingPool:
    def __init__(self, idle_bytes: int = 256 << 20) -> None:
        self._idle: Dict[int, List[bytearray]] = {}
        self._idle_bytes = 0
        self._limit = idle_bytes
        self._lock = threading.Lock()

    def acquire(self, length: int) -> memoryview:
        """A writable view of ``length`` bytes; its memory goes back to the pool when the view
        (and every buffer made from it) is gone."""
        size = max(_MIN, 1 << max(0, length - 1).bit_length())
        with self._lock:
            free = self._idle.get(size)
            memory = free.pop() if free else None
            if memory is not None:
                self._idle_bytes -= size
        if memory is None:
            memory = bytearray(size)
        view = memoryview(memory)[:length]
        weakref.finalize(view, self._give_back, memory)
        return view

    def _give_back(self, memory: bytearray) -> None:
        with self._lock:
            if self._idle_bytes + len(memory) <= self._limit:
                self._idle.setdefault(len(memory), []).append(memory)
                self._idle_bytes += len(memory)

    @property
    def idle_bytes(self) -> int:
        return self._idle_bytes
