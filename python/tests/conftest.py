"""Fixtures that start the project's real Java programs (built by bin/sluice-test, or by
``mvn -pl arrow-flight-rdma -am package -DskipTests``); tests that need them skip, saying so,
when the classes are not built."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pytest

from java_programs import ROOT, JavaProgram, require_built, run_to_end, serving

MODULE = ROOT / "arrow-flight-rdma"
TARGET = MODULE / "target"
JVM_FLAGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
#: How long a Java program may take to start serving, or to stop, on a loaded machine (seconds).
JVM_START_SECONDS = 120.0
#: The deadline of every Flight call a test makes (``timeout=`` of the clients): a server that
#: never answers fails the test instead of hanging the run.
CALL_SECONDS = 60.0


def _classpath() -> str:
    require_built(
        [TARGET / "test-classes" / "io" / "sluice" / "flight" / "ServeTestTable.class", TARGET / "test-classpath.txt"],
        "the Java test programs: run bin/sluice-test, or mvn -pl arrow-flight-rdma -am package -DskipTests",
    )
    return os.pathsep.join(
        [str(TARGET / "test-classes"), str(TARGET / "classes"), (TARGET / "test-classpath.txt").read_text().strip()]
    )


@pytest.fixture(scope="session")
def java():
    """Runs a main class of arrow-flight-rdma's test class path; returns its stdout lines."""
    cp = _classpath()

    def run(main: str, *args: str, timeout: float = 120) -> List[str]:
        return run_to_end(cp, JVM_FLAGS, main, args, timeout)

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
    program: Optional[JavaProgram] = None

    def counts(self) -> Dict[str, int]:
        """The server's live data-plane grants and streams."""
        words = self.program.ask("counts")
        return {"grants": int(words[2]), "streams": int(words[4])}

    def corrupt(self, shard: str) -> None:
        """Flips a byte of the shard's last batch in the server's registered memory."""
        assert self.program.ask(f"corrupt {shard}") == ["corrupted", shard]


SHARDS, ROWS, SECRET = 7, 16, "python-test-secret"


@contextlib.contextmanager
def serve(java, provider: str = "tcp", encryption: bool = False, shards: int = SHARDS, rows: int = ROWS,
          settings: Optional[Dict[str, str]] = None):
    """A real SluiceFlightServer (io.sluice.flight.ServeTestTable) until the block ends; ``settings``:
    further server keys (``sluice.flight.dataPlaneGetsPerClient``, ...)."""
    args = [str(shards), str(rows), SECRET, provider, str(encryption).lower(),
            *(f"{k}={v}" for k, v in (settings or {}).items())]
    with serving(java.classpath, JVM_FLAGS, "io.sluice.flight.ServeTestTable", args, JVM_START_SECONDS) as program:
        table = ServedTable("", "", SECRET, program=program)
        for words in (line.split() for line in program.printed):
            if words[0] == "location":
                table.location = words[1]
            elif words[0] == "token":
                table.token = words[1]
            elif words[0] == "shard":
                table.shards[words[1]] = {"rows": int(words[3]), "batches": int(words[5]), "crc32": int(words[7], 16)}
        yield table


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
