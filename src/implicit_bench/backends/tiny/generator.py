"""A tiny randomly initialised Stable Diffusion pipeline, built locally from configs.

As diffusers' own tests do (``get_dummy_components``), every component is created from a small
config under ``torch.manual_seed(seed)``: a 2-block UNet, a 2-block VAE, a 2-layer CLIP text
encoder and a character-level CLIP tokenizer whose vocabulary is written here (nothing is
downloaded). The pipeline is saved with ``save_pretrained`` so that it loads through the same
``DiffusionPipeline.from_pretrained`` path users use for hub ids.

Why ``StableDiffusionPipeline``: its prompt encoder gives one vector per token (the CLIP last
hidden state that the UNet cross-attends to), with no pooled vector, which is the shape of
signal the paper steers on Qwen-Image (Qwen2.5-VL output embeddings, one per token), and it
accepts ``prompt_embeds``. SD3 without T5 would add a pooled vector and 256 all-zero T5
positions, which only make token-level steering harder to test. It is also the fastest.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.runtime.provenance import mark_random_init

# The tokenizer is character level (no BPE merges), so a prompt of n characters takes about n
# tokens: a long context keeps the attribute words at the end of long prompts.
MAX_TOKENS = 256
SAMPLE_SIZE = 64  # pixels; the VAE halves it once, so the UNet sees 32x32 latents


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2 / CLIP byte-to-printable-character table (the ByteLevel pre-tokenizer's alphabet)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(printable, (chr(c) for c in chars), strict=True))


def tokenizer_vocab() -> dict[str, int]:
    """Special tokens, every byte character, and every byte character ending a word."""
    alphabet = sorted(_bytes_to_unicode().values())
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in alphabet:
        vocab[ch] = len(vocab)
    for ch in alphabet:
        vocab[ch + "</w>"] = len(vocab)
    return vocab


def build_components(seed: int) -> dict:
    """The pipeline components, each created under ``torch.manual_seed(seed)``."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    vocab = tokenizer_vocab()
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(
        block_out_channels=(8, 16),
        layers_per_block=1,
        sample_size=SAMPLE_SIZE // 2,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=4,
        norm_num_groups=4,
    )
    scheduler = DDIMScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
    )
    torch.manual_seed(seed)
    vae = AutoencoderKL(
        block_out_channels=(8, 16),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        latent_channels=4,
        norm_num_groups=4,
        sample_size=SAMPLE_SIZE,
    )
    torch.manual_seed(seed)
    text_encoder = CLIPTextModel(
        CLIPTextConfig(
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
            hidden_size=32,
            intermediate_size=37,
            layer_norm_eps=1e-05,
            num_attention_heads=4,
            num_hidden_layers=2,
            vocab_size=len(vocab),
            max_position_embeddings=MAX_TOKENS,
        )
    )
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=MAX_TOKENS)
    return {
        "unet": unet,
        "scheduler": scheduler,
        "vae": vae,
        "text_encoder": text_encoder,
        "tokenizer": tokenizer,
        "safety_checker": None,
        "feature_extractor": None,
        "image_encoder": None,
    }


def build(out_dir: str | Path, seed: int = 0) -> Path:
    """Build the tiny pipeline under ``seed``, save it to ``out_dir`` and mark it random."""
    from diffusers import StableDiffusionPipeline

    out = Path(out_dir)
    pipe = StableDiffusionPipeline(**build_components(seed), requires_safety_checker=False)
    pipe.save_pretrained(out, safe_serialization=True)
    mark_random_init(
        out,
        "tiny randomly initialised StableDiffusionPipeline (seed "
        f"{seed}): {SAMPLE_SIZE}x{SAMPLE_SIZE} "
        f"images, character-level CLIP tokenizer of {MAX_TOKENS} tokens; images are noise",
    )
    return out
