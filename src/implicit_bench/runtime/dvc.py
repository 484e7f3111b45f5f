"""The DVC command line that ``implicit-bench run`` starts: DVC of this interpreter's own
environment (``python -m dvc``), so a run works without the virtualenv's ``bin`` on ``PATH``
(``No such file or directory: 'dvc'`` after params.yaml was already switched)."""

from __future__ import annotations

import importlib.util
import sys

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


def producing_stage(path: str, dvc_file: str = "dvc.yaml") -> str | None:
    """The dvc.yaml stage that declares ``path`` among its outputs (None: none, or no file)."""
    from pathlib import Path

    from implicit_bench._util.yamlsafe import load_yaml

    if not Path(dvc_file).is_file():
        return None
    document = load_yaml(Path(dvc_file).read_text(encoding="utf-8"))
    stages = document.get("stages") if isinstance(document, dict) else None
    for name, stage in (stages or {}).items() if isinstance(stages, dict) else []:
        for out in stage.get("outs", []) if isinstance(stage, dict) else []:
            declared = next(iter(out)) if isinstance(out, dict) else str(out)
            if str(declared) == str(path):
                return str(name)
    return None
