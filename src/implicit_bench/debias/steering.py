"""Embedding steering (Section 5.1, Appendix C.5; definitions note).

The generator's own prompt encoder gives one vector per token (the tensor the pipeline feeds
its denoiser). A steering direction d = Enc(t_a) - Enc(t_s) is computed in float32 from a
stereotype text t_s and an anti-stereotype text t_a, and the image is generated from
Enc(p_n) + alpha * d with the neutral prompt's attention mask.

- Token-level signals (full unit, LLM pair, explicit prompts): the real tokens of Enc(t_s) and
  Enc(t_a) (attention mask = 1), the shorter right-padded with zeros; d = a - s, then
  zero-padded or truncated to the neutral prompt's token length (its real tokens); positions
  past that (batch padding of the neutral encoding) get no shift.
- Attributes signal: each attribute's token embeddings mean-pooled over its mask to one vector;
  d = anti - stereo, broadcast over all positions of the neutral encoding.

An encoder without a mask (fixed-length encoders) counts every position as a real token.
Every tensor made here is made on the device of the encodings it is computed from (``new_zeros``
and friends, never a factory call on the default device): on a GPU the directions, the masks
and the steered encodings stay on the pipeline's device (tests/unit/debias/test_steering_device.py).
Pooled text embeddings that some pipelines also take (SD3) are left as the neutral prompt's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import torch

from implicit_bench.errors import InputError

TOKEN_SIGNALS = ("full_unit", "llm_pair", "explicit")


@dataclass(frozen=True)
class Encoding:
    """One prompt's encoder output: ``embeds`` (L, D); ``mask`` (L,) 1 for real tokens or None;
    ``extra``: other tensors the pipeline needs (e.g. pooled embeddings), passed through."""

    embeds: torch.Tensor
    mask: torch.Tensor | None = None
    extra: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.embeds.dim() != 2:
            raise ValueError(
                f"expected (tokens, dim) embeddings, got shape {tuple(self.embeds.shape)}"
            )
        if self.mask is not None and self.mask.shape != self.embeds.shape[:1]:
            raise ValueError(
                f"mask shape {tuple(self.mask.shape)} does not match {tuple(self.embeds.shape)}"
            )

    @property
    def n_tokens(self) -> int:
        """Real tokens: positions with mask 1 (all positions without a mask)."""
        return int(self.embeds.shape[0] if self.mask is None else self.mask.bool().sum())

    def real(self) -> torch.Tensor:
        """The real tokens' vectors in float32, (n_tokens, D)."""
        embeds = self.embeds.float()
        return embeds if self.mask is None else embeds[self.mask.bool()]


def token_direction(stereo: Encoding, anti: Encoding, length: int) -> torch.Tensor:
    """d = Enc(t_a) - Enc(t_s) with the shorter right-padded with zeros, then zero-padded or
    truncated to ``length`` positions; float32, (length, D)."""
    s, a = stereo.real(), anti.real()
    if s.shape[1] != a.shape[1]:
        raise ValueError(f"embedding widths differ: {s.shape[1]} vs {a.shape[1]}")
    width = max(s.shape[0], a.shape[0])
    padded_s = s.new_zeros(width, s.shape[1])
    padded_a = a.new_zeros(width, a.shape[1])
    padded_s[: s.shape[0]] = s
    padded_a[: a.shape[0]] = a
    d = padded_a - padded_s
    out = d.new_zeros(length, d.shape[1])
    keep = min(length, width)
    out[:keep] = d[:keep]
    return out


def pooled_direction(stereo: Encoding, anti: Encoding) -> torch.Tensor:
    """d = meanpool(Enc(anti)) - meanpool(Enc(stereo)) over real tokens; float32, (D,)."""
    s, a = stereo.real(), anti.real()
    if s.shape[0] == 0 or a.shape[0] == 0:
        raise ValueError("cannot mean-pool an encoding without real tokens")
    return a.mean(dim=0) - s.mean(dim=0)


def direction(signal: str, neutral: Encoding, stereo: Encoding, anti: Encoding) -> torch.Tensor:
    """The shift to add to ``neutral.embeds``, float32, same (L, D) shape."""
    length, width = neutral.embeds.shape
    if signal == "attributes":
        return (
            pooled_direction(stereo, anti).to(neutral.embeds.device).expand(length, width).clone()
        )
    if signal not in TOKEN_SIGNALS:
        raise ValueError(f"unknown steering signal '{signal}'")
    d = token_direction(stereo, anti, neutral.n_tokens).to(neutral.embeds.device)
    full = d.new_zeros(length, width)
    if neutral.mask is None:
        full[: d.shape[0]] = d
    else:
        # the neutral prompt's real tokens are its first n_tokens positions (right padding)
        positions = torch.nonzero(neutral.mask.bool(), as_tuple=False).flatten()
        full[positions] = d
    return full


def steer(neutral: Encoding, d: torch.Tensor, alpha: float) -> Encoding:
    """Enc(p_n) + alpha * d, computed in float32 and cast back to the encoder's dtype; the
    neutral prompt's mask and extra tensors are kept."""
    if d.shape != neutral.embeds.shape:
        raise ValueError(
            f"direction shape {tuple(d.shape)} != encoding shape {tuple(neutral.embeds.shape)}"
        )
    shifted = neutral.embeds.float() + float(alpha) * d.to(neutral.embeds.device)
    return replace(neutral, embeds=shifted.to(neutral.embeds.dtype))


# ----- steering texts ---------------------------------------------------------------------------
def _text(unit: Mapping[str, Any], field: str) -> str:
    value = unit.get(field)
    if value is None or (isinstance(value, float) and value != value) or not str(value).strip():
        raise InputError("units", unit.get("unit_id"), field, "needed for steering but missing")
    return str(value).strip()


def steering_texts(
    unit: Mapping[str, Any], signal: str, llm_pair: tuple[str, str] | None = None
) -> tuple[str, str]:
    """(t_s, t_a) of a unit for a signal (Table 6):

    - full unit: ``"{head}, {relation}, {tail}"`` (no relation: ``"{head}, {tail}"``);
    - attributes: the bare tails (several tails: joined with ", ", as in the units table);
    - LLM pair: the two prompts the LLM wrote for the unit (F.6);
    - explicit prompts: the unit's stereotype and anti-stereotype prompts.
    """
    if signal == "full_unit":
        head = _text(unit, "head")
        relation = unit.get("relation")
        has_relation = relation is not None and relation == relation and str(relation).strip()
        prefix = f"{head}, {str(relation).strip()}, " if has_relation else f"{head}, "
        return prefix + _text(unit, "stereotype"), prefix + _text(unit, "anti_stereotype")
    if signal == "attributes":
        return _text(unit, "stereotype"), _text(unit, "anti_stereotype")
    if signal == "explicit":
        return _text(unit, "prompt_stereotype"), _text(unit, "prompt_anti_stereotype")
    if signal == "llm_pair":
        if llm_pair is None or not all(t and t.strip() for t in llm_pair):
            raise InputError(
                "llm pairs",
                unit.get("unit_id"),
                "llm_pair",
                "no valid LLM sentence pair for this unit",
            )
        return llm_pair[0].strip(), llm_pair[1].strip()
    raise ValueError(f"unknown steering signal '{signal}'")


# ----- batches ------------------------------------------------------------------------------------
def split_batch(embeds: torch.Tensor, mask: torch.Tensor | None) -> list[Encoding]:
    """(B, L, D) + (B, L) -> B per-prompt encodings (each keeps the batch length L)."""
    return [Encoding(embeds[i], None if mask is None else mask[i]) for i in range(embeds.shape[0])]
