"""Summarizes examples/gpu/run's trainer reports (DIR/<feed>-<mode>-<round>.json) into DIR/trainer-gpu.json,
in the results-file shape of perf/ (one measurement per entry, with its baseline: the flight-grpc feed's
same figure). Only the epochs after the first count: the first carries the start-up (CUDA's too)."""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys


def six(x: float) -> float:
    return float(f"{x:.6g}")


def main(out: str) -> None:
    runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, "*-*-[0-9]*.json")))]
    figures = {}
    for feed in ("sluice", "flight-grpc"):
        for mode in ("mlp", "no-model"):
            mine = [r for r in runs if r["feed"] == feed and r["mode"] == mode]
            if not mine:
                continue
            later = [e for r in mine for e in r["epochs"][1:]]
            rates = [e["bytes"] / e["wall_s"] / 1e9 for e in later]
            figures[(feed, mode)] = {
                ("delivered", "GB/s"): statistics.median(rates),
                ("delivered.min", "GB/s"): min(rates),
                ("delivered.max", "GB/s"): max(rates),
                ("waiting_share", "ratio"): statistics.median(e["wait_s"] / e["wall_s"] for e in later),
                ("first_epoch", "s"): statistics.median(r["epochs"][0]["wall_s"] for r in mine),
            }
            digests = {e["digest"] for r in mine for e in r["epochs"]}
            print(f"{feed:12s} {mode:9s} path {mine[0]['path']}, {len(mine)} runs, digest {', '.join(sorted(digests))}")
    entries = []
    for mode in ("mlp", "no-model"):
        ours, theirs = figures.get(("sluice", mode)), figures.get(("flight-grpc", mode))
        if not ours or not theirs:
            continue
        m = mode.replace("-", "_")
        for (what, unit), value in ours.items():
            entries.append({"name": f"sluice.trainer_gpu.{m}.{what}", "unit": unit, "value": six(value),
                            "baseline_name": f"flight_grpc.trainer_gpu.{m}.{what}",
                            "baseline_value": six(theirs[(what, unit)])})
        print(f"{mode:9s} sluice {ours[('delivered', 'GB/s')]:.2f} GB/s, waiting "
              f"{ours[('waiting_share', 'ratio')]:.0%}; flight-grpc {theirs[('delivered', 'GB/s')]:.2f} GB/s, "
              f"waiting {theirs[('waiting_share', 'ratio')]:.0%}; "
              f"{ours[('delivered', 'GB/s')] / theirs[('delivered', 'GB/s')]:.2f}x")
    path = os.path.join(out, "trainer-gpu.json")
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(e) for e in entries) + "\n]\n")
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1])
