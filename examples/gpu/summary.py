"""Summarizes examples/gpu/run: ``python3 examples/gpu/summary.py DIR [RESULTS_JSON]``.

Reads the trainer's reports ``DIR/<feed>-<mode>-p<threads>-r<round>.json`` (mode: a model, or
``no-model``; threads: the feed's reading threads, ``--prefetch``) and the ceilings
``DIR/ceilings.json`` (``ceilings.py``). Only the epochs after the first count: the first carries
the start-up (CUDA's too). Prints, per mode, each feed's GB/s into the device's tensors and its
waiting share at every thread count (medians of the later epochs over the rounds), then each
feed's best against the ceilings and the other feeds. Writes the medians to ``DIR/trainer-gpu.json``,
and to RESULTS_JSON when given, in the results-file shape of perf/ (one figure per entry, named for
itself and its baseline). Exits 1 when the runs read different rows (their digests differ).
"""

from __future__ import annotations

import json
import pathlib
import re
import statistics
import sys
from typing import Dict, List, Tuple

FEEDS = ("sluice", "parquet", "flight-grpc")
REPORT = re.compile(r"(?P<feed>sluice|parquet|flight-grpc)-(?P<mode>[a-z-]+)-p(?P<threads>\d+)-r(?P<round>\d+)\.json")


def six(x: float) -> float:
    return float(f"{x:.6g}")


def key(name: str) -> str:
    """A feed's or mode's name as a part of a figure's name."""
    return name.replace("-", "_")


class Cell:
    """One feed, mode and thread count over its rounds."""

    def __init__(self, runs: List[dict]) -> None:
        later = [e for r in runs for e in (r["epochs"][1:] or r["epochs"])]
        rates = [e["bytes"] / e["wall_s"] / 1e9 for e in later]
        self.runs = len(runs)
        self.gbps, self.min, self.max = statistics.median(rates), min(rates), max(rates)
        self.waiting = statistics.median(e["wait_s"] / e["wall_s"] for e in later)
        self.first_epoch = statistics.median(r["epochs"][0]["wall_s"] for r in runs)
        self.path = "+".join(sorted({r["path"] for r in runs}))


def main(argv: List[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: summary.py DIR [RESULTS_JSON]", file=sys.stderr)
        return 2
    out = pathlib.Path(argv[0])
    grouped: Dict[Tuple[str, str, int], List[dict]] = {}
    digests: Dict[str, set] = {}
    for f in sorted(out.glob("*.json")):
        m = REPORT.fullmatch(f.name)
        if m is None:
            continue
        report = json.loads(f.read_text())
        grouped.setdefault((m["feed"], m["mode"], int(m["threads"])), []).append(report)
        digests[f.name] = {e["digest"] for e in report["epochs"]}
    if not grouped:
        print(f"summary: no trainer reports in {out}", file=sys.stderr)
        return 2
    cells = {k: Cell(v) for k, v in grouped.items()}
    ceilings = json.loads((out / "ceilings.json").read_text())["ceilings"]
    modes = sorted({m for _, m, _ in cells}, key=lambda m: (m == "no-model", m))
    threads = sorted({t for _, _, t in cells})
    feeds = [f for f in FEEDS if any(k[0] == f for k in cells)]

    print("ceilings: " + ", ".join(f"{n} {c['gbps']:.2f} GB/s" for n, c in ceilings.items()))
    for mode in modes:
        print(f"\n{mode}: GB/s into the device's tensors (waiting share), by reading threads; medians of the later epochs")
        print(f"{'feed':<12} {'path':<6} " + " ".join(f"{str(t) + ' thread(s)':>20}" for t in threads))
        for feed in feeds:
            row = [cells.get((feed, mode, t)) for t in threads]
            path = next(c.path for c in row if c)
            print(f"{feed:<12} {path:<6} " + " ".join(
                f"{f'{c.gbps:.3f} ({c.waiting:.0%})':>20}" if c else f"{'-':>20}" for c in row))
        best = {f: max((c for (cf, cm, _), c in cells.items() if cf == f and cm == mode), key=lambda c: c.gbps)
                for f in feeds}
        for feed in feeds:
            b = best[feed]
            ratios = [f"{b.gbps / c['gbps']:.2f}x {n}" for n, c in ceilings.items()]
            ratios += [f"{b.gbps / best[o].gbps:.2f}x {o}" for o in feeds if o != feed]
            print(f"  best {feed:<12} {b.gbps:.3f} GB/s [{b.min:.3f} .. {b.max:.3f}]: " + ", ".join(ratios))

    entries = []

    def entry(name: str, unit: str, value: float, base_name: str, base_value: float) -> None:
        entries.append({"name": f"trainer_gpu.{name}", "unit": unit, "value": six(value),
                        "baseline_name": f"trainer_gpu.{base_name}", "baseline_value": six(base_value)})

    for name in ("h2d_pageable", "h2d_pinned"):
        if name in ceilings:
            entry(f"ceiling.{name}", "GB/s", ceilings[name]["gbps"], "ceiling.memcpy", ceilings["memcpy"]["gbps"])
    for (feed, mode, t), c in sorted(cells.items()):
        cell = f"{key(feed)}.{key(mode)}.p{t}"
        entry(f"{cell}.delivered", "GB/s", c.gbps, "ceiling.h2d_pageable", ceilings["h2d_pageable"]["gbps"])
        for other in FEEDS[FEEDS.index(feed) + 1:]:
            theirs = cells.get((other, mode, t))
            if theirs is None:
                continue
            base = f"{key(other)}.{key(mode)}.p{t}"
            entry(f"{cell}.delivered.against_{key(other)}", "GB/s", c.gbps, f"{base}.delivered", theirs.gbps)
            entry(f"{cell}.waiting_share.against_{key(other)}", "ratio", c.waiting, f"{base}.waiting_share",
                  theirs.waiting)
    text = "[\n" + ",\n".join("  " + json.dumps(e) for e in entries) + "\n]\n"
    for path in [out / "trainer-gpu.json", *(pathlib.Path(p) for p in argv[1:])]:
        path.write_text(text)
        print("wrote", path)

    seen = set().union(*digests.values())
    if len(seen) != 1:
        print("the runs read DIFFERENT rows: " + "; ".join(f"{n}: {sorted(d)}" for n, d in digests.items()),
              file=sys.stderr)
        return 1
    print(f"same rows in every run and epoch: digest {seen.pop()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
