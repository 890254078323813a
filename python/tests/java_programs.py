"""How the Python tests of both folders (python/tests, and examples/python/tests through its
conftest's sys.path) start the project's Java programs: which ``java``; whether what a program
needs is built (a test skips, saying how to build it, where it is not); a program run to its end,
or started, read line by line until it prints ``serving``, and stopped by the line ``stop`` when
its block ends. Every wait has a deadline. The conftests build the class paths and know what each
program prints.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence

import pytest

from eventually import DEADLINE, PipeLines

__all__ = ["ROOT", "JavaProgram", "java_command", "java_executable", "require_built", "run_to_end",
           "serving", "stop_serving"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: How many of a program's last stderr lines a failure to start quotes.
_STDERR_LINES = 60


def java_executable() -> str:
    """``$JAVA_HOME/bin/java``, else the ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    return str(pathlib.Path(home) / "bin" / "java") if home else (shutil.which("java") or "java")


def require_built(needed: Iterable[pathlib.Path], how_to_build: str) -> None:
    """Skips the calling test, naming what is missing and ``how_to_build`` it, unless every one of
    ``needed`` exists; skips it too where there is no java."""
    missing = [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in needed if not p.exists()]
    if missing:
        pytest.skip(f"not built (missing {', '.join(missing)}): {how_to_build}")
    java = java_executable()
    if shutil.which(java) is None and not pathlib.Path(java).exists():
        pytest.skip("no java on PATH or in JAVA_HOME")


def java_command(cp: str, jvm_flags: Sequence[str], main: str, args: Sequence[str]) -> List[str]:
    """The command line that runs ``main`` on the class path ``cp`` with ``args``."""
    return [java_executable(), *jvm_flags, "-cp", cp, main, *args]


def run_to_end(cp: str, jvm_flags: Sequence[str], main: str, args: Sequence[str], timeout: float) -> List[str]:
    """Runs ``main`` to its end (at most ``timeout`` seconds); its stdout lines.

    :raises AssertionError: when it exits non-zero, quoting the end of its stderr
    """
    done = subprocess.run(java_command(cp, jvm_flags, main, args), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{main} {' '.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return done.stdout.splitlines()


@dataclass
class JavaProgram:
    """A program that serves: the lines it printed up to ``serving`` (that one included), and its
    standard input for questions it answers a line each (:meth:`ask`). One caller at a time."""

    name: str
    process: subprocess.Popen
    lines: PipeLines
    printed: List[str] = field(default_factory=list)

    def ask(self, line: str) -> List[str]:
        """Writes ``line`` to the program and returns the words of the line it answers with.

        :raises AssertionError: when it ends, or does not answer within ``DEADLINE`` seconds
        """
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.lines.next_line(f"{self.name}'s answer to '{line}'", DEADLINE)
        if answer is None:
            raise AssertionError(f"{self.name} ended (exit {self.process.poll()}) instead of answering '{line}'")
        return answer.split()


@contextlib.contextmanager
def serving(cp: str, jvm_flags: Sequence[str], main: str, args: Sequence[str], start_seconds: float,
            env: Optional[Dict[str, str]] = None) -> Iterator[JavaProgram]:
    """Starts ``main`` (with ``env`` as its whole environment, when given) and waits at most
    ``start_seconds`` for each line it prints until one reads ``serving``; yields the program
    until the block ends, then stops it (:func:`stop_serving`, with the same deadline).

    :raises AssertionError: when it ends before serving, quoting the end of its stderr
    """
    name = main.rsplit(".", 1)[-1]
    process = subprocess.Popen(java_command(cp, jvm_flags, main, args), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    stderr: List[str] = []
    errors = threading.Thread(target=lambda: stderr.extend(process.stderr), name=f"stderr of {name}", daemon=True)
    errors.start()
    program = JavaProgram(name, process, PipeLines(process.stdout, name))
    try:
        while True:
            line = program.lines.next_line(f"{name} to start serving", start_seconds)
            if line is None:
                errors.join(timeout=DEADLINE)  # the whole of what it said, not the part read so far
                raise AssertionError(f"{name} ended before serving:\n" + "".join(stderr[-_STDERR_LINES:]))
            program.printed.append(line.strip())
            if line.strip() == "serving":
                break
        yield program
    finally:
        stop_serving(process, start_seconds)


def stop_serving(process: "subprocess.Popen[str]", timeout: float) -> None:
    """Asks a serving Java program to stop (the line ``stop``, then the end of its input) and
    waits at most ``timeout`` seconds for it to exit; kills it if it has not."""
    try:
        process.stdin.write("stop\n")
        process.stdin.close()
    except OSError:
        pass  # it is gone already
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=DEADLINE)
