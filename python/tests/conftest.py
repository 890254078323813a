"""Fixtures that start the project's real Java programs (built by bin/sluice-test, or by
``mvn -pl arrow-flight-rdma -am package -DskipTests``); tests that need them skip, saying so,
when the classes are not built."""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pytest

from eventually import DEADLINE, PipeLines, stop_serving

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULE = ROOT / "arrow-flight-rdma"
TARGET = MODULE / "target"
JVM_FLAGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
#: How long a Java program may take to start serving, or to stop, on a loaded machine (seconds).
JVM_START_SECONDS = 120.0
#: The deadline of every Flight call a test makes (``timeout=`` of the clients): a server that
#: never answers fails the test instead of hanging the run.
CALL_SECONDS = 60.0


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(pathlib.Path(home) / "bin" / "java") if home else (shutil.which("java") or "java")


def _classpath() -> str:
    needed = [
        TARGET / "test-classes" / "io" / "sluice" / "flight" / "ServeTestTable.class",
        TARGET / "test-classpath.txt",
    ]
    missing = [str(p.relative_to(ROOT)) for p in needed if not p.exists()]
    if missing:
        pytest.skip(
            f"the Java test programs are not built (missing {', '.join(missing)}): run bin/sluice-test, or"
            " mvn -pl arrow-flight-rdma -am package -DskipTests"
        )
    if shutil.which(_java()) is None and not pathlib.Path(_java()).exists():
        pytest.skip("no java on PATH or in JAVA_HOME")
    return os.pathsep.join(
        [str(TARGET / "test-classes"), str(TARGET / "classes"), (TARGET / "test-classpath.txt").read_text().strip()]
    )


@pytest.fixture(scope="session")
def java():
    """Runs a main class of arrow-flight-rdma's test class path; returns its stdout lines."""
    cp = _classpath()

    def run(main: str, *args: str, timeout: float = 120) -> List[str]:
        done = subprocess.run(
            [_java(), *JVM_FLAGS, "-cp", cp, main, *args],
            capture_output=True, text=True, timeout=timeout,
        )
        if done.returncode != 0:
            raise AssertionError(f"{main} {' '.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}")
        return done.stdout.splitlines()

    run.classpath = cp  # type: ignore[attr-defined]
    return run


@dataclass
class ServedTable:
    """What ServeTestTable printed: where it serves, the token of its secret, each shard's rows and CRC.
    :meth:`counts` and :meth:`corrupt` talk to the running program."""

    location: str
    token: str
    secret: str
    shards: Dict[str, dict] = field(default_factory=dict)
    process: Optional[subprocess.Popen] = None
    lines: Optional[PipeLines] = None

    def _ask(self, line: str) -> List[str]:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.lines.next_line(f"ServeTestTable's answer to '{line}'", DEADLINE)
        if answer is None:
            raise AssertionError(f"ServeTestTable ended (exit {self.process.poll()}) instead of answering '{line}'")
        return answer.split()

    def counts(self) -> Dict[str, int]:
        """The server's live data-plane grants and streams."""
        words = self._ask("counts")
        return {"grants": int(words[2]), "streams": int(words[4])}

    def corrupt(self, shard: str) -> None:
        """Flips a byte of the shard's last batch in the server's registered memory."""
        assert self._ask(f"corrupt {shard}") == ["corrupted", shard]


SHARDS, ROWS, SECRET = 7, 16, "python-test-secret"


@contextlib.contextmanager
def serve(java, provider: str = "tcp", encryption: bool = False, shards: int = SHARDS, rows: int = ROWS,
          settings: Optional[Dict[str, str]] = None):
    """A real SluiceFlightServer (io.sluice.flight.ServeTestTable) until the block ends; ``settings``:
    further server keys (``sluice.flight.dataPlaneGetsPerClient``, ...)."""
    process = subprocess.Popen(
        [_java(), *JVM_FLAGS, "-cp", java.classpath, "io.sluice.flight.ServeTestTable", str(shards), str(rows), SECRET,
         provider, str(encryption).lower(), *(f"{k}={v}" for k, v in (settings or {}).items())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stderr: List[str] = []
    errors = threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True)
    errors.start()
    table = ServedTable("", "", SECRET, process=process, lines=PipeLines(process.stdout, "ServeTestTable"))
    try:
        while True:
            line = table.lines.next_line("ServeTestTable to start serving", JVM_START_SECONDS)
            if line is None:
                errors.join(timeout=DEADLINE)  # the whole of what it said, not the part read so far
                raise AssertionError("ServeTestTable ended before serving:\n" + "".join(stderr))
            words = line.split()
            if words[0] == "location":
                table.location = words[1]
            elif words[0] == "token":
                table.token = words[1]
            elif words[0] == "shard":
                table.shards[words[1]] = {"rows": int(words[3]), "batches": int(words[5]), "crc32": int(words[7], 16)}
            elif words[0] == "serving":
                break
        yield table
    finally:
        stop_serving(process, JVM_START_SECONDS)


@pytest.fixture(scope="session")
def served_table(java):
    """7 shards on a tcp data plane, until the session ends."""
    with serve(java) as table:
        yield table


@pytest.fixture(scope="session")
def served_shm_table(java):
    """7 shards on an shm data plane, until the session ends."""
    with serve(java, "shm") as table:
        yield table
