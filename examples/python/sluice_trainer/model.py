"""``FeatureMLP``: click-to-buy prediction from the scaled features and the history embedding."""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import torch
from torch import nn

__all__ = ["FeatureMLP", "inputs"]


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


def inputs(batch: Dict[str, torch.Tensor], features: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The model's inputs and target from a batch of the feature table: the ``f0``..
    columns as one float32 matrix, the embedding, and the label as float32."""
    x = torch.stack([batch[f"f{i}"] for i in range(features)], dim=1).float()
    return x, batch["embedding"], batch["label"].float()
