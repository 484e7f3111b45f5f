"""The DVC command line that ``implicit-bench run`` starts: DVC of this interpreter's own
environment (``python -m dvc``), so a run works without the virtualenv's ``bin`` on ``PATH``
(``No such file or directory: 'dvc'`` after params.yaml was already switched); and what
dvc.yaml declares (its stages, a stage's outputs, the stage that writes a file), read by ``run``
(``--stages``), its report of one run and the errors that name an upstream stage."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from implicit_bench.errors import ConfigError


def dvc_command(*args: str) -> list[str]:
    """``[python, -m, dvc, *args]`` of this interpreter; a one-line ``ConfigError`` when DVC is
    not installed beside implicit-bench (checked before anything is written)."""
    if importlib.util.find_spec("dvc") is None:
        raise ConfigError(
            f"DVC is not installed in this Python environment ({sys.executable}); "
            "install the project with `pip install -e .` (DVC is one of its dependencies)"
        )
    return [sys.executable, "-m", "dvc", *args]


__all__ = ["dvc_command"]


def dvc_stages(dvc_file: str | Path = "dvc.yaml") -> dict[str, dict[str, Any]]:
    """The ``stages`` of a dvc.yaml, as written (a ``foreach`` stage by its base name); none
    without the file."""
    from implicit_bench._util.yamlsafe import load_yaml

    path = Path(dvc_file)
    if not path.is_file():
        return {}
    document = load_yaml(path.read_text(encoding="utf-8"))
    stages = document.get("stages") if isinstance(document, dict) else None
    if not isinstance(stages, dict):
        return {}
    return {str(k): v for k, v in stages.items() if isinstance(v, dict)}


def stage_outs(stage: dict[str, Any]) -> list[str]:
    """The output paths a dvc.yaml stage declares (``outs``, with or without options)."""
    outs = stage.get("outs") or []
    return [str(next(iter(o))) if isinstance(o, dict) else str(o) for o in outs]


def producing_stage(path: str, dvc_file: str = "dvc.yaml") -> str | None:
    """The dvc.yaml stage that declares ``path`` among its outputs (None: none, or no file)."""
    return next(
        (name for name, stage in dvc_stages(dvc_file).items() if str(path) in stage_outs(stage)),
        None,
    )
