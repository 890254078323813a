"""How the Python tests of both folders (python/tests, and examples/python/tests through its
conftest's sys.path) wait for what happens on another thread or in another process: a grant or
stream the server frees, a child's next line, a call the server ends. Python's side of
transport's ``Eventually``.

Never read such a value once: on a loaded machine the thread or process that changes it may not
have run yet. :func:`wait_until` polls until a condition holds or its deadline passes, then fails
naming what it waited for and the last value it saw. :class:`PipeLines` reads a child's output on
a thread of its own, so that each line is waited for with a deadline too.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import IO, Callable, Optional, TypeVar

__all__ = ["DEADLINE", "PipeLines", "wait_until"]

#: How long a test waits for an asynchronous effect unless it says otherwise (seconds).
DEADLINE = 30.0

_POLL_SECONDS = 0.01

T = TypeVar("T")


def wait_until(what: str, value: Callable[[], T], ok: Callable[[T], bool] = bool, timeout: float = DEADLINE) -> T:
    """Calls ``value`` until ``ok`` accepts what it returned (by default: until it is true), for at
    most ``timeout`` seconds, and returns that value.

    :raises AssertionError: past the deadline, naming ``what`` and the last value seen
    """
    end = time.monotonic() + timeout
    while True:
        v = value()
        if ok(v):
            return v
        if time.monotonic() >= end:
            raise AssertionError(f"not within {timeout:g} s: {what} (last seen: {v!r})")
        time.sleep(_POLL_SECONDS)


class PipeLines:
    """The lines a child process writes to a pipe (opened in text mode), read on a daemon thread
    as they come, so that a test waits for each with a deadline instead of blocking in
    ``readline``. One reader: not for use from several threads."""

    def __init__(self, pipe: IO[str], name: str) -> None:
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._ended = False
        threading.Thread(target=self._pump, args=(pipe,), name=f"lines of {name}", daemon=True).start()

    def _pump(self, pipe: IO[str]) -> None:
        try:
            for line in pipe:
                self._lines.put(line)
        except (OSError, ValueError):
            pass  # the pipe was closed under us: the stream ends here
        finally:
            self._lines.put(None)

    def next_line(self, what: str, timeout: float = DEADLINE) -> Optional[str]:
        """The next line without its line end, or None once the stream has ended.

        :raises AssertionError: when no line and no end came within ``timeout`` seconds
        """
        if self._ended:
            return None
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"not within {timeout:g} s: {what} (no line came)") from None
        if line is None:
            self._ended = True
            return None
        return line.rstrip("\n")
