"""Where each OpenAI-compatible server reads a JSON schema (``server:`` of an ``openai`` LLM or
judge entry; docs/llm-backends.md, "Servers").

The chat-completions protocol is shared, structured output is not: OpenAI and SGLang read
``response_format: {type: json_schema, json_schema: {name, schema}}``; vLLM its own
``structured_outputs: {json: schema}``; llama.cpp (``llama-server`` and llama-cpp-python's
server) ``response_format: {type: json_object, schema: schema}`` (llama-cpp-python answers HTTP
500 to ``json_schema``); TGI ``response_format: {type: json_object, value: schema}``;
``transformers serve`` ignores every form (it cannot constrain). ``auto`` probes the server once
(:func:`probe`): a request whose prompt asks for no JSON, under each form in turn, and the first
form whose answer is the probe schema's JSON object is the one the server honoured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import httpx

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench.runtime.httpretry import RetryPolicy, send

Server = Literal["openai", "vllm", "sglang", "llama_cpp", "transformers", "tgi", "auto"]
SERVERS: tuple[str, ...] = ("openai", "vllm", "sglang", "llama_cpp", "transformers", "tgi", "auto")
#: servers whose schema placement is known to be ignored: the schema is not sent at all
UNCONSTRAINED = frozenset({"transformers"})
#: the forms ``auto`` tries, in order (sglang reads the openai form)
PROBE_ORDER: tuple[str, ...] = ("openai", "llama_cpp", "vllm", "tgi")
PROBE_SCHEMA: dict[str, Any] = {
    "name": "probe",
    "schema": {
        "type": "object",
        "properties": {"probe_ok": {"type": "boolean"}},
        "required": ["probe_ok"],
        "additionalProperties": False,
    },
}
PROBE_PROMPT = "Say hello in one word."  # asks for no JSON: only a constraint gives probe_ok


def schema_fields(server: str, named: dict[str, Any]) -> dict[str, Any]:
    """The request fields that carry ``named`` (``{"name", "schema"}``, as
    :func:`implicit_bench.backends.llm.structured.answer_schema` builds it) to ``server``; ``{}``
    where
    the server cannot constrain."""
    schema = named.get("schema", named)
    if server in ("openai", "sglang"):
        return {
            "response_format": {"type": "json_schema", "json_schema": {**named, "strict": False}}
        }
    if server == "vllm":
        return {"structured_outputs": {"json": schema}}
    if server == "llama_cpp":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if server == "tgi":
        return {"response_format": {"type": "json_object", "value": schema}}
    if server in UNCONSTRAINED:
        return {}
    raise ValueError(f"unknown server dialect {server!r} (one of {', '.join(SERVERS)})")


def _probe_answer(response: httpx.Response) -> bool:
    """Whether a probe answer is the probe schema's object (the server constrained it). Both
    the body and its text are read with ``jsonparse.loads_strict`` (nesting too deep is a
    ValueError, not a RecursionError)."""
    try:
        text = loads_strict(response.content)["choices"][0]["message"]["content"]
        value = loads_strict(text) if isinstance(text, str) else None
    except (ValueError, KeyError, IndexError, TypeError):
        return False
    return (
        isinstance(value, dict)
        and set(value) == {"probe_ok"}
        and isinstance(value["probe_ok"], bool)
    )


def probe(
    client: httpx.Client,
    url: str,
    model: str,
    headers: dict[str, str],
    timeout: float,
    max_tokens_field: str = "max_tokens",
    *,
    deadline_s: float | None = None,
    max_response_bytes: int = 64 << 20,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[str | None, list[str]]:
    """(the first form of :data:`PROBE_ORDER` the server honoured, or None; one note per form
    tried). One request per form, no retry; a form the server rejects or ignores is skipped.

    Every bound holds: ``timeout`` per read, ``deadline_s`` (default ``timeout``) for all the
    forms together (a server trickling a byte at a time cannot hold it longer), each answer
    at most ``max_response_bytes`` (streamed and cut, never read whole), and its JSON nested
    no deeper than Python's parser takes (a deeper answer is an ignored form)."""
    notes: list[str] = []
    deadline = clock() + (timeout if deadline_s is None else deadline_s)
    for server in PROBE_ORDER:
        left = deadline - clock()
        if left <= 0:
            notes.append(f"{server}: not tried (deadline of {deadline_s or timeout:g} s)")
            continue
        body = {
            "model": model,
            "messages": [{"role": "user", "content": PROBE_PROMPT}],
            max_tokens_field: 16,
            "temperature": 0,
            **schema_fields(server, PROBE_SCHEMA),
        }
        policy = RetryPolicy(
            max_attempts=1,
            timeout_s=min(timeout, left),
            deadline_s=left,
            max_response_bytes=max_response_bytes,
        )
        result = send(client, "POST", url, policy, clock=clock, json=body, headers=headers)
        response = result.response
        if response is None:
            notes.append(f"{server}: {result.error}")
        elif response.status_code >= 400:
            notes.append(f"{server}: HTTP {response.status_code}")
        elif _probe_answer(response):
            notes.append(f"{server}: honoured")
            return server, notes
        else:
            notes.append(f"{server}: ignored")
    return None, notes


__all__ = ["PROBE_ORDER", "SERVERS", "UNCONSTRAINED", "Server", "probe", "schema_fields"]
