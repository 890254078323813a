"""The trainer against a table published as the pipeline publishes its own: the three feeds
deliver the same rows (equal digests), over the path each is meant to take, with and without the
model; the secret reaches the trainer through the environment only."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
import torch

from feature_servers import EXAMPLES, ROWS, SECRET, SHARDS
from sluice.flight import call_token, table_shards
from sluice_trainer import properties
from sluice_trainer.digest import FeatureDigest
from sluice_trainer.feeds import open_feed, write_parquet


def train(run_dir: pathlib.Path, feed: str, *args: str, secret: str = SECRET) -> dict:
    """Runs ``python -m sluice_trainer`` as the demo does (``secret`` in ``SLUICE_SECRET``; none
    when empty); returns its report."""
    report = run_dir / f"report-{feed}-{len(list(run_dir.glob('report-*')))}.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES / "python"), os.environ.get("PYTHONPATH", "")]))
    env.pop("SLUICE_SECRET", None)
    if secret:
        env["SLUICE_SECRET"] = secret
    done = subprocess.run(
        [sys.executable, "-m", "sluice_trainer", "--run-dir", str(run_dir), "--feed", feed, "--report", str(report),
         "--threads", "1", *args],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(report.read_text())


def digests(report: dict) -> set:
    return {e["digest"] for e in report["epochs"]}


def test_the_feeds_agree_and_take_their_paths(sluice_run, tmp_path):
    sluice = train(sluice_run, "sluice", "--epochs", "2", "--no-model")
    assert sluice["path"] in ("shm", "tcp")
    assert len(digests(sluice)) == 1
    assert all(e["rows"] == SHARDS * ROWS for e in sluice["epochs"])

    # pyarrow.flight with the driver's catalog token alone: no secret in its environment.
    over_grpc = train(sluice_run, "flight-grpc", "--epochs", "2", "--no-model", secret="")
    assert over_grpc["path"] == "grpc"
    assert digests(over_grpc) == digests(sluice)

    # The served table as Spark lays it out: the embedding a list<float>, small row groups.
    write_parquet(sluice_run, tmp_path / "features", row_group_rows=300)
    (tmp_path / "driver.properties").write_text(f"parquetDir={tmp_path / 'features'}\n")
    parquet = train(tmp_path, "parquet", "--epochs", "2", "--no-model")
    assert parquet["path"] == "parquet"
    assert digests(parquet) == digests(sluice)


def test_the_table_written_as_parquet_feeds_the_wide_model(sluice_run, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES / "python"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "sluice_trainer.to_parquet", "--run-dir", str(sluice_run),
                           "--out", str(tmp_path / "copy")], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted((tmp_path / "copy").iterdir())
    assert [pq.ParquetFile(f).metadata.num_row_groups for f in files] == [1] * SHARDS
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == SHARDS * ROWS

    over_grpc = train(sluice_run, "flight-grpc", "--epochs", "1", "--no-model", secret="")
    wide = train(sluice_run, "parquet", "--parquet", str(tmp_path / "copy"), "--model", "wide", "--width", "32",
                 "--blocks", "1", "--prefetch", "1", "--epochs", "2", secret="")
    assert wide["mode"] == "wide" and wide["prefetch"] == 1 and wide["path"] == "parquet"
    assert digests(wide) == digests(over_grpc)
    assert all(e["loss"] == e["loss"] for e in wide["epochs"])  # not NaN: the model took steps


def test_the_model_trains_on_every_feed(sluice_run):
    report = train(sluice_run, "sluice", "--epochs", "3")
    losses = [e["loss"] for e in report["epochs"]]
    assert report["mode"] == "mlp"
    assert losses[2] < losses[0], losses
    assert report["first_batch_ms"] <= report["end_ms"]
    assert all(0 <= e["wait_s"] <= e["wall_s"] for e in report["epochs"])


def test_a_sluice_feed_needs_the_secret_in_the_environment(sluice_run, monkeypatch):
    monkeypatch.delenv("SLUICE_SECRET", raising=False)
    with pytest.raises(ValueError, match="SLUICE_SECRET"):
        open_feed("sluice", sluice_run)


def test_the_run_folder_holds_no_secret(sluice_run):
    driver = sluice_run / "driver.properties"
    assert driver.stat().st_mode & 0o077 == 0, oct(driver.stat().st_mode)
    for f in sluice_run.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_a_wrong_catalog_token_is_refused(sluice_run):
    from pyarrow import flight

    p = properties.load(sluice_run / "driver.properties")
    wrong = call_token.mint("not-the-secret-0123456789abcdef", p["catalog"])
    with pytest.raises(flight.FlightUnauthenticatedError):
        table_shards(p["catalog"], p["table"], token=wrong)


def tensors(rows: range) -> dict:
    g = torch.Generator().manual_seed(7)
    n = len(rows)
    full = {"user_id": torch.arange(1000, 1000 + 20), "label": torch.rand(20, generator=g, dtype=torch.float64),
            "f0": torch.randn(20, generator=g, dtype=torch.float64), "embedding": torch.randn(20, 256, generator=g)}
    return {k: v[rows.start:rows.stop] for k, v in full.items()} if n else full


def test_the_digest_ignores_order_and_batching():
    whole = FeatureDigest()
    whole.add(tensors(range(0, 20)))
    split = FeatureDigest()
    for part in (range(13, 20), range(0, 5), range(5, 13)):
        split.add(tensors(part))
    assert split.value() == whole.value() and split.rows == 20


def test_the_digest_sees_a_changed_lost_or_repeated_value():
    base = FeatureDigest()
    base.add(tensors(range(0, 20)))
    changed = tensors(range(0, 20))
    changed["embedding"] = changed["embedding"].clone()
    changed["embedding"][3, 200] += 1e-3
    lost = FeatureDigest()
    lost.add(tensors(range(0, 19)))
    repeated = FeatureDigest()
    repeated.add(tensors(range(0, 20)))
    repeated.add(tensors(range(19, 20)))
    other = FeatureDigest()
    other.add(changed)
    assert len({base.value(), other.value(), lost.value(), repeated.value()}) == 4


def test_properties_are_read_as_java_writes_them(tmp_path):
    f = tmp_path / "driver.properties"
    f.write_text("#comment\nlocations=grpc\\://127.0.0.1\\:4000\ntoken.grpc\\://h\\:1=abc\\=\nempty=\n")
    assert properties.load(f) == {"locations": "grpc://127.0.0.1:4000", "token.grpc://h:1": "abc=", "empty": ""}
