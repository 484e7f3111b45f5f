"""What every metrics file says about where its numbers came from.

The default profile runs on tiny, randomly initialised generator / judge / CLIP models built
locally (no weights can be downloaded here). Such numbers are noise; every output written from
them carries ``random_init: true`` and the list of random models, so no one mistakes them for
results about real models.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RANDOM_INIT_MARKER = "RANDOM_INIT.json"

RANDOM_INIT_WARNING = (
    "Computed from randomly initialised models (default offline profile): the numbers "
    "exercise the pipeline and mean nothing about any real model."
)


def mark_random_init(model_dir: str | Path, description: str) -> None:
    """Drop the marker file into a locally built random model directory."""
    Path(model_dir).mkdir(parents=True, exist_ok=True)
    (Path(model_dir) / RANDOM_INIT_MARKER).write_text(
        json.dumps({"random_init": True, "description": description}, indent=2) + "\n"
    )


def is_random_init(model_ref: str | Path | None) -> bool:
    """True when ``model_ref`` is a local directory carrying the random-init marker."""
    if model_ref is None:
        return False
    path = Path(str(model_ref))
    return path.is_dir() and (path / RANDOM_INIT_MARKER).exists()


def provenance(models: Iterable[tuple[str, str | None]], profile: str | None = None) -> dict[str, Any]:
    """A block to embed in metrics JSON: ``models`` is ``(role, reference)`` pairs."""
    listed = [{"role": role, "model": ref, "random_init": is_random_init(ref)} for role, ref in models]
    random_models = [m["model"] for m in listed if m["random_init"]]
    block: dict[str, Any] = {
        "random_init": bool(random_models),
        "random_init_models": random_models,
        "models": listed,
    }
    if profile is not None:
        block["profile"] = profile
    if random_models:
        block["warning"] = RANDOM_INIT_WARNING
    return block


def merge_provenance(*blocks: dict[str, Any]) -> dict[str, Any]:
    """Combine the provenance of upstream inputs: random if any input was random."""
    models: list[dict[str, Any]] = []
    for block in blocks:
        for model in block.get("models", []):
            if model not in models:
                models.append(model)
    random_models = [m["model"] for m in models if m["random_init"]]
    merged: dict[str, Any] = {
        "random_init": bool(random_models) or any(b.get("random_init") for b in blocks),
        "random_init_models": random_models,
        "models": models,
    }
    if merged["random_init"]:
        merged["warning"] = RANDOM_INIT_WARNING
    return merged


def markdown_banner(block: dict[str, Any] | None) -> str:
    """A warning line to put above a Markdown table computed from random models ("" otherwise)."""
    if not block or not block.get("random_init"):
        return ""
    models = ", ".join(dict.fromkeys(str(m) for m in block.get("random_init_models", []) if m))
    suffix = f" ({models})" if models else ""
    return f"> **RANDOM-INIT WARNING**: {RANDOM_INIT_WARNING}{suffix}\n\n"


def upstream_provenance(paths: list[str]) -> dict[str, Any]:
    """Merge the ``provenance`` blocks of upstream metrics files that exist (random if any is)."""
    blocks = []
    for path in paths:
        if Path(path).exists():
            block = json.loads(Path(path).read_text(encoding="utf-8")).get("provenance")
            if isinstance(block, dict):
                blocks.append(block)
    return merge_provenance(*blocks)
