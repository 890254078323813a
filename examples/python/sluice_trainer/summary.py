"""The main job's summary: ``python -m sluice_trainer.summary RESULTS_JSON RUN_DIR...``.

Each run directory is named ``N-CONFIG`` (CONFIG one of ``sluice``, ``flight-grpc``, ``parquet``;
N its place in the alternated order) and holds the driver's ``driver.properties``, the MLP
trainer's report ``mlp.json`` and the ``--no-model`` trainer's ``feed.json``. Prints per
configuration the median and spread of each figure and the ratios of sluice to each baseline,
the epochs after which sluice is ahead end to end and a 50-epoch projection from the measured
one-time and per-epoch parts; writes the medians to RESULTS_JSON in the shared record shape
(parquet the baseline; records against flight-grpc named ``...vs_flight_grpc``). Exits 1 when
the runs' digests differ.
"""

from __future__ import annotations

import json
import math
import pathlib
import statistics
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List

from . import properties
from .feeds import FEEDS

PROJECTED_EPOCHS = 50


@dataclass
class Run:
    name: str
    config: str
    driver: Dict[str, str]
    mlp: dict
    feed: dict

    @classmethod
    def load(cls, d: pathlib.Path) -> "Run":
        config = d.name.split("-", 1)[1]
        if config not in FEEDS:
            raise ValueError(f"a run directory is named N-<{'|'.join(FEEDS)}>, got {d}")
        return cls(d.name, config, properties.load(d / "driver.properties"),
                   json.loads((d / "mlp.json").read_text()), json.loads((d / "feed.json").read_text()))

    def ms(self, key: str) -> float:
        return float(self.driver[key])

    # The figures, in seconds unless named otherwise.
    def spark(self) -> float:
        return self.ms("featuresMs") / 1e3

    def handoff(self) -> float:
        return (self.mlp["first_batch_ms"] - self.ms("featuresComputedMs")) / 1e3

    def feed_epoch(self) -> float:
        return statistics.median(e["wall_s"] for e in self.feed["epochs"])

    def feed_gbps(self) -> float:
        e = self.feed["epochs"]
        return statistics.median(x["bytes"] / x["wall_s"] for x in e) / 1e9

    def wait_share(self) -> float:
        e = self.mlp["epochs"]
        return sum(x["wait_s"] for x in e) / sum(x["wall_s"] for x in e)

    def mlp_epoch(self) -> float:
        return statistics.median(e["wall_s"] for e in self.mlp["epochs"])

    def end_to_end(self) -> float:
        return (self.mlp["end_ms"] - self.ms("startedMs")) / 1e3

    def one_time(self) -> float:
        """What runs once: the measured end to end less the epochs at their median time."""
        return self.end_to_end() - len(self.mlp["epochs"]) * self.mlp_epoch()

    def projected(self) -> float:
        return self.one_time() + PROJECTED_EPOCHS * self.mlp_epoch()


@dataclass
class Figure:
    key: str
    label: str
    unit: str
    fmt: str
    value: Callable[[Run], float]


FIGURES = [
    Figure("spark", "Spark: raw events -> features computed", "s", "%.1f", Run.spark),
    Figure("handoff", "hand-off: features computed -> first batch", "s", "%.2f", Run.handoff),
    Figure("feed_epoch", "feed time per epoch (--no-model)", "s", "%.3f", Run.feed_epoch),
    Figure("feed_no_model", "feed rate (--no-model)", "GB/s", "%.3f", Run.feed_gbps),
    Figure("mlp_epoch", "epoch with the MLP step", "s", "%.3f", Run.mlp_epoch),
    Figure("trainer_wait_share", "trainer's waiting share, MLP step", "share", "%.3f", Run.wait_share),
    Figure("end_to_end", "end to end: raw events -> last epoch's end", "s", "%.1f", Run.end_to_end),
    Figure(f"end_to_end_{PROJECTED_EPOCHS}_epochs_projected",
           f"end to end at {PROJECTED_EPOCHS} epochs (projection)", "s", "%.1f", Run.projected),
]


def median_figures(runs: List[Run]) -> Dict[str, float]:
    return {f.key: statistics.median(f.value(r) for r in runs) for f in FIGURES} | {
        "one_time": statistics.median(r.one_time() for r in runs)}


def ahead(sluice: Dict[str, float], other: Dict[str, float]) -> str:
    """When sluice's end to end, one-time part + epochs x per-epoch time, is the shorter."""
    penalty = sluice["one_time"] - other["one_time"]  # what sluice costs more once (negative: saves)
    saving = other["mlp_epoch"] - sluice["mlp_epoch"]  # what it saves each epoch
    if saving > 0:
        return f"ahead from epoch {max(1, math.floor(penalty / saving) + 1)} on"
    if saving == 0 or penalty >= saving:
        return "ahead at every number of epochs" if penalty < 0 else "ahead at no number of epochs"
    last = math.ceil(penalty / saving) - 1  # N * saving > penalty holds while N < penalty / saving
    return f"ahead up to epoch {last}, behind after"


def main(argv: List[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m sluice_trainer.summary RESULTS_JSON RUN_DIR...", file=sys.stderr)
        return 2
    out = pathlib.Path(argv[0])
    runs = [Run.load(pathlib.Path(d)) for d in argv[1:]]
    by = {c: [r for r in runs if r.config == c] for c in FEEDS}
    missing = [c for c, rs in by.items() if not rs]
    if missing:
        print(f"the summary needs runs of every configuration; none of {missing}", file=sys.stderr)
        return 2
    first = runs[0]
    print()
    print("== Feature pipeline: fair summary ==")
    print(f"table: {int(first.driver['rows']):,} rows (users) from {int(first.driver['events']):,} raw events;"
          f" {first.driver['features']} float64 features + label + a 256-float embedding;"
          f" {first.mlp['epochs'][0]['bytes'] / 1e6:.1f} MB of tensors per epoch; {len(first.mlp['epochs'])} epochs"
          f" with the MLP ({first.mlp['device']}), {len(first.feed['epochs'])} without")
    print("order of runs: " + " ".join(r.name for r in runs))
    for c, rs in by.items():
        r = rs[0]
        print(f"  {c}: shuffle manager {r.driver['shuffleManager']}; hand-off {r.driver['flightDataPlane']};"
              f" trainer's path {r.mlp['path']}")
    med = {c: median_figures(rs) for c, rs in by.items()}
    print(f"\n{'median [min .. max] per configuration':<44} " + " ".join(f"{c:<26}" for c in FEEDS)
          + "sluice/parquet  sluice/flight-grpc")
    for f in FIGURES:
        cells = []
        for c in FEEDS:
            v = [f.value(r) for r in by[c]]
            cells.append(f"{(f.fmt % med[c][f.key])} [{f.fmt % min(v)} .. {f.fmt % max(v)}] {f.unit}")
        ratios = [med["sluice"][f.key] / med[b][f.key] if med[b][f.key] else float("nan")
                  for b in ("parquet", "flight-grpc")]
        print(f"{f.label:<44} " + " ".join(f"{c:<26}" for c in cells) + f"{ratios[0]:.2f}x{'':<10} {ratios[1]:.2f}x")
    for b in ("parquet", "flight-grpc"):
        print(f"sluice vs {b}: one-time part {med['sluice']['one_time']:.1f} s vs {med[b]['one_time']:.1f} s, per"
              f" epoch {med['sluice']['mlp_epoch']:.3f} s vs {med[b]['mlp_epoch']:.3f} s; end to end"
              f" {ahead(med['sluice'], med[b])}; projected at {PROJECTED_EPOCHS} epochs: {med['sluice'][FIGURES[-1].key] / med[b][FIGURES[-1].key]:.2f}x")
    records = []
    for f in FIGURES:
        name = f"pipeline.{f.key}"
        records.append({"name": name, "unit": f.unit, "value": round(med["sluice"][f.key], 6),
                        "baseline_name": f"parquet.{name}", "baseline_value": round(med["parquet"][f.key], 6)})
    for f in FIGURES:
        name = f"pipeline.{f.key}"
        records.append({"name": f"{name}.vs_flight_grpc", "unit": f.unit, "value": round(med["sluice"][f.key], 6),
                        "baseline_name": f"flight-grpc.{name}", "baseline_value": round(med["flight-grpc"][f.key], 6)})
    out.write_text("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")
    print(f"medians written to {out}")
    seen = {(r.name, kind): {e["digest"] for e in getattr(r, kind)["epochs"]} for r in runs for kind in ("mlp", "feed")}
    digests = set().union(*seen.values())
    if len(digests) != 1:
        print("the configurations read DIFFERENT features: " + "; ".join(
            f"{name} {kind}: {sorted(d)}" for (name, kind), d in seen.items()), file=sys.stderr)
        return 1
    print(f"same features in every run and epoch: yes (digest {digests.pop()})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
