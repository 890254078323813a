"""Deadlines for blocking Flight reads, which pyarrow takes none for (``read_chunk``): a read is
bracketed by :meth:`Watchdog.arm` and :meth:`Watchdog.disarm`, and a read still under way at its
deadline has its call cancelled, which ends the read with an error."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Any, Callable, List, Optional

__all__ = ["Watchdog", "WATCHDOG", "read_chunk", "call_within"]


class _Alarm:
    __slots__ = ("deadline", "cancel", "armed", "fired")

    def __init__(self, deadline: float, cancel: Callable[[], None]) -> None:
        self.deadline, self.cancel, self.armed, self.fired = deadline, cancel, True, False


class Watchdog:
    """Cancels Flight calls whose blocking read missed its deadline: one thread for the process,
    started on first use. An alarm fires (cancels the call) only while armed, so nothing is
    cancelled once the read's owner moved on."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: List[tuple] = []
        self._order = itertools.count()
        self._thread: Optional[threading.Thread] = None

    def arm(self, deadline: float, cancel: Callable[[], None]) -> _Alarm:
        alarm = _Alarm(deadline, cancel)
        with self._cv:
            heapq.heappush(self._heap, (deadline, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sluice-flight-watchdog", daemon=True)
                self._thread.start()
            self._cv.notify()
        return alarm

    def disarm(self, alarm: _Alarm) -> bool:
        """Disarms ``alarm``; True if it had fired (the call was cancelled)."""
        with self._cv:
            alarm.armed = False
            return alarm.fired

    def _run(self) -> None:
        with self._cv:
            while True:
                while self._heap and not self._heap[0][2].armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cv.wait()
                    continue
                left = self._heap[0][0] - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                alarm = heapq.heappop(self._heap)[2]
                alarm.fired = True
                try:
                    alarm.cancel()
                except Exception:  # noqa: BLE001 - a call that already ended cannot be cancelled; nothing to do
                    pass


#: The process's watchdog over Flight reads.
WATCHDOG = Watchdog()




def read_chunk(call, deadline: float, what: str):
    """``call.read_chunk()`` within ``deadline`` (``time.monotonic()``); StopIteration at the end.

    :raises TransportTimeoutException: past the deadline (the call is cancelled)
    """
    from ..errors import TransportTimeoutException

    alarm = WATCHDOG.arm(deadline, call.cancel)
    try:
        chunk = call.read_chunk()  # its end (StopIteration) or failure, unless the alarm caused it
    finally:
        if WATCHDOG.disarm(alarm):
            raise TransportTimeoutException(f"the server sent no {what} within the deadline; the call is cancelled") from None
    return chunk


def call_within(call: Callable[[], Any], timeout: float, what: str, discard: Callable[[Any], None]) -> Any:
    """``call()``'s result within ``timeout`` seconds, for a blocking call that has no deadline of
    its own and nothing to cancel until it returns (pyarrow's ``do_get`` waits for the server's
    stream to start). It runs on a thread of its own; past the deadline this raises, and a result
    that comes later is handed to ``discard`` (which cancels it). Closing the client ends a call
    still waiting.

    :raises TransportTimeoutException: past the deadline
    """
    from ..errors import TransportTimeoutException

    box: dict = {}
    lock = threading.Lock()
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = e
        with lock:
            done.set()
            late = box.get("late", False)
        if late and "value" in box:
            try:
                discard(box["value"])
            except Exception:  # noqa: BLE001 - nobody waits for it any more
                pass

    threading.Thread(target=run, name="sluice-flight-call", daemon=True).start()
    if not done.wait(timeout):
        with lock:
            if not done.is_set():
                box["late"] = True
                raise TransportTimeoutException(f"{what} did not come within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
