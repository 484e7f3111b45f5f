"""The LLM client interface: cached, greedy chat completions.

Every backend implements ``_generate`` (a batch of uncached requests -> texts); this base class adds
the disk cache: each answer is stored under ``model_key("llm", backend + model identity, messages,
decoding)`` in a :class:`~implicit_bench.runtime.cache.DiskCache`, so a re-run makes zero calls.
Failed requests (transport errors after the bounded retries) come back as answers with ``error`` set
(secrets redacted) and are *not* cached, so the next run retries them. Only text is ever cached; a
cached entry that is not text (written by an older version) is asked again.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from implicit_bench._util.hashing import stable_hash
from implicit_bench._util.redact import redact
from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.runtime.cache import DiskCache, cached_map, model_key

Messages = list[dict[str, str]]

DEFAULT_CACHE = "cache/llm.sqlite"


def request_hash(messages: Messages) -> str:
    """The hash that keys a request in a replay file: sha256 of the
    canonical JSON of the messages."""
    return stable_hash({"messages": messages})


@dataclass(frozen=True)
class LLMAnswer:
    """One chat answer. ``error`` is set (and ``text`` empty) when the call failed."""

    text: str
    cached: bool = False
    error: str | None = None
    key: str | None = None
    request_hash: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class LLMParams(StrictModel):
    """Keys shared by every backend's params block (``llm:`` or a stage's ``*.llm``)."""

    backend: str
    model: str
    max_tokens: PositiveInt = 512
    cache: str | None = DEFAULT_CACHE  # null: no disk cache (every call goes to the backend)


def _check_messages(messages: Messages) -> Messages:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {role, content} dicts")
    for i, message in enumerate(messages):
        if (
            not isinstance(message, dict)
            or set(message) - {"role", "content"}
            or "role" not in message
        ):
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content'")
        if not isinstance(message.get("content"), str):
            raise ValueError(f"messages[{i}].content must be a string")
    return messages


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total, desc=desc, unit="req", disable=not enabled, mininterval=2.0, smoothing=0.1
    )


class LLMClient(ABC):
    """A greedy (temperature 0) chat model with a disk cache in front of it."""

    backend: str = "base"
    Params: type[LLMParams] = LLMParams
    progress: bool = True  # tqdm bar over the uncached requests of chat_many

    def sends_schema(self) -> bool:
        """Whether this backend sends a JSON schema with the request (structured output)."""
        return False

    def __init__(self, params: LLMParams):
        self.params = params
        self.cache = DiskCache(params.cache) if params.cache else None
        self.calls = 0  # requests actually sent to the backend (cache misses)

    # -- what each backend provides -------------------------------------------------------
    @abstractmethod
    def _generate(self, batch: list[Messages], max_tokens: int) -> list[tuple[str, str | None]]:
        """Answer uncached requests: one ``(text, error)`` per request, in order."""

    def identity(self) -> dict[str, Any]:
        """Everything about the model that determines its answers (never secrets)."""
        return {"model": self.params.model}

    def decoding(self, max_tokens: int) -> dict[str, Any]:
        """Decoding parameters that determine the answer."""
        return {"greedy": True, "temperature": 0, "max_tokens": max_tokens}

    # -- public API ----------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.params.model

    def describe(self) -> dict[str, Any]:
        """A provenance-friendly description (no secrets: URL userinfo removed)."""
        from implicit_bench._util.redact import strip_userinfo

        return {
            "backend": self.backend,
            **{
                k: strip_userinfo(v) if isinstance(v, str) else v
                for k, v in self.identity().items()
            },
        }

    def key(
        self,
        messages: Messages,
        max_tokens: int | None = None,
        schema: dict[str, Any] | None = None,
    ) -> str:
        tokens = max_tokens or self.params.max_tokens
        decoding = self.decoding(tokens)
        if schema is not None and self.sends_schema():  # constrained decoding changes the answer
            decoding = {**decoding, "json_schema": schema}
        return model_key("llm", self.describe(), messages=messages, decoding=decoding)

    def chat(self, messages: Messages, *, max_tokens: int | None = None) -> LLMAnswer:
        return self.chat_many([messages], max_tokens=max_tokens)[0]

    def chat_many(
        self,
        requests: list[Messages],
        *,
        max_tokens: int | None = None,
        desc: str | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> list[LLMAnswer]:
        """Answer many requests: cache hits first, the misses in batches through the backend.

        A tqdm bar on stderr counts the requests sent (``desc`` labels it; the cache hits are
        its initial count), so a long LLM stage shows progress and an ETA. ``json_schema`` is the
        answer's JSON schema: sent as structured output by backends that do (``sends_schema``).
        """
        tokens = max_tokens or self.params.max_tokens
        requests = [_check_messages(m) for m in requests]
        schema = json_schema if self.sends_schema() else None
        bar: Any = None

        def start(missing: int) -> None:
            nonlocal bar
            bar = _progress(
                missing,
                desc or f"llm {self.backend}:{self.params.model}",
                enabled=self.progress and missing > 0,
            )

        failed = 0
        lock = threading.Lock()  # streamed backends answer from several threads

        def answer(batch: list[Messages]) -> list[tuple[str, str | None]]:
            nonlocal failed
            results = (
                self._generate(batch, tokens, schema=schema)
                if schema is not None
                else self._generate(batch, tokens)
            )
            if len(results) != len(batch):
                raise RuntimeError(
                    f"{self.backend}: {len(results)} answers for {len(batch)} requests"
                )
            out = []
            for text, error in results:
                if error is None and not isinstance(text, str):  # never cache what is not text
                    text, error = "", f"backend returned {type(text).__name__}, not text"
                out.append((text if error is None else "", redact(error)))
            with lock:
                self.calls += len(batch)
                bar.update(len(batch))
                failed += sum(1 for _, error in out if error is not None)
                if failed:
                    bar.set_postfix(failed=failed, refresh=False)
            return out

        def encode(messages: Messages, value: tuple[str, str | None]) -> dict[str, Any] | None:
            text, error = value
            return (
                None
                if error is not None
                else {"text": text, "request_hash": request_hash(messages), **self.describe()}
            )

        def decode(
            entry: Any,
        ) -> tuple[str, None] | None:  # an entry of an older version that is not text: ask again
            return (
                (entry["text"], None)
                if isinstance(entry, dict) and isinstance(entry.get("text"), str)
                else None
            )

        got = cached_map(
            self.cache,
            requests,
            lambda m: self.key(m, tokens, schema),
            answer,
            batch_size=self.batch_size(),
            encode=encode,
            decode=decode,
            on_missing=start,
            concurrency=self.concurrency(),
        )
        bar.close()
        return [
            LLMAnswer(text, cached, error, key, request_hash(m))
            for m, (text, error), key, cached in zip(
                requests, got.values, got.keys, got.cached, strict=True
            )
        ]

    def batch_size(self) -> int:
        return 16

    def concurrency(self) -> int:
        """Batches in flight at once (HTTP backends stream; local models: 1)."""
        return 1
