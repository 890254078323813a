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
from typing import Iterator, List

from java_programs import ROOT, require_built, serving

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


def _classpath() -> str:
    target = EXAMPLES / "target"
    program = target / "test-classes" / "io" / "sluice" / "examples" / "pipeline" / "ServeFeatureTable.class"
    jars = [j for j in target.glob("sluice-examples-*.jar") if not j.name.endswith(("-tests.jar", "-sources.jar"))]
    jar = jars[0] if jars else target / "sluice-examples-*.jar"  # no such file: named as missing
    require_built([program, jar, target / "executor-lib"],
                  "examples/ (ServeFeatureTable, its jar, executor-lib): run bin/sluice-test, or"
                  " mvn -pl examples -am package -DskipTests")
    return os.pathsep.join([str(target / "test-classes"), str(jar), str(target / "executor-lib" / "*"),
                            str(target / "spark-home" / "jars" / "*")])


@contextlib.contextmanager
def serve_features(run_dir: pathlib.Path, secret: str = SECRET) -> Iterator[List[str]]:
    """ServeFeatureTable into ``run_dir`` until the block ends, with ``secret`` in its
    environment; yields what it printed."""
    run_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SLUICE_SECRET=secret, SPARK_HOME=str(EXAMPLES / "target" / "spark-home"),
               SPARK_SCALA_VERSION="2.13", SPARK_LOCAL_IP="127.0.0.1")
    with serving(_classpath(), [*_spark_opens(), "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"],
                 "io.sluice.examples.pipeline.ServeFeatureTable", [str(run_dir), str(SHARDS), str(ROWS), str(WIDTH)],
                 JVM_START_SECONDS, env=env) as program:
        yield program.printed
