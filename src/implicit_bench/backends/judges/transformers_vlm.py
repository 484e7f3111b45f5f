"""Backend ``transformers``: a local vision-language model from a hub id or a local directory.

Loaded once per worker with ``AutoProcessor`` + ``AutoModelForImageTextToText`` (Qwen3-VL,
Gemma-3/4, LLaVA, InternVL, ...). Each request is one user turn holding the image and the
prompt, rendered with the model's own chat template; decoding is greedy; requests are batched
(left padding) ``batch_size`` at a time.
"""

from __future__ import annotations

from typing import Any, Literal

from implicit_bench.backends.judges.base import (
    JudgeBackend,
    JudgeParams,
    JudgeRequest,
    local_fingerprint,
    open_image,
)
from implicit_bench.params import PositiveInt


class TransformersJudgeParams(JudgeParams):
    backend: Literal["transformers"] = "transformers"
    revision: str | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    device: str = "auto"  # auto: cuda when available, else cpu; or "cpu", "cuda:0", ...
    device_map: str | None = None  # e.g. "auto" to shard a large model over the visible GPUs
    attn_implementation: str | None = None
    trust_remote_code: bool = False
    max_image_side: PositiveInt | None = (
        None  # downscale before the processor; null: processor decides
    )
    chat_template_kwargs: dict[str, Any] = {}  # e.g. {"enable_thinking": false}


class TransformersJudge(JudgeBackend):
    backend = "transformers"
    Params = TransformersJudgeParams

    def __init__(self, params: TransformersJudgeParams):
        super().__init__(params)
        self.params: TransformersJudgeParams = params
        self._model = None
        self._processor = None
        self._fingerprint = local_fingerprint(params.model)

    def identity(self) -> dict[str, Any]:
        p = self.params
        return {
            "backend": self.backend,
            "model": p.model,
            "revision": p.revision,
            "local_fingerprint": self._fingerprint,
            "dtype": p.dtype,
            "max_image_side": p.max_image_side,
            "chat_template_kwargs": p.chat_template_kwargs,
        }

    def load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        p = self.params
        self._processor = AutoProcessor.from_pretrained(
            p.model, revision=p.revision, trust_remote_code=p.trust_remote_code
        )
        tokenizer = getattr(self._processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"
        kwargs: dict[str, Any] = {"revision": p.revision, "trust_remote_code": p.trust_remote_code}
        if p.dtype != "auto":
            kwargs["dtype"] = getattr(torch, p.dtype)
        else:
            kwargs["dtype"] = "auto"
        if p.attn_implementation:
            kwargs["attn_implementation"] = p.attn_implementation
        if p.device_map:
            kwargs["device_map"] = p.device_map
        model = AutoModelForImageTextToText.from_pretrained(p.model, **kwargs)
        if not p.device_map:
            device = p.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            model = model.to(device)
        self._model = model.eval()

    def close(self) -> None:
        self._model = None
        self._processor = None

    def answer(self, batch: list[JudgeRequest]) -> list[tuple[str, str | None]]:
        self.load()
        results: list[tuple[str, str | None]] = []
        size = max(1, self.params.batch_size)
        for start in range(0, len(batch), size):
            chunk = batch[start : start + size]
            try:
                results.extend((text, None) for text in self._generate(chunk))
            except Exception:  # noqa: BLE001 - isolate the failing request(s): one at a time
                results.extend(self._one_by_one(chunk))
        return results

    def _one_by_one(self, chunk: list[JudgeRequest]) -> list[tuple[str, str | None]]:
        """Each request alone; one that still fails is an error (not cached, asked next run)."""
        out: list[tuple[str, str | None]] = []
        for request in chunk:
            try:
                out.append((self._generate([request])[0], None))
            except Exception as exc:  # noqa: BLE001
                out.append(("", f"{type(exc).__name__}: {str(exc)[:500]}"))
        return out

    def _generate(self, chunk: list[JudgeRequest]) -> list[str]:
        import torch

        processor, model = self._processor, self._model
        texts = [
            processor.apply_chat_template(
                [
                    {
                        "role": "user",
                        "content": [{"type": "image"}, {"type": "text", "text": r.prompt}],
                    }
                ],
                add_generation_prompt=True,
                tokenize=False,
                **self.params.chat_template_kwargs,
            )
            for r in chunk
        ]
        images = [[open_image(r.image, self.params.max_image_side)] for r in chunk]
        inputs = processor(images=images, text=texts, return_tensors="pt", padding=True)
        inputs = inputs.to(
            model.device, dtype=model.dtype
        )  # pixels in the model dtype (bf16 on GPUs)
        with torch.inference_mode():
            output = model.generate(
                **inputs, do_sample=False, max_new_tokens=self.params.max_new_tokens
            )
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        return processor.batch_decode(new_tokens, skip_special_tokens=True)
