"""A small feature table published as the pipeline publishes its own (``SluiceTables.publish``, by
the test program ``ServeFeatureTable`` of examples/, a Spark session on local-cluster with one
executor), in run
directories as the pipeline's driver leaves them (``driver.properties``: the catalog, the table,
a catalog token). The secret goes to it through the environment only (``SLUICE_SECRET``). Tests
that need it skip, saying so, when examples/ is not built (``mvn -pl examples -am package
-DskipTests``)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import shutil
import subprocess
import threading
from typing import Iterator, List

import pytest

from eventually import DEADLINE, PipeLines, stop_serving

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

SHARDS, ROWS, WIDTH, SECRET = 6, 700, 21, "trainer-test-secret-0123456789"
#: How long ServeFeatureTable (a Spark session) may take to start serving, or to stop, on a loaded machine (seconds).
JVM_START_SECONDS = 180.0


def _spark_opens() -> list:
    """The JVM flags Spark needs on JDK 17+, from the one place they are kept (the parent pom)."""
    m = re.search(r"<spark.module.opens>(.*)</spark.module.opens>", (ROOT / "pom.xml").read_text())
    if m is None:
        raise AssertionError(f"spark.module.opens is missing from {ROOT / 'pom.xml'}")
    return m.group(1).split()


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(pathlib.Path(home) / "bin" / "java") if home else (shutil.which("java") or "java")


def _classpath() -> str:
    target = EXAMPLES / "target"
    program = target / "test-classes" / "io" / "sluice" / "examples" / "pipeline" / "ServeFeatureTable.class"
    jars = [j for j in target.glob("sluice-examples-*.jar") if not j.name.endswith(("-tests.jar", "-sources.jar"))]
    if not program.exists() or not jars or not (target / "executor-lib").is_dir():
        pytest.skip("examples/ is not built (ServeFeatureTable, its jar, executor-lib): run bin/sluice-test, or"
                    " mvn -pl examples -am package -DskipTests")
    return os.pathsep.join([str(target / "test-classes"), str(jars[0]), str(target / "executor-lib" / "*"),
                            str(target / "spark-home" / "jars" / "*")])


@contextlib.contextmanager
def serve_features(run_dir: pathlib.Path, secret: str = SECRET) -> Iterator[List[str]]:
    """ServeFeatureTable into ``run_dir`` until the block ends, with ``secret`` in its
    environment; yields what it printed."""
    run_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [_java(), *_spark_opens(), "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", _classpath(),
         "io.sluice.examples.pipeline.ServeFeatureTable", str(run_dir), str(SHARDS), str(ROWS), str(WIDTH)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, SLUICE_SECRET=secret, SPARK_HOME=str(EXAMPLES / "target" / "spark-home"),
                 SPARK_SCALA_VERSION="2.13", SPARK_LOCAL_IP="127.0.0.1"),
    )
    stderr: List[str] = []
    errors = threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True)
    errors.start()
    output = PipeLines(process.stdout, "ServeFeatureTable")
    lines: List[str] = []
    try:
        while True:
            line = output.next_line("ServeFeatureTable to start serving", JVM_START_SECONDS)
            if line is None:
                errors.join(timeout=DEADLINE)  # the whole of what it said, not the part read so far
                raise AssertionError("ServeFeatureTable ended before serving:\n" + "".join(stderr[-40:]))
            lines.append(line.strip())
            if line.strip() == "serving":
                break
        yield lines
    finally:
        stop_serving(process, JVM_START_SECONDS)


