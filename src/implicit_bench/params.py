"""Loading ``params.yaml`` and validating its sections.

Each stage reads only the sections it declares in ``dvc.yaml``; each section is validated by a
pydantic model owned by the module that uses it (unknown keys are rejected).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from implicit_bench.errors import ConfigError

DEFAULT_PARAMS = Path("params.yaml")

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())


# ----- bounded types shared by every params model (docs/errors.md, "Valid ranges") -------------
SEED_MAX = 2**53 - 1  # seeds are integers 0..2^53-1: exact in a float, so CSV/JSON keep them
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(name: str, what: str = "name") -> str:
    """A name that becomes a file or folder name (configs, profiles): letters, digits, ``.``,
    ``_`` and ``-``, starting with a letter or digit, no ``..``; otherwise ``ValueError``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(
            f"{what} {name!r} is not a safe name: use letters, digits, '.', '_' and '-' "
            "(start with a letter or digit; no path separators, no '..')"
        )
    return name


SafeName = Annotated[str, AfterValidator(lambda v: check_name(v, "configuration name"))]
Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
Seeds = Annotated[list[Seed], Field(min_length=1)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]


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
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{path}: top-level keys must be names, got {bad[0]!r}")
    return data


def block(params: dict[str, Any], name: str, path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """``params[name]`` as a mapping ({} when absent or null); anything else is a ``ConfigError``."""
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: '{name}' must be a mapping of keys, got {type(value).__name__} {value!r}"[:300])
    return dict(value)


def section(params: dict[str, Any], name: str, model: type[M], path: str | Path = DEFAULT_PARAMS) -> M:
    """Validate ``params[name]`` with ``model``; errors name the file and the key."""
    raw = params.get(name, {})
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{path}: invalid params: {name}: must be a mapping of keys, got {type(raw).__name__}")
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid params: {format_validation_errors(exc, name)}") from None
