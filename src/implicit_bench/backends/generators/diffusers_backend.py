"""diffusers backend: any text-to-image pipeline that ``DiffusionPipeline.from_pretrained`` loads.

A hub id (``Qwen/Qwen-Image``, ``stabilityai/stable-diffusion-3-medium-diffusers``) or a local
directory (the tiny default-profile model under ``models/tiny/generator``). The pipeline is
loaded once, when the backend is created (once per worker).

Every render goes through the prompt-encoder hook::

    encoding = gen.encode(prompts)            # the pipeline's own encoder outputs
    images = gen.generate_encoded(encoding, seeds)

so a caller that edits ``encoding.embeds`` (embedding steering, engineer "debias") uses exactly
the route a plain render uses, and unedited encodings give bit-identical images.

Seeding: one CPU ``torch.Generator`` per image, seeded from the seed alone, so the three
variants of a unit share initial noise at a seed, and the noise does not depend on the device.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from implicit_bench.backends.generators.base import GeneratorParams, RenderRequest, RenderResult
from implicit_bench.errors import ConfigError
from implicit_bench.params import NonNegFloat, PositiveInt

DTYPES = ("float32", "float16", "bfloat16")


class DiffusersParams(GeneratorParams):
    """Sampler settings are identical for every prompt of a config (all three variants)."""

    # where and how fast the pipeline runs, never what it draws: out of the settings hash
    runtime_keys: ClassVar[frozenset[str]] = GeneratorParams.runtime_keys | {
        "device",
        "cpu_offload",
        "threads",
    }

    backend: Literal["diffusers"] = "diffusers"
    model: str  # hub id or local directory
    pipeline_class: str | None = None  # a diffusers class name; default: from model_index.json
    revision: str | None = None
    variant: str | None = None  # weight file variant, e.g. "fp16"
    drop_components: list[
        str
    ] = []  # loaded as None, e.g. [text_encoder_3, tokenizer_3]: SD3 without T5
    dtype: Literal["float32", "float16", "bfloat16"] = "float32"
    device: str = "auto"  # auto: cuda when available, else cpu
    cpu_offload: bool = False  # enable_model_cpu_offload (large models on small GPUs)
    threads: PositiveInt | None = (
        None  # torch intra-op threads; CPU images are bit-identical only at equal counts
    )
    steps: PositiveInt = 28
    guidance: NonNegFloat | None = None  # guidance_scale
    true_cfg_scale: NonNegFloat | None = None  # Qwen-Image "true" classifier-free guidance
    negative_prompt: str | None = None  # Qwen-Image needs one (" ") for true CFG to apply
    width: PositiveInt | None = None  # default: the pipeline's default resolution
    height: PositiveInt | None = None
    max_sequence_length: PositiveInt | None = None
    call_kwargs: dict[str, Any] = {}  # any other pipeline __call__ argument, passed as is


@dataclass
class PromptEncoding:
    """The pipeline's own prompt-encoder outputs for a batch of prompts.

    ``embeds``: [batch, tokens, dim], one vector per token, as fed to the denoiser.
    ``mask``: [batch, tokens] (int64), 1 for real tokens (incl. BOS/EOS), 0 for padding; the
    pipeline's own mask where it has one (Qwen-Image), else the tokenizer's attention mask.
    ``pooled``: [batch, dim2] pooled embedding for pipelines that take one (SD3, SDXL, Flux).
    Tensors are on the pipeline's device and dtype.
    """

    embeds: Any
    mask: Any
    pooled: Any = None

    def __len__(self) -> int:
        return int(self.embeds.shape[0])

    def select(self, index: Sequence[int]) -> PromptEncoding:
        idx = list(index)
        return PromptEncoding(
            self.embeds[idx], self.mask[idx], None if self.pooled is None else self.pooled[idx]
        )


def _family(pipe: Any) -> str:
    names = {cls.__name__ for cls in type(pipe).__mro__}
    for family, cls_name in (
        ("qwen", "QwenImagePipeline"),
        ("sd3", "StableDiffusion3Pipeline"),
        ("sdxl", "StableDiffusionXLPipeline"),
        ("flux", "FluxPipeline"),
        ("sd", "StableDiffusionPipeline"),
    ):
        if cls_name in names:
            return family
    return "unsupported"


class DiffusersGenerator:
    Params = DiffusersParams

    def __init__(self, config: DiffusersParams):
        import torch

        self.config = config
        self.torch = torch
        if config.threads:
            torch.set_num_threads(config.threads)
        self.device = (
            ("cuda" if torch.cuda.is_available() else "cpu")
            if config.device == "auto"
            else config.device
        )
        self.pipe = self._load()
        self.family = _family(self.pipe)
        self._call_params = set(inspect.signature(self.pipe.__call__).parameters)
        self._base_kwargs = self._sampler_kwargs()

    @property
    def name(self) -> str:
        return f"diffusers:{self.config.model}"

    # ----- loading -------------------------------------------------------------------------
    def _load(self) -> Any:
        import diffusers
        import transformers

        diffusers.utils.logging.disable_progress_bar()
        transformers.utils.logging.disable_progress_bar()

        cfg = self.config
        cls = diffusers.DiffusionPipeline
        if cfg.pipeline_class:
            cls = getattr(diffusers, cfg.pipeline_class, None)
            if cls is None:
                raise ConfigError(f"diffusers has no pipeline class '{cfg.pipeline_class}'")
        # diffusers >= 0.36 names it `dtype` (torch_dtype deprecated); older ones torch_dtype
        has_dtype = hasattr(diffusers.utils, "deprecation_utils") and hasattr(
            diffusers.utils.deprecation_utils, "_TORCH_DTYPE_DEPRECATION_MESSAGE"
        )
        kwargs: dict[str, Any] = {
            "dtype" if has_dtype else "torch_dtype": getattr(self.torch, cfg.dtype)
        }
        if cfg.revision:
            kwargs["revision"] = cfg.revision
        if cfg.variant:
            kwargs["variant"] = cfg.variant
        kwargs.update({name: None for name in cfg.drop_components})
        pipe = cls.from_pretrained(cfg.model, **kwargs)
        if cfg.cpu_offload:
            pipe.enable_model_cpu_offload()
        else:
            pipe.to(self.device)
        pipe.set_progress_bar_config(disable=True)
        return pipe

    def _sampler_kwargs(self) -> dict[str, Any]:
        cfg = self.config
        kwargs: dict[str, Any] = {"num_inference_steps": cfg.steps, "output_type": "pil"}
        optional = {
            "guidance_scale": cfg.guidance,
            "true_cfg_scale": cfg.true_cfg_scale,
            "width": cfg.width,
            "height": cfg.height,
            "max_sequence_length": cfg.max_sequence_length,
        }
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        kwargs.update(cfg.call_kwargs)
        unknown = sorted(k for k in kwargs if k not in self._call_params)
        if unknown:
            raise ConfigError(
                f"{type(self.pipe).__name__} ({cfg.model}) does not take {', '.join(unknown)}; "
                "remove it from the render config"
            )
        return kwargs

    # ----- the prompt-encoder hook --------------------------------------------------------
    def encode(self, prompts: Sequence[str]) -> PromptEncoding:
        """The pipeline's own encoder outputs for ``prompts`` (batched as given)."""
        torch = self.torch
        prompts = list(prompts)
        pipe, fam = self.pipe, self.family
        device = pipe._execution_device
        msl = self.config.max_sequence_length
        with torch.no_grad():
            if fam == "qwen":
                kw = {"max_sequence_length": msl} if msl else {}
                embeds, mask = pipe.encode_prompt(prompt=prompts, device=device, **kw)
                if mask is None:
                    mask = torch.ones(embeds.shape[:2], dtype=torch.long, device=embeds.device)
                return PromptEncoding(embeds, mask.long())
            if fam == "sd":
                embeds, _ = pipe.encode_prompt(prompts, device, 1, False)
                return PromptEncoding(embeds, self._token_mask(pipe.tokenizer, prompts, embeds))
            if fam == "sdxl":
                embeds, _, pooled, _ = pipe.encode_prompt(
                    prompt=prompts,
                    device=device,
                    num_images_per_prompt=1,
                    do_classifier_free_guidance=False,
                )
                return PromptEncoding(
                    embeds, self._token_mask(pipe.tokenizer, prompts, embeds), pooled
                )
            if fam == "sd3":
                t5_len = msl or 256
                embeds, _, pooled, _ = pipe.encode_prompt(
                    prompt=prompts,
                    prompt_2=None,
                    prompt_3=None,
                    device=device,
                    num_images_per_prompt=1,
                    do_classifier_free_guidance=False,
                    max_sequence_length=t5_len,
                )
                clip_len = embeds.shape[1] - t5_len
                clip_mask = self._token_mask(pipe.tokenizer, prompts, embeds, clip_len)
                if pipe.tokenizer_3 is not None and pipe.text_encoder_3 is not None:
                    t5_mask = self._token_mask(pipe.tokenizer_3, prompts, embeds, t5_len)
                else:
                    t5_mask = torch.zeros(
                        (len(prompts), t5_len), dtype=torch.long, device=embeds.device
                    )
                return PromptEncoding(embeds, torch.cat([clip_mask, t5_mask], dim=1), pooled)
            if fam == "flux":
                t5_len = msl or 512
                embeds, pooled, _ = pipe.encode_prompt(
                    prompt=prompts,
                    prompt_2=None,
                    device=device,
                    num_images_per_prompt=1,
                    max_sequence_length=t5_len,
                )
                return PromptEncoding(
                    embeds, self._token_mask(pipe.tokenizer_2, prompts, embeds, t5_len), pooled
                )
        raise ConfigError(
            f"{type(pipe).__name__}: no prompt-encoder hook for this pipeline class "
            "(supported: Qwen-Image, SD3, SDXL, Flux, Stable Diffusion); plain prompts still render"
        )

    def _token_mask(
        self, tokenizer: Any, prompts: list[str], embeds: Any, length: int | None = None
    ) -> Any:
        length = length or int(embeds.shape[1])
        tokens = tokenizer(
            prompts, padding="max_length", max_length=length, truncation=True, return_tensors="pt"
        )
        return tokens.attention_mask.to(device=embeds.device, dtype=self.torch.long)

    def generate_encoded(self, encoding: PromptEncoding, seeds: Sequence[int]) -> list[Any]:
        """Images (PIL) from an encoding (possibly edited), one CPU generator per seed."""
        torch = self.torch
        if len(encoding) != len(seeds):
            raise ValueError(f"{len(encoding)} encodings but {len(seeds)} seeds")
        kwargs = dict(self._base_kwargs)
        kwargs["prompt_embeds"] = encoding.embeds
        if self.family == "qwen":
            kwargs["prompt_embeds_mask"] = encoding.mask
        if encoding.pooled is not None:
            kwargs["pooled_prompt_embeds"] = encoding.pooled
        if self.config.negative_prompt is not None:
            kwargs["negative_prompt"] = [self.config.negative_prompt] * len(seeds)
        kwargs["generator"] = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        with torch.no_grad():
            return list(self.pipe(**kwargs).images)

    def generate_prompts(self, prompts: Sequence[str], seeds: Sequence[int]) -> list[Any]:
        """Plain prompts: through ``encode`` -> ``generate_encoded`` (the steering route)."""
        if self.family == "unsupported":
            kwargs = dict(self._base_kwargs)
            if self.config.negative_prompt is not None:
                kwargs["negative_prompt"] = [self.config.negative_prompt] * len(seeds)
            kwargs["generator"] = [
                self.torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds
            ]
            with self.torch.no_grad():
                return list(self.pipe(prompt=list(prompts), **kwargs).images)
        return self.generate_encoded(self.encode(prompts), seeds)

    # ----- the Generator protocol ----------------------------------------------------------
    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        images = self.generate_prompts([r.prompt for r in requests], [r.seed for r in requests])
        return [RenderResult.from_image(img) for img in images]

    def close(self) -> None:
        self.pipe = None
