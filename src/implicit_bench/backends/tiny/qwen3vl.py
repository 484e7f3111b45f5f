"""A tiny randomly initialised Qwen3-VL-MoE (the paper's Qwen3-VL-30B-A3B-Instruct), built locally.

Same classes as the hub checkpoint: ``Qwen3VLMoeForConditionalGeneration`` (a 2-layer sparse
MoE text model with 4 experts, 2 active, interleaved M-RoPE, and a 2-block vision tower with
DeepStack) and ``Qwen3VLProcessor`` (``Qwen2VLImageProcessor`` with 16-pixel patches merged
2x2, ``Qwen3VLVideoProcessor``, a ``Qwen2Tokenizer``) with Qwen3-VL-Instruct's chat template
(``templates/qwen3_vl.jinja``). Sizes follow transformers' own tests
(``tests/models/qwen3_vl_moe``); the tokenizer is trained here (``tiny.qwen_tokenizer``). The
judge backend loads it with ``AutoProcessor`` / ``AutoModelForImageTextToText`` and the
``transformers`` LLM backend (the rewriter) with the same directory, as text-only chat.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.backends.tiny.junk_answers import ANSWER_TOKENS, boost_answers
from implicit_bench.backends.tiny.qwen_tokenizer import qwen_tokenizer
from implicit_bench.runtime.provenance import mark_random_init

CHAT_TEMPLATE = (Path(__file__).parent / "templates" / "qwen3_vl.jinja").read_text(encoding="utf-8")
INIT_STD = 0.5  # large, so answers depend on the image and prompt (0.02 repeats one token)
PATCH = 16
MERGE = 2


def build(out_dir: str | Path, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3VLMoeConfig,
        Qwen3VLMoeForConditionalGeneration,
        Qwen3VLProcessor,
    )
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    out = Path(out_dir)
    tokenizer = qwen_tokenizer(padding_side="left")
    tokenizer.add_tokens(list(ANSWER_TOKENS))
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.pad_token = "<|endoftext|>"
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
    pixels = {"shortest_edge": (PATCH * MERGE) ** 2, "longest_edge": (PATCH * MERGE * 2) ** 2}
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(
            patch_size=PATCH,
            merge_size=MERGE,
            temporal_patch_size=2,
            size=pixels,
            image_mean=[0.5] * 3,
            image_std=[0.5] * 3,
        ),
        video_processor=Qwen3VLVideoProcessor(
            patch_size=PATCH, merge_size=MERGE, temporal_patch_size=2, size=pixels
        ),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    config = Qwen3VLMoeConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "moe_intermediate_size": 16,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "decoder_sparse_step": 1,
            "max_position_embeddings": 4096,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 5000000.0,
                "mrope_section": [4, 2, 2],
                "mrope_interleaved": True,
            },
            "initializer_range": INIT_STD,
            "pad_token_id": ids["<|endoftext|>"],
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
        },
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 32,
            "num_heads": 4,
            "patch_size": PATCH,
            "spatial_merge_size": MERGE,
            "temporal_patch_size": 2,
            "out_hidden_size": 32,
            "num_position_embeddings": 16,
            "deepstack_visual_indexes": [0, 1],
            "initializer_range": INIT_STD,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = Qwen3VLMoeForConditionalGeneration(config).eval()
    boost_answers(model, tokenizer)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(out)
    processor.save_pretrained(out)
    tokenizer.chat_template = CHAT_TEMPLATE  # as the hub tokenizer: text-only chat (the rewriter)
    tokenizer.save_pretrained(out)
    mark_random_init(
        out, f"tiny random Qwen3-VL-MoE judge/rewriter (seed {seed}); its answers are noise"
    )
    return out
