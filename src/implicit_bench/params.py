"""Loading ``params.yaml`` and validating its sections.

Each stage reads only the sections it declares in ``dvc.yaml``; each section is validated by a
pydantic model owned by the module that uses it (unknown keys are rejected).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from implicit_bench.errors import ConfigError

DEFAULT_PARAMS = Path("params.yaml")

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())


def format_validation_errors(exc: ValidationError, prefix: str | None = None) -> str:
    """``prefix.loc.path: message; ...`` for every error of a pydantic ValidationError."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        where = ".".join(x for x in (prefix, loc) if x) or "(top)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def load_params(path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: params file not found (run from the repository root)")
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def section(params: dict[str, Any], name: str, model: type[M], path: str | Path = DEFAULT_PARAMS) -> M:
    """Validate ``params[name]`` with ``model``; errors name the file and the key."""
    raw = params.get(name, {})
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid params: {format_validation_errors(exc, name)}") from None
