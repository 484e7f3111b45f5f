"""A tiny randomly initialised open_clip ViT CLIP, built locally from a custom config.

The directory has what open_clip's hub / ``local-dir:`` loader reads: ``open_clip_config.json``
(``model_cfg`` + ``preprocess_cfg``) and ``open_clip_model.safetensors``. The clip stage's
``open_clip`` backend loads it with ``model: local-dir:models/tiny/openclip`` (or the bare
directory path) and ``pretrained: null``, through ``open_clip.create_model_and_transforms``,
the same call that loads ``ViT-L-14`` / ``openai`` for the paper. The text tower uses open_clip's
own bundled CLIP BPE tokenizer (49,408 tokens, shipped in the wheel), so nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

from implicit_bench.runtime.provenance import mark_random_init

MODEL_CFG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "head_width": 16, "patch_size": 8},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}
PREPROCESS_CFG = {
    "image_size": 32,
    "mean": [0.48145466, 0.4578275, 0.40821073],  # OpenAI CLIP's normalisation, as ViT-L-14/openai
    "std": [0.26862954, 0.26130258, 0.27577711],
    "interpolation": "bicubic",
    "resize_mode": "shortest",
}


def build(out_dir: str | Path, seed: int = 0) -> Path:
    import open_clip
    import torch
    from safetensors.torch import save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = open_clip.CLIP(**MODEL_CFG)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out / "open_clip_model.safetensors"))
    config = {"model_cfg": MODEL_CFG, "preprocess_cfg": PREPROCESS_CFG}
    (out / "open_clip_config.json").write_text(
        json.dumps(config, indent=2) + "\n", encoding="utf-8"
    )
    mark_random_init(out, f"tiny random open_clip ViT CLIP (seed {seed}); embeddings are noise")
    return out
