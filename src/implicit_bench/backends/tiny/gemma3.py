"""A tiny randomly initialised Gemma 3 judge (the Gemma family of the paper's Gemma-4 judge).

Same classes as ``google/gemma-3-*-it``: ``Gemma3ForConditionalGeneration`` (a 2-layer Gemma 3
text model with sliding-window and global layers, a 2-layer SigLIP vision tower, average-pooled
soft image tokens) and ``Gemma3Processor`` (``Gemma3ImageProcessor``, a ``GemmaTokenizer``) with
Gemma 3's chat template (``templates/gemma3.jinja``). The tokenizer is character level with
byte fallback, written here. Why Gemma 3 and not Gemma 4: docs/profiles.md (the tiny profile).
"""

from __future__ import annotations

import string
from pathlib import Path

from implicit_bench.backends.tiny.junk_answers import ANSWER_TOKENS, boost_answers
from implicit_bench.runtime.provenance import mark_random_init

CHAT_TEMPLATE = (Path(__file__).parent / "templates" / "gemma3.jinja").read_text(encoding="utf-8")
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>",
            "<start_of_image>", "<end_of_image>", "<image_soft_token>"]  # fmt: skip
IMAGE_SIZE = 56
PATCH = 14
MM_TOKENS = 4  # 4 x 4 patches pooled to 2 x 2 soft tokens
INIT_STD = 0.5


def _tokenizer():
    from transformers import GemmaTokenizer

    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for ch in ["▁", *string.ascii_letters, *string.digits, *string.punctuation, "\n"]:
        vocab.setdefault(ch, len(vocab))
    tokenizer = GemmaTokenizer(
        vocab=vocab, merges=[], padding_side="left",
        extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                              "image_token": "<image_soft_token>"},
    )  # fmt: skip
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIALS[5:]})
    tokenizer.add_tokens(list(ANSWER_TOKENS))
    return tokenizer


def build(out_dir: str | Path, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
    )

    out = Path(out_dir)
    tokenizer = _tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIALS}
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessor(
            size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
            do_pan_and_scan=False,
            image_mean=[0.5] * 3,
            image_std=[0.5] * 3,
        ),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=MM_TOKENS,
    )
    config = Gemma3Config(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 8,
            "sliding_window": 8,
            "layer_types": ["sliding_attention", "full_attention"],
            "max_position_embeddings": 4096,
            "initializer_range": INIT_STD,
            "pad_token_id": ids["<pad>"],
            "bos_token_id": ids["<bos>"],
            "eos_token_id": [ids["<eos>"], ids["<end_of_turn>"]],
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "image_size": IMAGE_SIZE,
            "patch_size": PATCH,
            "vision_use_head": False,
            "model_type": "siglip_vision_model",
        },
        mm_tokens_per_image=MM_TOKENS,
        boi_token_index=ids["<start_of_image>"],
        eoi_token_index=ids["<end_of_image>"],
        image_token_index=ids["<image_soft_token>"],
        initializer_range=INIT_STD,
        tie_word_embeddings=False,  # tied, a random model repeats its last input token ("\n")
    )
    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(config).eval()
    boost_answers(model, tokenizer)
    model.generation_config.eos_token_id = [ids["<eos>"], ids["<end_of_turn>"]]
    model.generation_config.pad_token_id = ids["<pad>"]
    model.generation_config.bos_token_id = ids["<bos>"]
    model.save_pretrained(out)
    processor.save_pretrained(out)
    mark_random_init(out, f"tiny random Gemma 3 judge (seed {seed}); its answers are noise")
    return out
