"""The order in which an epoch visits a table's shards, exactly as the Java loader draws it.

This mirrors ``io.sluice.flight.loader.EpochOrder``, ``EpochPlan`` and ``Cursor`` bit for bit: for
the same (seed, epoch, rank, world size) a Python reader and a Java ``FlightLoader`` read the same
shards in the same order, so trainers in both languages can share one table and one checkpoint.

* The permutation of ``0..shards-1`` for an epoch is a Fisher-Yates shuffle (from the last index
  down) driven by ``java.util.SplittableRandom`` seeded with
  ``seed ^ (0x9e3779b97f4a7c15 * (epoch + 1))`` (64-bit wrap-around). :class:`SplittableRandom`
  reimplements the JDK's generator and its ``nextInt(bound)`` rejection rule.
* Rank ``r`` of ``world`` reads positions ``r, r + world, r + 2 world, ...`` of that permutation.
* DataLoader worker ``w`` of ``W`` (a Python addition; the Java loader reads with threads, not
  processes) reads positions ``w, w + W, ...`` of its rank's list: :func:`for_worker`. Every
  shard is still read exactly once per epoch, and worker 0 with ``W == 1`` is the rank itself.

A :class:`Cursor` counts positions in the rank's list, as in Java; a worker's cursor counts the
same positions (it only ever stands on its own ones). Everything here is pure and thread safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, NamedTuple, Optional

__all__ = [
    "SplittableRandom",
    "Cursor",
    "Step",
    "EpochPlan",
    "permutation",
    "for_rank",
    "for_worker",
    "check_rank",
]

_MASK64 = (1 << 64) - 1
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15


class SplittableRandom:
    """``java.util.SplittableRandom`` (JDK 8 to 21): the generator, not its ``split``.

    Only what ``EpochOrder`` uses: the seeded constructor, ``next_int()`` and ``next_int(bound)``.
    Arithmetic wraps at 64 bits as Java's ``long`` does. Not thread safe.
    """

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        # new SplittableRandom(seed) uses the golden gamma as its increment.
        self._seed = seed & _MASK64

    def _next_seed(self) -> int:
        self._seed = (self._seed + _GOLDEN_GAMMA) & _MASK64
        return self._seed

    @staticmethod
    def _mix32(z: int) -> int:
        """The top 32 bits of the mix, as an unsigned value (Java casts it to int)."""
        z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & _MASK64
        return (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & _MASK64) >> 32

    def next_int(self, bound: Optional[int] = None) -> int:
        """``nextInt()`` (a signed 32-bit value) or ``nextInt(bound)`` (in ``[0, bound)``)."""
        r = self._mix32(self._next_seed())
        if bound is None:
            return r - (1 << 32) if r >= 1 << 31 else r
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        m = bound - 1
        if bound & m == 0:
            return r & m
        # Java: for (u = r >>> 1; u + m - (r = u % bound) < 0; u = nextInt() >>> 1); the sum
        # overflows int (goes negative) exactly when it reaches 2^31.
        u = r >> 1
        while True:
            r = u % bound
            if u + m - r < 1 << 31:
                return r
            u = self._mix32(self._next_seed()) >> 1


def check_rank(rank: int, world: int) -> None:
    if world < 1 or rank < 0 or rank >= world:
        raise ValueError(
            f"rank must be in [0, world size) and the world size >= 1, got rank {rank} of {world}"
        )


def permutation(shards: int, seed: int, epoch: int) -> List[int]:
    """The permutation of ``0..shards-1`` epoch ``epoch`` visits (``EpochOrder.permutation``)."""
    if shards < 0 or epoch < 0:
        raise ValueError(f"shards and epoch are >= 0, got {shards} and {epoch}")
    order = list(range(shards))
    random = SplittableRandom(seed ^ ((_GOLDEN_GAMMA * (epoch + 1)) & _MASK64))
    for i in range(shards - 1, 0, -1):
        j = random.next_int(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def for_rank(shards: int, seed: int, epoch: int, rank: int, world: int) -> List[int]:
    """The shard indices rank ``rank`` of ``world`` reads in ``epoch``, in order (``EpochOrder.forRank``)."""
    check_rank(rank, world)
    return permutation(shards, seed, epoch)[rank::world]


def for_worker(mine: List[int], worker: int, workers: int) -> List[int]:
    """The positions of a rank's list ``mine`` that worker ``worker`` of ``workers`` reads.

    Positions, not shard indices: ``[p for p in range(len(mine)) if p % workers == worker]``.
    """
    if workers < 1 or worker < 0 or worker >= workers:
        raise ValueError(f"worker must be in [0, workers) and workers >= 1, got {worker} of {workers}")
    return list(range(worker, len(mine), workers))


@dataclass(frozen=True, order=True)
class Cursor:
    """Where one rank stands: the epoch, and how many of the rank's shards of it were consumed.

    The text form is ``epoch:position``, as Java's ``Cursor`` writes it for a checkpoint file.
    """

    epoch: int = 0
    position: int = 0

    def __post_init__(self) -> None:
        if self.epoch < 0 or self.position < 0:
            raise ValueError(
                f"a cursor's epoch and position are >= 0, got {self.epoch}:{self.position}"
            )

    @classmethod
    def parse(cls, text: str) -> "Cursor":
        parts = text.strip().split(":")
        if len(parts) != 2:
            raise ValueError(f"a cursor is written epoch:position, got '{text}'")
        try:
            epoch, position = int(parts[0]), int(parts[1])
        except ValueError as e:
            raise ValueError(
                f"a cursor is written epoch:position with integers, got '{text}'"
            ) from e
        return cls(epoch, position)

    def advance(self) -> "Cursor":
        return Cursor(self.epoch, self.position + 1)

    def next_epoch(self) -> "Cursor":
        return Cursor(self.epoch + 1, 0)

    def __str__(self) -> str:
        return f"{self.epoch}:{self.position}"


Cursor.START = Cursor(0, 0)  # type: ignore[attr-defined]


class Step(NamedTuple):
    """One step of a plan: a shard to read at a cursor, or (``shard`` None) the end of its epoch."""

    cursor: Cursor
    shard: Optional[int]

    @property
    def is_epoch_end(self) -> bool:
        return self.shard is None


class EpochPlan:
    """The steps one rank takes from a cursor on, as Java's ``EpochPlan``: each of its shards of an
    epoch, then that epoch's end, then the next epoch, up to ``epochs`` epochs. Iterable once.
    Not thread safe.
    """

    def __init__(
        self, shards: int, seed: int, rank: int, world: int, epochs: int, start: Cursor = Cursor()
    ) -> None:
        check_rank(rank, world)
        self._shards, self._seed, self._rank, self._world = shards, seed, rank, world
        self._epochs = epochs
        self._next = start
        self._mine: List[int] = []
        if start.epoch < epochs:
            self._mine = for_rank(shards, seed, start.epoch, rank, world)
            if start.position > len(self._mine):
                raise ValueError(
                    f"cursor {start} is past the {len(self._mine)} shards rank {rank} of {world}"
                    f" reads in epoch {start.epoch}"
                )

    def has_next(self) -> bool:
        return self._next.epoch < self._epochs

    def __iter__(self) -> Iterator[Step]:
        while self.has_next():
            at = self._next
            if at.position < len(self._mine):
                self._next = at.advance()
                yield Step(at, self._mine[at.position])
                continue
            self._next = at.next_epoch()
            if self._next.epoch < self._epochs:
                self._mine = for_rank(
                    self._shards, self._seed, self._next.epoch, self._rank, self._world
                )
            yield Step(at, None)
