"""Tiny random Qwen-Image and SD3 pipelines built locally (test helpers; nothing downloaded).

Components follow diffusers' own ``get_dummy_components``. Qwen-Image's tokenizer is a
byte-level Qwen2 tokenizer written here (every byte one token, plus the chat special tokens),
so the template prefix is longer than the real tokenizer's 34 tokens: the encoder outputs
keep part of the system prompt, which does not matter for testing the code path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from implicit_bench._util.yamlsafe import load_yaml
from tests.helpers.dvc_workspace import dvc_available, run_in
from tests.helpers.paths import copy_repo

KEEP_CONFIGS = (
    "unmodified",
    "rewrite_removed",
    "sv_full_unit_removed",
    "sv_attributes_own",
    "sv_llm_pair_own",
)


def build_tiny_qwen_image(out_dir: Path, seed: int = 0) -> Path:
    import torch
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImagePipeline,
        QwenImageTransformer2DModel,
    )
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2Tokenizer

    from implicit_bench.backends.tiny.generator import _bytes_to_unicode

    torch.manual_seed(seed)
    transformer = QwenImageTransformer2DModel(
        patch_size=2,
        in_channels=16,
        out_channels=4,
        num_layers=2,
        attention_head_dim=16,
        num_attention_heads=3,
        joint_attention_dim=16,
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
    vocab = {ch: i for i, ch in enumerate(sorted(_bytes_to_unicode().values()))}
    for special in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        vocab[special] = len(vocab)
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=[])
    tokenizer.add_tokens(["<|im_start|>", "<|im_end|>"], special_tokens=True)
    torch.manual_seed(seed)
    config = Qwen2_5_VLConfig(
        text_config={
            "hidden_size": 16,
            "intermediate_size": 16,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "vocab_size": 512,
            "bos_token_id": 256,
            "eos_token_id": 256,
            "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default", "type": "default"},
            "rope_theta": 1000000.0,
        },
        vision_config={
            "depth": 2,
            "hidden_size": 16,
            "intermediate_size": 16,
            "num_heads": 2,
            "out_hidden_size": 16,
        },
        hidden_size=16,
        vocab_size=512,
        bos_token_id=256,
        eos_token_id=256,
        vision_end_token_id=500,
        vision_start_token_id=501,
        vision_token_id=502,
    )
    text_encoder = Qwen2_5_VLForConditionalGeneration(config)
    pipe = QwenImagePipeline(
        transformer=transformer, vae=vae, scheduler=FlowMatchEulerDiscreteScheduler(),
        text_encoder=text_encoder, tokenizer=tokenizer,
    )  # fmt: skip
    pipe.save_pretrained(out_dir)
    return Path(out_dir)


def build_tiny_sd3(out_dir: Path, seed: int = 0) -> Path:
    """A tiny random StableDiffusion3Pipeline without T5 (diffusers' dummy components)."""
    import torch
    from diffusers import (
        AutoencoderKL,
        FlowMatchEulerDiscreteScheduler,
        SD3Transformer2DModel,
        StableDiffusion3Pipeline,
    )
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection, CLIPTokenizer

    from implicit_bench.backends.tiny.generator import tokenizer_vocab

    vocab = tokenizer_vocab()
    torch.manual_seed(seed)
    transformer = SD3Transformer2DModel(
        sample_size=32, patch_size=1, in_channels=4, num_layers=1, attention_head_dim=8,
        num_attention_heads=4, caption_projection_dim=32, joint_attention_dim=32,
        pooled_projection_dim=64, out_channels=4,
    )  # fmt: skip
    clip = CLIPTextConfig(
        bos_token_id=0, eos_token_id=1, pad_token_id=1, hidden_size=32, intermediate_size=37,
        layer_norm_eps=1e-05, num_attention_heads=4, num_hidden_layers=2, vocab_size=len(vocab),
        max_position_embeddings=77, hidden_act="gelu", projection_dim=32,
    )  # fmt: skip
    torch.manual_seed(seed)
    text_encoder = CLIPTextModelWithProjection(clip)
    torch.manual_seed(seed + 1)
    text_encoder_2 = CLIPTextModelWithProjection(clip)
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    torch.manual_seed(seed)
    vae = AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=(4,), layers_per_block=1,
        latent_channels=4, norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False,
        shift_factor=0.0609, scaling_factor=1.5035,
    )  # fmt: skip
    pipe = StableDiffusion3Pipeline(
        transformer=transformer, scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae,
        text_encoder=text_encoder, tokenizer=tokenizer, text_encoder_2=text_encoder_2,
        tokenizer_2=tokenizer, text_encoder_3=None, tokenizer_3=None,
    )  # fmt: skip
    pipe.save_pretrained(out_dir)
    return Path(out_dir)


def run_tiny_profile(
    repo_root: Path, tmp_path: Path, overrides: dict[str, object] | None = None
) -> Path:
    """Copy the repo, apply the tiny profile (+ ``overrides``: dotted key -> value), reduce it,
    ``dvc repro`` everything and check the outputs; returns the copy."""
    if not dvc_available():
        pytest.skip("dvc not installed")
    repo = tmp_path / "repo"
    copy_repo(repo_root, repo)

    def run(*cmd: str) -> str:
        return run_in(repo, *cmd)

    run("git", "init", "-q")
    run(sys.executable, "-m", "implicit_bench.cli.main", "profile", "tiny")
    # read as DVC and the stages read it (YAML 1.2: `aspect_ratio: 1:1` stays a string)
    params = load_yaml((repo / "params.yaml").read_text(encoding="utf-8"))
    assert params["base"]["profile"] == "tiny"
    params["subset"]["max_units"] = 3
    params["debias"]["configs"] = {
        k: v for k, v in params["debias"]["configs"].items() if k in KEEP_CONFIGS
    }
    # B.6 re-scores the kept configurations only (b6.debias_configs must name debias.configs)
    params["b6"]["debias_configs"] = [
        c for c in params["b6"]["debias_configs"] if c in KEEP_CONFIGS
    ]
    for dotted, value in (overrides or {}).items():
        *parents, leaf = dotted.split(".")
        node = params
        for part in parents:
            node = node[part]
        node[leaf] = value
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    (repo / "dvc.lock").unlink(
        missing_ok=True
    )  # the default profile's lock: every stage must run here
    run("git", "add", "-A")
    run("git", "commit", "-qm", "tiny profile")

    from tests.helpers.dvc_deps import missing

    assert missing(repo) == {}, "dvc.yaml deps miss what the tiny profile's stages read"
    run("dvc", "repro")
    assert "up to date" in run("dvc", "status")
    stages = set(run("dvc", "stage", "list", "--name-only").split())
    locked = set(yaml.safe_load((repo / "dvc.lock").read_text())["stages"])
    assert stages == locked  # every stage ran

    built = sorted(p.name for p in (repo / "models" / "tiny").iterdir())
    assert built == sorted(params["models"]["build"])
    render = json.loads((repo / "metrics" / "render.json").read_text())
    assert render["provenance"]["random_init"] is True
    assert {m["model"] for m in render["provenance"]["models"]} >= {
        "models/tiny/qwen_image",
        "models/tiny/sd3",
    }
    judgements = pd.read_parquet(repo / "data" / "judgements" / "judgements.parquet")
    assert set(judgements["judge"]) == {"qwen3vl", "gemma4", "gpt54"} and judgements["valid"].any()
    assert set(judgements["config"]) == {"qwen_image", "sd3"}
    retrieval = pd.read_parquet(repo / "data" / "processed" / "retrieval.parquet")
    assert len(retrieval) == 3

    # steering went through Qwen-Image's own encoder: same unit and seed, other image
    def shas(config: str) -> dict[tuple[str, int], str]:
        index = pd.read_parquet(repo / "data" / "debias" / "images" / config / "index.parquet")
        return {(r.unit_id, int(r.seed)): r.sha256 for r in index.itertuples() if r.status == "ok"}

    # (a token-level direction is cut to the neutral prompt's length: where the two steering
    # texts agree on those first tokens it is zero and the image is the unmodified one)
    base = shas("unmodified")
    for config in ("sv_full_unit_removed", "sv_attributes_own"):
        steered = shas(config)
        assert base and set(steered) == set(base)
        assert any(steered[k] != base[k] for k in base), config
    debias = json.loads((repo / "metrics" / "debias.json").read_text())
    assert set(debias["configs"]) >= {
        "unmodified",
        "rewrite_removed",
        "sv_full_unit_removed",
        "sv_attributes_own",
    }
    assert (repo / "report" / "index.html").exists()
    return repo
