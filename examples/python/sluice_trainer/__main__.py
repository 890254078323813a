"""The trainer: ``python -m sluice_trainer --run-dir DIR --feed sluice|flight-grpc|parquet``.

Reads the feature table a run of the pipeline left (the published table ``DIR/driver.properties``
names by its catalog's URI and name for the Flight feeds, with the secret from ``SLUICE_SECRET``
for ``sluice``; the Parquet folder it names, or ``--parquet``, for ``parquet``) for ``--epochs``
epochs, reading ``--prefetch`` shards ahead on as many threads, and trains ``--model`` (``mlp``:
``FeatureMLP``; ``wide``: ``WideFeatureMLP``, a heavier step) with binary cross-entropy and Adam on
``--device``; ``--no-model`` only touches every tensor (the digest's sums). Per epoch it prints the
GB/s delivered (column bytes of the tensors, on the device, over the epoch's wall time), the share
of that time it waited for the next batch, the loss and the digest, and with ``--report FILE``
writes them as JSON with the wall-clock times of its start, its first batch and its last epoch's
end (epoch milliseconds).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Dict, List

import torch

from .digest import FeatureDigest
from .feeds import FEEDS, open_feed
from .model import FeatureMLP, WideFeatureMLP, inputs

MODELS = ("mlp", "wide")


def parse(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m sluice_trainer", description=__doc__.split("\n\n")[0])
    p.add_argument("--run-dir", type=pathlib.Path, required=True, help="the pipeline run's directory")
    p.add_argument("--feed", choices=FEEDS, required=True, help="the hand-off to read through")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--no-model", action="store_true", help="touch every tensor and nothing else")
    p.add_argument("--device", default="cpu", help="cpu, or cuda where present")
    p.add_argument("--seed", type=int, default=1, help="shard order and model initialisation")
    p.add_argument("--prefetch", type=int, default=4, help="shards read ahead, each on a reading thread of its own")
    p.add_argument("--parquet", type=pathlib.Path, help="the Parquet folder (default: the driver's)")
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--model", choices=MODELS, default="mlp", help="mlp: FeatureMLP; wide: WideFeatureMLP")
    p.add_argument("--hidden", default="64,16", help="mlp: the hidden layer widths, comma separated")
    p.add_argument("--width", type=int, default=1024, help="wide: the residual blocks' width")
    p.add_argument("--blocks", type=int, default=3, help="wide: how many residual blocks")
    p.add_argument("--no-verify-reads", action="store_true",
                   help="sluice feed: skip the CRC32C check of each body (sluice.flight.verifyReads)")
    p.add_argument("--threads", type=int, default=0, help="torch's intra-op threads (0: torch's default)")
    p.add_argument("--report", type=pathlib.Path, help="write the epochs' figures here as JSON")
    a = p.parse_args(argv)
    if a.epochs < 1:
        p.error("--epochs must be >= 1")
    if a.prefetch < 1:
        p.error("--prefetch must be >= 1")
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        p.error(f"--device {a.device}: CUDA is not available to this torch")
    return a


def main(argv: List[str]) -> int:
    a = parse(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    started_ms = time.time() * 1e3
    started = time.perf_counter()

    def wall_ms() -> float:
        # The wall clock read once, moved on by the monotonic one: the report's times come in the
        # order their events did even when the system clock is stepped during the run.
        return started_ms + (time.perf_counter() - started) * 1e3

    mode = "no-model" if a.no_model else a.model
    epochs: List[Dict] = []
    first_batch_ms = None
    hidden = [int(h) for h in a.hidden.split(",") if h]
    with open_feed(a.feed, a.run_dir, a.seed, a.prefetch, a.parquet, verify_reads=not a.no_verify_reads,
                   device=a.device) as feed:
        model = optimizer = None
        loss_fn = torch.nn.BCEWithLogitsLoss()
        print(f"[trainer] {a.epochs} epochs, feed {feed.name} on {a.prefetch} reading thread(s), {mode} on {device}",
              flush=True)
        for e in range(a.epochs):
            digest = FeatureDigest()
            loss_sum = torch.zeros((), device=device)
            steps = nbytes = 0
            waited = 0.0
            t0 = time.perf_counter()
            batches = feed.epoch(e)
            while True:
                w = time.perf_counter()
                batch = next(batches, None)
                waited += time.perf_counter() - w
                if batch is None:
                    break
                if first_batch_ms is None:
                    first_batch_ms = wall_ms()
                if device.type != "cpu":  # the sluice feed's tensors are there already; a no-op for them
                    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                digest.add(batch)
                nbytes += sum(t.element_size() * t.nelement() for t in batch.values())
                if a.no_model:
                    continue
                x, emb, y = inputs(batch, sum(1 for k in batch if k.startswith("f") and k[1:].isdigit()))
                if model is None:
                    model = (FeatureMLP(x.shape[1], emb.shape[1], hidden) if a.model == "mlp"
                             else WideFeatureMLP(x.shape[1], emb.shape[1], a.width, a.blocks)).to(device)
                    optimizer = torch.optim.Adam(model.parameters(), lr=a.learning_rate)
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(x, emb), y)
                loss.backward()
                optimizer.step()
                loss_sum += loss.detach()
                steps += 1
            value = digest.value()  # synchronizes with the device
            wall = time.perf_counter() - t0
            loss = loss_sum.item() / steps if steps else float("nan")
            end_ms = wall_ms()
            epochs.append({"epoch": e + 1, "wall_s": wall, "wait_s": waited, "bytes": nbytes, "rows": digest.rows,
                           "loss": loss, "digest": value})
            print(f"[trainer] epoch {e + 1}/{a.epochs}: {nbytes / wall / 1e9:.3f} GB/s delivered in {wall:.3f} s,"
                  f" waited {100 * waited / wall:.1f}% of it, loss {loss:.4f}, {digest.rows:,} rows,"
                  f" digest {value}", flush=True)
        path = feed.path
        print(f"[trainer] the feed's path: {path}", flush=True)
    digests = {ep["digest"] for ep in epochs}
    if len(digests) != 1:
        print(f"[trainer] the epochs read different tables: digests {sorted(digests)}", file=sys.stderr)
        return 1
    if a.report:
        a.report.write_text(json.dumps({
            "feed": a.feed, "mode": mode, "prefetch": a.prefetch, "device": str(device), "path": path,
            "started_ms": started_ms,
            "first_batch_ms": first_batch_ms, "end_ms": end_ms, "epochs": epochs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
