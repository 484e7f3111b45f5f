"""A tiny randomly initialised CLIP (transformers ``CLIPModel`` + processor), built locally.

The tokenizer is a character-level CLIP BPE vocabulary written here (no merges), so nothing
is downloaded; the directory loads with ``CLIPModel.from_pretrained`` / ``AutoProcessor``
exactly like a hub checkpoint such as ``openai/clip-vit-large-patch14``.
"""

from __future__ import annotations

import json
from pathlib import Path

from implicit_bench.runtime.provenance import mark_random_init


def build(out_dir: str | Path, seed: int = 0) -> None:
    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPProcessor, CLIPTokenizer
    from transformers.models.clip import CLIPImageProcessorPil

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chars = [chr(c) for c in range(33, 127)]
    vocab: dict[str, int] = {}
    for suffix in ("", "</w>"):
        for c in chars:
            vocab[c + suffix] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (out / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(str(out / "vocab.json"), str(out / "merges.txt"))
    text = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=77,
        projection_dim=16,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    vision = dict(
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=32,
        patch_size=8,
        projection_dim=16,
    )
    torch.manual_seed(seed)
    model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))
    processor = CLIPProcessor(
        image_processor=CLIPImageProcessorPil(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tokenizer,
    )
    model.save_pretrained(out)
    processor.save_pretrained(out)
    mark_random_init(out, f"tiny random transformers CLIPModel (seed {seed}); embeddings are noise")
