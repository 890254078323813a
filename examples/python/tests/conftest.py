"""Fixtures for the trainer's tests: run directories served by ``feature_servers``."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
# The package's test folder, last: its modules eventually (wait_until, PipeLines) and
# java_programs (starting and stopping Java programs) serve these tests too; this folder's own
# modules (conftest among them) come first.
sys.path.append(str(pathlib.Path(__file__).resolve().parents[3] / "python" / "tests"))

from feature_servers import SECRET, serve_features  # noqa: E402


@pytest.fixture(scope="session")
def sluice_run(tmp_path_factory):
    """A run directory whose table is published with the secret ``SECRET``."""
    d = tmp_path_factory.mktemp("sluice-run")
    with serve_features(d, SECRET):
        yield d
