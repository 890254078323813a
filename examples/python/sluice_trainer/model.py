"""Click-to-buy prediction from the scaled features and the history embedding: ``FeatureMLP``, the
example's small MLP, and ``WideFeatureMLP``, a heavier one (wide residual blocks) whose step takes
long enough on a GPU that the feed can hide behind it."""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import torch
from torch import nn

__all__ = ["FeatureMLP", "WideFeatureMLP", "inputs"]


class FeatureMLP(nn.Module):
    """An MLP over the ``features`` scaled features and the ``dims``-float embedding, concatenated,
    through ReLU layers of ``hidden`` widths to one logit (train with ``BCEWithLogitsLoss``)."""

    def __init__(self, features: int, dims: int = 256, hidden: Sequence[int] = (64, 16)) -> None:
        super().__init__()
        layers = []
        width = features + dims
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, features: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([features, embedding], dim=1)).squeeze(1)


class WideFeatureMLP(nn.Module):
    """The same inputs and output as :class:`FeatureMLP`, through a projection to ``width`` and
    ``blocks`` residual blocks (LayerNorm, Linear, GELU, Linear, added to the block's input), then
    a LayerNorm and one logit. At the default size (1024 wide, 3 blocks: about 6.6 M weights) a
    step costs some 40 MFLOP a row, forward and backward."""

    def __init__(self, features: int, dims: int = 256, width: int = 1024, blocks: int = 3) -> None:
        super().__init__()
        self.project = nn.Linear(features + dims, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))
            for _ in range(blocks)
        )
        self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 1))

    def forward(self, features: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
        h = self.project(torch.cat([features, embedding], dim=1))
        for block in self.blocks:
            h = h + block(h)
        return self.head(h).squeeze(1)


def inputs(batch: Dict[str, torch.Tensor], features: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The model's inputs and target from a batch of the feature table: the ``f0``..
    columns as one float32 matrix, the embedding, and the label as float32."""
    x = torch.stack([batch[f"f{i}"] for i in range(features)], dim=1).float()
    return x, batch["embedding"], batch["label"].float()
