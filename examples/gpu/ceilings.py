"""The ceilings examples/gpu/run judges the feeds against: ``python3 examples/gpu/ceilings.py
--device cuda --out FILE``.

* ``memcpy``: one thread copying host memory (NumPy's ``copyto`` between two 256 MiB arrays), what
  a feed that copies each byte once on one thread could reach at best;
* ``h2d_pageable``: torch copying a 256 MiB tensor from ordinary (pageable) host memory into a
  tensor on the device, as the trainer's ``.to(device)`` does with the feeds' batches;
* ``h2d_pinned``: the same from page-locked host memory (``pin_memory()``), asynchronous, synchronized
  after each copy: the link's ceiling. Only with CUDA.

Each is copied ``--copies`` times a sample (the first sample warms up and is dropped); the figure is
the median sample's GB/s, with the spread. Written as JSON ``{name: {"gbps", "min", "max"}}`` (a
ceiling that cannot be measured on this device is left out, and said so).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time
from typing import Callable, Dict, List

import numpy as np
import torch

COPY_BYTES = 256 << 20


def rate(copy: Callable[[], None], nbytes: int, copies: int, samples: int) -> Dict[str, float]:
    seen: List[float] = []
    for s in range(samples + 1):
        t0 = time.perf_counter()
        for _ in range(copies):
            copy()
        gbps = copies * nbytes / (time.perf_counter() - t0) / 1e9
        if s > 0:
            seen.append(gbps)
    return {"gbps": statistics.median(seen), "min": min(seen), "max": max(seen)}


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="examples/gpu/ceilings.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", help="the trainer's device: cuda, or cpu (no pinned ceiling)")
    p.add_argument("--copies", type=int, default=8, help="copies of 256 MiB a sample")
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--out", type=pathlib.Path, required=True)
    a = p.parse_args(argv)
    device = torch.device(a.device)
    figures: Dict[str, Dict[str, float]] = {}

    src, dst = np.ones(COPY_BYTES, np.uint8), np.zeros(COPY_BYTES, np.uint8)
    figures["memcpy"] = rate(lambda: np.copyto(dst, src), COPY_BYTES, a.copies, a.samples)
    del src, dst

    def synchronized(copy: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            copy()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        return run

    host = torch.ones(COPY_BYTES, dtype=torch.uint8)
    target = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
    figures["h2d_pageable"] = rate(synchronized(lambda: target.copy_(host)), COPY_BYTES, a.copies, a.samples)
    if device.type == "cuda":
        pinned = host.pin_memory()
        figures["h2d_pinned"] = rate(synchronized(lambda: target.copy_(pinned, non_blocking=True)), COPY_BYTES,
                                     a.copies, a.samples)
    else:
        print(f"[ceilings] h2d_pinned: not measured on {device} (page-locked memory needs CUDA)")
    for name, f in figures.items():
        print(f"[ceilings] {name:<13} {f['gbps']:8.2f} GB/s [{f['min']:.2f} .. {f['max']:.2f}] on {device}")
    a.out.write_text(json.dumps({"device": str(device), "ceilings": figures}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
