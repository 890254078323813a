"""``python -m sluice_trainer.to_parquet --run-dir DIR --out FOLDER``: the table the run in DIR
published, written as Parquet into FOLDER (one file a shard: ``feeds.write_parquet``), so that
``--feed parquet --parquet FOLDER`` reads the same rows where no pipeline wrote Parquet files (a
table served by ``ServeFeatureTable``, as ``examples/gpu/run`` does). Reads with the catalog's
tokens only, as ``--feed flight-grpc`` does: no secret."""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import List

from .feeds import write_parquet


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m sluice_trainer.to_parquet", description=__doc__.split("\n\n")[0])
    p.add_argument("--run-dir", type=pathlib.Path, required=True, help="the run's directory (driver.properties)")
    p.add_argument("--out", type=pathlib.Path, required=True, help="the folder to write; must not exist")
    p.add_argument("--row-group-rows", type=int, help="rows a row group (default: a shard's rows, one row group a file)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    rows = write_parquet(a.run_dir, a.out, a.row_group_rows)
    size = sum(f.stat().st_size for f in a.out.iterdir())
    print(f"[to_parquet] {rows:,} rows in {len(list(a.out.iterdir()))} files, {size / 1e6:.1f} MB,"
          f" in {time.perf_counter() - t0:.1f} s: {a.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
