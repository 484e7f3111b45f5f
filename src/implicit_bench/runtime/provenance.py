"""What every metrics file says about where its numbers came from.

The default profile runs on tiny, randomly initialised generator / judge / CLIP models built
locally (no weights can be downloaded here). Such numbers are noise; every output written from
them carries ``random_init: true`` and the list of random models, so no one mistakes them for
results about real models.

The simulated world (docs/world.md) has no model files: its backends are named ``sim:NAME``.
Every output computed from one carries ``simulated: true``, the simulated models and the
SIMULATED warning; Markdown tables get a SIMULATED banner.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RANDOM_INIT_MARKER = "RANDOM_INIT.json"

SIMULATED_PREFIX = "sim:"

SIMULATED_NOTE = (
    "Computed from the simulated world of the default profile (planted truth, simulated "
    "generators and judges; docs/world.md). The numbers test the benchmark's estimators "
    "against known truth and say nothing about any real model."
)
SIMULATED_WARNING = f"SIMULATED: {SIMULATED_NOTE}"

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


def is_simulated(model_ref: str | Path | None) -> bool:
    """True for a simulated-world backend reference (``sim:NAME``)."""
    return model_ref is not None and str(model_ref).startswith(SIMULATED_PREFIX)


def _flag(
    block: dict[str, Any], models: list[dict[str, Any]], simulated_upstream: bool = False
) -> None:
    simulated = [m["model"] for m in models if m.get("simulated") or is_simulated(m.get("model"))]
    if simulated or simulated_upstream:
        block["simulated"] = True
        block["simulated_models"] = list(dict.fromkeys(simulated))
    warnings = [
        w
        for w, on in (
            (SIMULATED_WARNING, block.get("simulated")),
            (RANDOM_INIT_WARNING, block.get("random_init")),
        )
        if on
    ]
    if warnings:
        block["warning"] = " ".join(warnings)


def provenance(
    models: Iterable[tuple[str, str | None]], profile: str | None = None
) -> dict[str, Any]:
    """A block to embed in metrics JSON: ``models`` is ``(role, reference)`` pairs."""
    listed = [
        {
            "role": role,
            "model": ref,
            "random_init": is_random_init(ref),
            **({"simulated": True} if is_simulated(ref) else {}),
        }
        for role, ref in models
    ]
    random_models = list(
        dict.fromkeys(m["model"] for m in listed if m["random_init"])
    )  # each path once
    block: dict[str, Any] = {
        "random_init": bool(random_models),
        "random_init_models": random_models,
        "models": listed,
    }
    if profile is not None:
        block["profile"] = profile
    _flag(block, listed)
    return block


def merge_provenance(*blocks: dict[str, Any]) -> dict[str, Any]:
    """Combine the provenance of upstream inputs: random if any input was random."""
    models: list[dict[str, Any]] = []
    for block in blocks:
        for model in block.get("models", []):
            if model not in models:
                models.append(model)
    random_models = list(dict.fromkeys(m["model"] for m in models if m["random_init"]))
    merged: dict[str, Any] = {
        "random_init": bool(random_models) or any(b.get("random_init") for b in blocks),
        "random_init_models": random_models,
        "models": models,
    }
    _flag(merged, models, any(b.get("simulated") for b in blocks))
    return merged


def markdown_banner(block: dict[str, Any] | None) -> str:
    """Warning lines to put above a Markdown table computed from random models or from the
    simulated world ("" otherwise)."""
    if not block:
        return ""
    out = ""
    if block.get("simulated"):
        out += f"> **SIMULATED**: {SIMULATED_NOTE}\n\n"
    if block.get("random_init"):
        models = ", ".join(dict.fromkeys(str(m) for m in block.get("random_init_models", []) if m))
        suffix = f" ({models})" if models else ""
        out += f"> **RANDOM-INIT WARNING**: {RANDOM_INIT_WARNING}{suffix}\n\n"
    return out


def upstream_provenance(paths: list[str]) -> dict[str, Any]:
    """Merge the ``provenance`` blocks of upstream metrics files that exist (random if any is)."""
    blocks = []
    for path in paths:
        if Path(path).exists():
            block = json.loads(Path(path).read_text(encoding="utf-8")).get("provenance")
            if isinstance(block, dict):
                blocks.append(block)
    return merge_provenance(*blocks)
