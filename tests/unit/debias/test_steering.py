"""Steering directions on plain tensors: shapes, padding, pooling, broadcast (worked by hand)."""

from __future__ import annotations

import pytest
import torch

from implicit_bench.debias.steering import (
    Encoding,
    direction,
    pooled_direction,
    split_batch,
    steer,
    steering_texts,
    token_direction,
)
from implicit_bench.errors import InputError
from tests.helpers.steering import stack_batch


def _enc(rows, mask=None, dtype=torch.float32):
    return Encoding(torch.tensor(rows, dtype=dtype), None if mask is None else torch.tensor(mask))


S = _enc([[1, 0], [2, 0], [3, 0]])  # 3 tokens
A = _enc([[0, 1], [0, 2], [0, 3], [0, 4], [0, 5]])  # 5 tokens


def test_token_direction_pads_shorter_then_fits_neutral_length():
    # S padded to 5 rows with zeros; d = A - S:
    # [[-1,1],[-2,2],[-3,3],[0,4],[0,5]]
    d4 = token_direction(S, A, 4)  # truncated to 4
    assert d4.tolist() == [[-1, 1], [-2, 2], [-3, 3], [0, 4]]
    d7 = token_direction(S, A, 7)  # zero-padded to 7
    assert d7.tolist() == [[-1, 1], [-2, 2], [-3, 3], [0, 4], [0, 5], [0, 0], [0, 0]]
    assert d7.dtype == torch.float32
    # the same with the stereotype text longer: a shorter anti text is padded instead
    assert token_direction(A, S, 5).tolist() == [[1, -1], [2, -2], [3, -3], [0, -4], [0, -5]]


def test_padding_tokens_of_the_encoder_are_not_real_tokens():
    # stereotype encoded in a padded batch: last 2 positions are padding (mask 0)
    s_padded = _enc([[1, 0], [2, 0], [3, 0], [9, 9], [9, 9]], mask=[1, 1, 1, 0, 0])
    assert s_padded.n_tokens == 3
    assert torch.equal(token_direction(s_padded, A, 4), token_direction(S, A, 4))


def test_direction_on_a_padded_neutral_prompt():
    # neutral prompt: 2 real tokens in a batch padded to 4
    neutral = _enc([[5, 5], [6, 6], [0, 0], [0, 0]], mask=[1, 1, 0, 0])
    d = direction("explicit", neutral, S, A)
    # d fitted to 2 real tokens, no shift on the padding positions
    assert d.tolist() == [[-1, 1], [-2, 2], [0, 0], [0, 0]]
    out = steer(neutral, d, alpha=2.0)
    assert out.embeds.tolist() == [[3, 7], [2, 10], [0, 0], [0, 0]]
    assert torch.equal(out.mask, neutral.mask)


def test_attributes_signal_is_pooled_and_broadcast():
    # mean(S) = [2, 0] over 3 tokens; mean(A) = [0, 3] over 5 tokens; d = [-2, 3]
    s_padded = _enc([[1, 0], [2, 0], [3, 0], [100, 100]], mask=[1, 1, 1, 0])
    assert pooled_direction(s_padded, A).tolist() == [-2, 3]
    neutral = _enc([[5, 5], [6, 6], [7, 7]], mask=[1, 1, 0])
    d = direction("attributes", neutral, s_padded, A)
    assert d.shape == (3, 2)
    assert d.tolist() == [[-2, 3], [-2, 3], [-2, 3]]  # every position of the neutral prompt


def test_alpha_zero_is_the_identity_and_dtype_is_kept():
    neutral = _enc([[0.1, -0.0], [0.3, 0.7]], dtype=torch.bfloat16)
    d = direction("full_unit", neutral, S, A)
    out = steer(neutral, d, alpha=0.0)
    assert out.embeds.dtype == torch.bfloat16
    assert torch.equal(out.embeds, neutral.embeds)
    # the shift itself is computed in float32 and cast once
    half = steer(neutral, d, alpha=0.5)
    expected = (neutral.embeds.float() + 0.5 * d).to(torch.bfloat16)
    assert torch.equal(half.embeds, expected)


def test_batches_round_trip():
    encodings = [_enc([[1, 1], [2, 2]], mask=[1, 1]), _enc([[3, 3]], mask=[1])]
    embeds, mask = stack_batch(encodings)
    assert embeds.shape == (2, 2, 2) and mask.tolist() == [[1, 1], [1, 0]]
    back = split_batch(embeds, mask)
    assert back[1].n_tokens == 1 and back[1].real().tolist() == [[3, 3]]


MOVER = {
    "unit_id": "u1",
    "head": "mover",
    "relation": "has_gender",
    "stereotype": "man",
    "anti_stereotype": "woman",
    "prompt_stereotype": "A man mover helping with relocation.",
    "prompt_anti_stereotype": "A woman mover helping with relocation.",
}


def test_steering_texts_of_table_6():
    assert steering_texts(MOVER, "full_unit") == (
        "mover, has_gender, man",
        "mover, has_gender, woman",
    )
    assert steering_texts(MOVER, "attributes") == ("man", "woman")
    assert steering_texts(MOVER, "explicit") == (
        "A man mover helping with relocation.",
        "A woman mover helping with relocation.",
    )
    assert steering_texts(MOVER, "llm_pair", ("A strong man.", "A confident woman.")) == (
        "A strong man.",
        "A confident woman.",
    )
    no_relation = {**MOVER, "relation": None}
    assert steering_texts(no_relation, "full_unit") == ("mover, man", "mover, woman")
    with pytest.raises(InputError, match="no valid LLM sentence pair"):
        steering_texts(MOVER, "llm_pair", None)
