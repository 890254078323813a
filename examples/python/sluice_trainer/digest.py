"""``FeatureDigest``: what an epoch read, as 16 hex digits that do not depend on order or batching.

Each column's values are summed as the integers their bits spell (float64 and int64 as int64;
the embedding's float32 pairs as int64, so one sum per pair of dimensions), modulo 2**64; the
digest mixes the row count and the sums in column order. Two readers that delivered the same
rows in any order, split into any batches, agree; a changed, lost or repeated value changes a
sum. Summing is also how ``--no-model`` touches every byte of every tensor.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import torch

__all__ = ["FeatureDigest"]

_MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    z = ((z ^ (z >> 33)) * 0xFF51AFD7ED558CCD) & _MASK
    z = ((z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53) & _MASK
    return z ^ (z >> 33)


def _bits(t: torch.Tensor) -> torch.Tensor:
    """``t``'s bits as int64 values: a 1-D tensor, or one column per 8 bytes of a 2-D tensor's row."""
    if t.dtype == torch.int64:
        return t
    try:
        return t.view(torch.int64)
    except RuntimeError:  # a slice that does not start on an 8-byte boundary
        return t.clone().view(torch.int64)


class FeatureDigest:
    """Sums of one epoch's batches (dicts of column tensors, in the table's column order). Not thread safe."""

    def __init__(self) -> None:
        self.rows = 0
        self._names: Optional[List[str]] = None
        self._sums: Dict[str, torch.Tensor] = {}

    def add(self, batch: Dict[str, torch.Tensor]) -> None:
        names = list(batch)
        if self._names is None:
            self._names = names
        elif names != self._names:
            raise ValueError(f"a batch of columns {names}, the digest started with {self._names}")
        for name, t in batch.items():
            s = _bits(t).sum(dim=0)
            self._sums[name] = s if name not in self._sums else self._sums[name] + s
        self.rows += len(next(iter(batch.values())))

    def value(self) -> str:
        h = _mix(self.rows)
        for name in self._names or []:
            for s in self._sums[name].reshape(-1).tolist():
                h = _mix(h ^ (s & _MASK))
        return f"{h:016x}"
