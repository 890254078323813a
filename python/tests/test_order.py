"""sluice.order against itself and against the Java loader's EpochOrder / EpochPlan."""

from __future__ import annotations

import itertools

import pytest

from sluice import order
from sluice.order import Cursor, EpochPlan, SplittableRandom


def test_splittable_random_vectors():
    # java.util.SplittableRandom(42).nextInt(), three times (bounded draws are checked against Java below).
    r = SplittableRandom(42)
    assert [r.next_int() for _ in range(3)] == [-491277234, 909395113, -1877322334]
    assert all(0 <= SplittableRandom(s).next_int(7) < 7 for s in range(100))
    with pytest.raises(ValueError):
        SplittableRandom(1).next_int(0)


@pytest.mark.parametrize("shards,seed,epoch", [(0, 1, 0), (1, 1, 0), (10, 7, 0), (33, -5, 4), (100, 2**63 - 1, 9)])
def test_permutation_is_a_permutation(shards, seed, epoch):
    assert sorted(order.permutation(shards, seed, epoch)) == list(range(shards))


@pytest.mark.parametrize("world", [1, 2, 3, 5])
def test_ranks_and_workers_read_every_shard_once(world):
    seen = []
    for rank in range(world):
        mine = order.for_rank(23, 3, 1, rank, world)
        assert abs(len(mine) - 23 // world) <= 1
        positions = [p for w in range(3) for p in order.for_worker(mine, w, 3)]
        assert sorted(positions) == list(range(len(mine)))
        seen += mine
    assert sorted(seen) == list(range(23))


def test_epochs_differ():
    assert order.permutation(20, 7, 0) != order.permutation(20, 7, 1)


def test_bad_arguments_are_refused():
    for bad in [(0, 0), (-1, 2), (2, 2)]:
        with pytest.raises(ValueError, match="rank must be in"):
            order.for_rank(5, 0, 0, *bad)
    with pytest.raises(ValueError):
        order.permutation(-1, 0, 0)
    with pytest.raises(ValueError):
        order.for_worker([1, 2], 2, 2)
    with pytest.raises(ValueError, match="past the"):
        EpochPlan(5, 0, 0, 2, 1, Cursor(0, 4))


def test_cursor_text_form():
    assert Cursor.parse(" 3:14 ") == Cursor(3, 14)
    assert str(Cursor(3, 14)) == "3:14"
    for bad in ["3", "a:b", "1:-1"]:
        with pytest.raises(ValueError):
            Cursor.parse(bad)


SEEDS = [0, 7, -1, 42, 2**63 - 1, -(2**63), 123456789012345]
SHARD_COUNTS = [1, 2, 7, 16, 31, 100]


def test_order_matches_java(java):
    questions = {}
    for shards, seed, epoch, world in itertools.product(SHARD_COUNTS, SEEDS, [0, 1, 5], [1, 2, 3]):
        for rank in range(world):
            questions[f"rank:{shards},{seed},{epoch},{rank},{world}"] = order.for_rank(shards, seed, epoch, rank, world)
    lines = java("io.sluice.flight.loader.PrintEpochOrder", *questions)
    assert len(lines) == len(questions)
    for line in lines:
        question, answer = line.split("=", 1)
        assert [int(s) for s in answer.split()] == questions[question], question


def _plan_text(plan: EpochPlan) -> str:
    return " ".join(f"{s.cursor}={'end' if s.is_epoch_end else s.shard}" for s in plan)


def test_plan_matches_java(java):
    questions = {}
    for shards, seed, world, epochs, start in itertools.product(
        [1, 5, 12], [3, -9], [1, 2, 3], [1, 3], ["0:0", "0:1", "1:2", "2:0"]
    ):
        for rank in range(world):
            cursor = Cursor.parse(start)
            if cursor.epoch < epochs and cursor.position > len(order.for_rank(shards, seed, cursor.epoch, rank, world)):
                continue
            q = f"plan:{shards},{seed},{rank},{world},{epochs},{start}"
            questions[q] = _plan_text(EpochPlan(shards, seed, rank, world, epochs, cursor))
    lines = java("io.sluice.flight.loader.PrintEpochOrder", *questions)
    assert len(lines) == len(questions)
    for line in lines:
        question, answer = line.split("=", 1)
        assert answer.strip() == questions[question], question
