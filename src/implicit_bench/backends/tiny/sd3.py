"""A tiny randomly initialised ``StableDiffusion3Pipeline`` (the paper's SD3), built locally.

Components follow diffusers' tests (``tests/pipelines/stable_diffusion_3``,
``get_dummy_components``): a 1-layer ``SD3Transformer2DModel``, two CLIP text encoders with
projection, a T5 encoder, a one-block VAE and the flow-matching scheduler. The tokenizers are
written here instead of downloaded: the two CLIP tokenizers are character-level CLIP BPE
vocabularies (``tiny.generator.tokenizer_vocab``) and T5's is a small ``T5Tokenizer``
(Unigram) over the same characters. Like the real SD3-medium, the prompt encoding is 77 CLIP
positions followed by the T5 positions, plus a pooled CLIP vector.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.runtime.provenance import mark_random_init

T5_DIM = 64  # = joint_attention_dim; the two CLIP widths (2 x 32) are padded to it
CLIP_DIM = 32


def _t5_tokenizer():
    import string

    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    pieces += [(ch, -3.0) for ch in string.ascii_letters + string.digits + string.punctuation]
    pieces += [("▁" + ch, -2.5) for ch in string.ascii_letters + string.digits]
    return T5Tokenizer(vocab=pieces, extra_ids=0, model_max_length=512)


def build_pipeline(seed: int = 0):
    import torch
    from diffusers import (
        AutoencoderKL,
        FlowMatchEulerDiscreteScheduler,
        SD3Transformer2DModel,
        StableDiffusion3Pipeline,
    )
    from transformers import (
        CLIPTextConfig,
        CLIPTextModelWithProjection,
        CLIPTokenizer,
        T5Config,
        T5EncoderModel,
    )

    from implicit_bench.backends.tiny.generator import tokenizer_vocab

    vocab = tokenizer_vocab()
    torch.manual_seed(seed)
    transformer = SD3Transformer2DModel(
        sample_size=32, patch_size=1, in_channels=4, num_layers=1, attention_head_dim=8,
        num_attention_heads=4, caption_projection_dim=32, joint_attention_dim=T5_DIM,
        pooled_projection_dim=2 * CLIP_DIM, out_channels=4,
    )  # fmt: skip
    clip = CLIPTextConfig(
        bos_token_id=0, eos_token_id=1, pad_token_id=1, hidden_size=CLIP_DIM, intermediate_size=37,
        layer_norm_eps=1e-05, num_attention_heads=4, num_hidden_layers=2, vocab_size=len(vocab),
        max_position_embeddings=77, hidden_act="gelu", projection_dim=CLIP_DIM,
    )  # fmt: skip
    torch.manual_seed(seed)
    text_encoder = CLIPTextModelWithProjection(clip)
    torch.manual_seed(seed + 1)
    text_encoder_2 = CLIPTextModelWithProjection(clip)
    t5_tokenizer = _t5_tokenizer()
    torch.manual_seed(seed)
    text_encoder_3 = T5EncoderModel(
        T5Config(
            vocab_size=len(t5_tokenizer),
            d_model=T5_DIM,
            d_kv=8,
            d_ff=37,
            num_layers=2,
            num_heads=4,
            relative_attention_num_buckets=8,
            pad_token_id=0,
            eos_token_id=1,
            decoder_start_token_id=0,
        )
    )
    torch.manual_seed(seed)
    vae = AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=(4,), layers_per_block=1,
        latent_channels=4, norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False,
        shift_factor=0.0609, scaling_factor=1.5035,
    )  # fmt: skip
    return StableDiffusion3Pipeline(
        transformer=transformer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77),
        text_encoder_2=text_encoder_2,
        tokenizer_2=CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77),
        text_encoder_3=text_encoder_3,
        tokenizer_3=t5_tokenizer,
    )


def build(out_dir: str | Path, seed: int = 0) -> Path:
    out = Path(out_dir)
    build_pipeline(seed).save_pretrained(out, safe_serialization=True)
    mark_random_init(
        out,
        "tiny randomly initialised StableDiffusion3Pipeline with "
        f"T5 (seed {seed}); images are noise",
    )
    return out
