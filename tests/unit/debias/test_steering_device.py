"""Steering makes every tensor on its inputs' device and keeps the encoder's dtype.

A GPU run would be the first to hit a tensor built on the default device (the CPU) next to
the pipeline's CUDA tensors. Here the default device is switched to ``meta`` while the
inputs live on the CPU: any tensor the steering code creates without naming a device lands
on ``meta``, and combining it with the CPU inputs fails or leaves a ``meta`` result, so this
test catches on a CPU machine what only a GPU would otherwise show.
"""

from __future__ import annotations

import pytest
import torch

from implicit_bench.debias.steering import Encoding, direction, split_batch, steer
from tests.helpers.steering import stack_batch

SIGNALS = ("full_unit", "llm_pair", "explicit", "attributes")


def _encodings(dtype: torch.dtype) -> tuple[Encoding, Encoding, Encoding]:
    g = torch.Generator().manual_seed(0)
    neutral = Encoding(torch.randn(6, 4, generator=g).to(dtype), torch.tensor([1, 1, 1, 1, 0, 0]))
    stereo = Encoding(torch.randn(5, 4, generator=g).to(dtype), torch.tensor([1, 1, 1, 0, 0]))
    anti = Encoding(torch.randn(5, 4, generator=g).to(dtype), torch.tensor([1, 1, 1, 1, 1]))
    return neutral, stereo, anti


def _steer_all(neutral: Encoding, stereo: Encoding, anti: Encoding) -> list[torch.Tensor]:
    out = []
    for signal in SIGNALS:
        d = direction(signal, neutral, stereo, anti)
        out += [d, steer(neutral, d, 2.0).embeds]
    embeds, mask = stack_batch([neutral, Encoding(stereo.embeds, None)])
    out += [embeds, mask, *(e.embeds for e in split_batch(embeds, mask))]
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_steering_creates_no_tensor_on_the_default_device(dtype):
    inputs = _encodings(dtype)  # on the CPU
    expected = _steer_all(*inputs)
    with torch.device("meta"):
        got = _steer_all(*inputs)
    for e, g in zip(expected, got, strict=True):
        assert g.device.type == "cpu"
        assert torch.equal(e, g)


def test_direction_is_float32_and_steered_keeps_the_encoder_dtype():
    neutral, stereo, anti = _encodings(torch.bfloat16)
    for signal in SIGNALS:
        d = direction(signal, neutral, stereo, anti)
        assert d.dtype == torch.float32 and d.shape == neutral.embeds.shape
        steered = steer(neutral, d, 1.0)
        assert steered.embeds.dtype == torch.bfloat16
        expected = (neutral.embeds.float() + d).to(torch.bfloat16)
        assert torch.equal(steered.embeds, expected)
    # token signals shift only the neutral prompt's real tokens (mask 1): positions 4, 5 keep
    d = direction("explicit", neutral, stereo, anti)
    assert torch.count_nonzero(d[4:]) == 0
    s_pad = torch.cat([stereo.real(), torch.zeros(2, 4)])
    assert torch.equal(d[:4], (anti.real() - s_pad)[:4])
