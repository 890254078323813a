"""The package's exceptions, named like their Java counterparts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .flight.shards import Shard

__all__ = ["SluiceException", "ShardReadException", "UnsupportedColumnException"]


class SluiceException(Exception):
    """Base of every exception this package raises itself."""


class ShardReadException(SluiceException):
    """Reading a shard failed. The dataset that raised it is unusable; one restored from its last
    ``state_dict()`` starts with this shard (``io.sluice.flight.loader.ShardReadException``)."""

    def __init__(self, shard: "Shard", cause: BaseException) -> None:
        super().__init__(f"reading shard {shard} failed: {cause}")
        self.shard = shard


class UnsupportedColumnException(SluiceException, TypeError):
    """A column cannot become a tensor without a copy (strings, nulls, booleans, nested lists),
    or torch has no dtype for it. Leave it out with ``columns=``."""
