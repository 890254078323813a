"""Fixtures for the trainer's tests: run directories served by ``feature_servers``."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from feature_servers import SECRET, serve_features  # noqa: E402


@pytest.fixture(scope="session")
def sluice_run(tmp_path_factory):
    """A run directory whose executor serves with a secret (the READ data plane)."""
    d = tmp_path_factory.mktemp("sluice-run")
    with serve_features(d, SECRET):
        yield d


@pytest.fixture(scope="session")
def grpc_run(tmp_path_factory):
    """A run directory whose executor serves plain Flight (no secret), the same rows."""
    d = tmp_path_factory.mktemp("grpc-run")
    with serve_features(d, ""):
        yield d
