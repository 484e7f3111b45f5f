"""A tiny randomly initialised ``QwenImagePipeline`` (the paper's Qwen-Image), built locally.

Components follow diffusers' own tests (``tests/pipelines/qwenimage``, ``get_dummy_components``):
a 2-layer ``QwenImageTransformer2DModel``, a small ``AutoencoderKLQwenImage``, the flow-matching
scheduler and a 2-layer ``Qwen2_5_VLForConditionalGeneration`` text encoder. Where the tests
download ``hf-internal-testing``'s tokenizer, this one trains a small ``Qwen2Tokenizer`` here
(``tiny.qwen_tokenizer``) on which Qwen-Image's template prefix is exactly the 34 tokens the
pipeline drops, as with the real tokenizer; so ``encode`` returns the prompt's own tokens and
steering shifts exactly those. Saved with ``save_pretrained``: it loads through
``DiffusionPipeline.from_pretrained`` like ``Qwen/Qwen-Image``.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.backends.tiny.qwen_tokenizer import check_qwen_image_prefix, qwen_tokenizer
from implicit_bench.runtime.provenance import mark_random_init

TEXT_DIM = 16


def build_pipeline(seed: int = 0):
    """The pipeline object, every component created under ``torch.manual_seed(seed)``."""
    import torch
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImagePipeline,
        QwenImageTransformer2DModel,
    )
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    tokenizer = qwen_tokenizer()
    check_qwen_image_prefix(tokenizer)
    ids = {
        t: tokenizer.convert_tokens_to_ids(t)
        for t in (
            "<|endoftext|>",
            "<|im_end|>",
            "<|vision_start|>",
            "<|vision_end|>",
            "<|image_pad|>",
            "<|video_pad|>",
        )
    }
    torch.manual_seed(seed)
    transformer = QwenImageTransformer2DModel(
        patch_size=2,
        in_channels=16,
        out_channels=4,
        num_layers=2,
        attention_head_dim=16,
        num_attention_heads=3,
        joint_attention_dim=TEXT_DIM,
        guidance_embeds=False,
        axes_dims_rope=(8, 4, 4),
    )
    torch.manual_seed(seed)
    vae = AutoencoderKLQwenImage(
        base_dim=24,
        z_dim=4,
        dim_mult=[1, 2, 4],
        num_res_blocks=1,
        temperal_downsample=[False, True],
        latents_mean=[0.0] * 4,
        latents_std=[1.0] * 4,
    )
    config = Qwen2_5_VLConfig(
        text_config={
            "hidden_size": TEXT_DIM,
            "intermediate_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "vocab_size": len(tokenizer),
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
            "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default", "type": "default"},
            "rope_theta": 1000000.0,
        },
        vision_config={
            "depth": 2,
            "hidden_size": 16,
            "intermediate_size": 16,
            "num_heads": 2,
            "out_hidden_size": TEXT_DIM,
        },
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
    )
    torch.manual_seed(seed)
    text_encoder = Qwen2_5_VLForConditionalGeneration(config)
    pipe = QwenImagePipeline(
        transformer=transformer, vae=vae, scheduler=FlowMatchEulerDiscreteScheduler(),
        text_encoder=text_encoder, tokenizer=tokenizer,
    )  # fmt: skip
    return pipe


def build(out_dir: str | Path, seed: int = 0) -> Path:
    out = Path(out_dir)
    build_pipeline(seed).save_pretrained(out, safe_serialization=True)
    mark_random_init(
        out, f"tiny randomly initialised QwenImagePipeline (seed {seed}); images are noise"
    )
    return out
