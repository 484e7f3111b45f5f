"""Per-prompt encodings stacked into one batch: the inverse of
``implicit_bench.debias.steering.split_batch``, which only the tests need (they build batches
of prompts of different lengths)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from implicit_bench.debias.steering import Encoding


def stack_batch(encodings: Sequence[Encoding]) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-prompt encodings -> (B, L, D) and (B, L) masks, right-padded with zeros to the
    longest; masks are None when no encoding has one (and all lengths agree)."""
    length = max(e.embeds.shape[0] for e in encodings)
    width = encodings[0].embeds.shape[1]
    first = encodings[0].embeds
    embeds = torch.zeros(len(encodings), length, width, dtype=first.dtype, device=first.device)
    has_mask = any(e.mask is not None for e in encodings) or any(
        e.embeds.shape[0] != length for e in encodings
    )
    mask = (
        torch.zeros(len(encodings), length, dtype=torch.long, device=first.device)
        if has_mask
        else None
    )
    for i, enc in enumerate(encodings):
        embeds[i, : enc.embeds.shape[0]] = enc.embeds
        if mask is not None:
            m = enc.mask if enc.mask is not None else mask.new_ones(enc.embeds.shape[0])
            mask[i, : enc.embeds.shape[0]] = m.to(mask.dtype)
    return embeds, mask
