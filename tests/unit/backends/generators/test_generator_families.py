"""The prompt-encoder hook on tiny random Qwen-Image and SD3 pipelines (the paper's generators)."""

from __future__ import annotations

import pytest

from implicit_bench.backends.generators import create_generator
from tests.helpers.tiny_pipelines import build_tiny_qwen_image, build_tiny_sd3


@pytest.fixture(scope="module")
def qwen_generator(tmp_path_factory):
    model = build_tiny_qwen_image(tmp_path_factory.mktemp("qwen") / "qwen_image")
    config = {
        "backend": "diffusers", "model": str(model), "device": "cpu", "threads": 1, "steps": 2,
        "true_cfg_scale": 4.0, "negative_prompt": " ", "width": 32, "height": 32, "batch_size": 2,
    }  # fmt: skip
    return create_generator(config)


def test_qwen_encoding_has_the_pipeline_mask_and_round_trips(qwen_generator):
    gen = qwen_generator
    assert gen.family == "qwen" and type(gen.pipe).__name__ == "QwenImagePipeline"
    prompts = ["a nurse", "a nurse who is a man"]
    enc = gen.encode(prompts)
    # byte-level tokenizer: the second prompt is 13 tokens longer; Qwen-Image pads the batch
    # to its longest prompt with zero vectors and mask 0
    lengths = enc.mask.sum(dim=1).tolist()
    assert lengths[1] - lengths[0] == len(prompts[1]) - len(prompts[0]) == 13
    assert enc.embeds.shape[1] == lengths[1] and enc.pooled is None
    assert float(enc.embeds[0, lengths[0] :].abs().sum()) == 0.0
    plain = gen.generate_prompts(prompts, [42, 42])
    again = gen.generate_encoded(gen.encode(prompts), [42, 42])
    assert [i.tobytes() for i in plain] == [i.tobytes() for i in again]
    steered = gen.encode(prompts)
    steered.embeds = steered.embeds + 0.5 * steered.mask[..., None].to(steered.embeds.dtype)
    assert gen.generate_encoded(steered, [42, 42])[0].tobytes() != plain[0].tobytes()


def test_unsupported_setting_is_an_error(qwen_generator):
    from implicit_bench.errors import ConfigError

    model = qwen_generator.config.model
    with pytest.raises(ConfigError, match="does not take cross_attention_kwargs"):
        create_generator(
            {"backend": "diffusers", "model": model, "call_kwargs": {"cross_attention_kwargs": {}}}
        )


def test_sd3_without_t5_encoding_layout_and_round_trip(tmp_path):
    model = build_tiny_sd3(tmp_path / "sd3")
    gen = create_generator(
        {
            "backend": "diffusers",
            "model": str(model),
            "drop_components": ["text_encoder_3", "tokenizer_3"],
            "device": "cpu",
            "threads": 1,
            "steps": 2,
            "guidance": 7.0,
            "width": 32,
            "height": 32,
            "max_sequence_length": 16,
        }  # fmt: skip
    )
    assert gen.family == "sd3"
    prompts = ["a nurse", "a nurse who is a man"]
    enc = gen.encode(prompts)
    # tokens: 77 CLIP positions then 16 T5 positions (zeros without T5, mask 0);
    # CLIP mask = BOS + characters without spaces + EOS: 6 + 2 = 8 and 15 + 2 = 17
    assert tuple(enc.embeds.shape[:2]) == (2, 77 + 16) and tuple(enc.pooled.shape) == (2, 64)
    assert enc.mask.sum(dim=1).tolist() == [8, 17] and int(enc.mask[:, 77:].sum()) == 0
    plain = gen.generate_prompts(prompts, [42, 42])
    again = gen.generate_encoded(gen.encode(prompts), [42, 42])
    assert [i.tobytes() for i in plain] == [i.tobytes() for i in again]
