"""Loading ``params.yaml`` and validating its sections.

Each stage reads only the sections it declares in ``dvc.yaml``; each section is validated by a
pydantic model owned by the module that uses it (unknown keys are rejected).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from implicit_bench._util.yamlsafe import load_yaml_file
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
SEEDS_MAX = 1000  # seeds per list (render.seeds, evaluate.seeds, ...) and evaluate.n_seeds
BOOTSTRAP_N_MAX = 100_000  # bootstrap resamples (1e8 on 2 units took 14.8 GB; docs/errors.md)


def _whole_number(value: Any) -> Any:
    """Counts and seeds are integers: ``true`` (YAML for 1) and ``1e6`` (a float) are refused."""
    if isinstance(value, (bool, float)):
        raise ValueError(f"must be an integer, not {value!r}")
    return value


def _unique(values: list[Any]) -> list[Any]:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"repeated value(s) {repeated}: each may be given once")
    return values


UniqueNames = Annotated[list[str], AfterValidator(_unique)]  # catalogue names, each once
Count = Annotated[int, BeforeValidator(_whole_number)]
Seed = Annotated[Count, Field(ge=0, le=SEED_MAX)]
Seeds = Annotated[list[Seed], Field(min_length=1, max_length=SEEDS_MAX), AfterValidator(_unique)]
PositiveInt = Annotated[Count, Field(ge=1)]
NonNegInt = Annotated[Count, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Level = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]


class BootstrapParams(StrictModel):
    """The one bootstrap block: top-level ``bootstrap`` in params.yaml, read by every stage that
    draws intervals; a stage's own ``bootstrap`` keys override it (``section(inherit=...)``)."""

    n: Annotated[PositiveInt, Field(le=BOOTSTRAP_N_MAX)] = 1000  # resamples
    seed: Seed = 42
    level: Level = 0.95  # interval coverage
    # interval method per estimand (default percentile): "bca" where the coverage benchmark
    # shows the percentile interval undercovering (docs/correction.md, benchmarks/README.md)
    method: dict[str, Literal["percentile", "bca", "studentized", "basic"]] = {}


class BaseParams(StrictModel):
    """params.yaml section ``base``: the profile's name, the model-call cache directory
    (docs/experiments.md) and the stage preflight switch. Read with ``base_params(params)``."""

    profile: str | None = None
    cache_dir: str | None = None  # relative to the params file's directory
    preflight: bool = True

    @field_validator("cache_dir")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("blank: leave it null for <repository root>/cache")
        return value


class SubsetParams(StrictModel):
    """A seeded subset of units: ``max_units`` of them, 0 = every unit (the one spelling of
    "all"; null is rejected). Used by ``subset`` (triplets) and ``debias.subset``."""

    max_units: NonNegInt = 0
    seed: Seed = 42
    # stratified: bias types take turns (balanced rounds); random: a uniformly random order of
    # all units, the order the anytime-valid intervals of `run --sequential` assume
    order: Literal["stratified", "random"] = "stratified"

    @field_validator("max_units", mode="before")
    @classmethod
    def _zero_is_all(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("null is not a size: write 0 for every unit")
        return value


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
    data = load_yaml_file(path) or {}  # not UTF-8, not YAML, over a bound: one line naming it
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{path}: top-level keys must be names, got {bad[0]!r}")
    return data


def block(params: dict[str, Any], name: str, path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """``params[name]`` as a mapping ({} when absent or null); anything
    else is a ``ConfigError``."""
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}: '{name}' must be a mapping of keys, got {type(value).__name__} {value!r}"[
                :300
            ]
        )
    return dict(value)


def section(
    params: dict[str, Any],
    name: str,
    model: type[M],
    path: str | Path = DEFAULT_PARAMS,
    *,
    inherit: dict[str, str] | None = None,
    attach: dict[str, str] | None = None,
) -> M:
    """Validate ``params[name]`` with ``model``; errors name the file and the key.

    ``inherit`` maps a top-level block to a dotted key of the section (``{"bootstrap":
    "bootstrap"}``): the section's own keys there win over the top-level block's (per-stage
    override). A top-level scalar (``{"primary_order": "primary_order"}``) sets that key of the
    section unless the section sets it itself. ``attach`` maps a top-level catalogue to a key of the
    section's model (``{"generators": "configs"}``): the key holds the catalogue's entries, and a
    section that sets it itself is an error (that layout moved to the catalogue). Declare both in
    the stage's DVC params (docs/contracts.md, "Configuration").
    """
    raw = params.get(name, {})
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: invalid params: {name}: must be a mapping of keys, got {type(raw).__name__}"
        )
    raw = dict(raw or {})
    for top, key in (inherit or {}).items():
        shared = params.get(top)
        if shared is None:  # not set: the section's own keys or its model's defaults
            continue
        if not isinstance(shared, dict):  # a top-level setting (primary_order)
            raw.setdefault(key, shared)
            continue
        raw = _inherit(raw, key.split("."), block(params, top, path))
    for top, key in (attach or {}).items():
        if key in raw:
            raise ConfigError(
                f"{path}: {name}.{key} moved to the top-level '{top}' "
                "catalogue (docs/contracts.md, Configuration)"
            )
        raw[key] = catalogue(params, top, path)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: invalid params: {format_validation_errors(exc, name)}"
        ) from None


def base_params(params: dict[str, Any], path: str | Path = DEFAULT_PARAMS) -> BaseParams:
    """The validated ``base`` section (defaults when absent): ``base_params(raw).profile``."""
    return section(params, "base", BaseParams, path)


def _inherit(section: dict[str, Any], keys: list[str], defaults: dict[str, Any]) -> dict[str, Any]:
    """``section`` with ``defaults`` under ``keys``; keys already set there win."""
    head, *rest = keys
    own = section.get(head)
    if rest:
        return {**section, head: _inherit(dict(own or {}), rest, defaults)}
    return (
        {**section, head: {**defaults, **(own or {})}}
        if own is None or isinstance(own, dict)
        else section
    )


# ----- catalogues: models defined once at the top level,
# referenced by name ------------------------
CATALOGUES = ("llms", "generators", "judges")


def catalogue(
    params: dict[str, Any], kind: str, path: str | Path = DEFAULT_PARAMS
) -> dict[str, dict[str, Any]]:
    """The top-level catalogue ``kind`` (``llms``, ``generators``,
    ``judges``): name -> backend block.

    Names must be safe (they become folder names); each block is a mapping with a ``backend``
    that the kind's registry validates where the entry is used (``Registry.validate``)."""
    entries = block(params, kind, path)
    for name, value in entries.items():
        try:
            check_name(str(name), f"{kind} entry")
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        if not isinstance(value, dict):
            raise ConfigError(
                f"{path}: {kind}.{name} must be a mapping of backend "
                f"keys, got {type(value).__name__}"
            )
    return {str(k): dict(v) for k, v in entries.items()}


def check_refs(
    names: list[str] | tuple[str, ...] | str | None,
    known: dict[str, Any] | list[str] | tuple[str, ...],
    where: str,
    kind: str,
    path: str | Path = DEFAULT_PARAMS,
) -> None:
    """Every name in ``names`` (one name, a list, or None: nothing to check) is in ``known``;
    otherwise a one-line ``ConfigError`` naming the key, the name and the known names."""
    if names is not None and not isinstance(names, str | list | tuple):
        raise ConfigError(
            f"{path}: {where} must name {kind} entries (a name or a "
            f"list), got {type(names).__name__}"
        )
    listed = [names] if isinstance(names, str) else list(names or [])
    for name in listed:
        if name not in known:
            raise ConfigError(
                f"{path}: {where} = {name!r} is not in {kind} (known: "
                f"{', '.join(sorted(known)) or 'none'})"
            )


# Every params key that names a catalogue entry ("*" matches any key). A stage checks the
# names it uses when it runs; check_references checks them all at once (``implicit-bench
# profile`` and ``plan``, and tests/unit/params/test_catalogues.py for the shipped params and
# profiles).
# select / evaluate name image stores and judges of the JUDGEMENTS tables (also without a
# catalogue, in `implicit-bench analyze`): at run time the analysis checks them against the
# data; here against the catalogues. The CLIP blind judge (``clip.judge``) counts as a judge.
# (Not listed: the negation stage's optional presence judge, checked against its judgements; a
# constant here naming that section would make every stage seem to read prompts/negation.txt
# to tests/helpers/dvc_deps.py, which matches prompt stems against the closure's string constants.)
REFERENCES: tuple[tuple[str, str], ...] = (
    ("kg.llm", "llms"),
    ("triplets.llm", "llms"),
    ("negation_prompts.llm", "llms"),
    ("scene_check_prompts.llm", "llms"),
    ("construction_ablation.writer", "llms"),
    ("construction_ablation.raters", "llms"),
    ("debias.rewriter", "llms"),
    ("render.run", "generators"),
    ("debias.generator", "generators"),
    ("diversity_study.generator", "generators"),
    ("select.config", "generators"),
    ("evaluate.config", "generators"),
    ("evaluate.groupings.*.config", "generators"),
    ("judge.configs", "generators"),
    ("judge.tasks.*.configs", "generators"),
    ("human_eval.config", "generators"),
    ("judge.tasks.*.judges", "judges"),
    ("bench.generators.*.generator", "generators"),
    ("bench.tasks.*.judges", "judges"),
    ("debias.scoring.rubric_judge", "judges"),
    ("debias.scoring.alignment_judge", "judges"),
    ("select.judges", "judges"),
    ("evaluate.blind_judges", "judges"),
    ("evaluate.rubric_judges", "judges"),
    ("evaluate.groupings.*.judge", "judges"),
)


# keys that name an image store: a generators entry or a benchmark-phase store (bench.generators)
STORE_REFERENCES = ("evaluate.config", "evaluate.groupings.*.config", "human_eval.config")


def _at(node: Any, parts: list[str], where: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every match of ``parts`` under ``node``; ``*``
    matches any key or index."""
    if not parts:
        return [(where, node)]
    head, *rest = parts
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    return [
        hit
        for key, value in items
        if head in ("*", str(key))
        for hit in _at(value, rest, f"{where}.{key}" if where else str(key))
    ]


def check_references(params: dict[str, Any], path: str | Path = DEFAULT_PARAMS) -> None:
    """Every name in ``REFERENCES`` is an entry of its catalogue (one-line ``ConfigError``)."""
    known = {kind: catalogue(params, kind, path) for kind in CATALOGUES}
    # raw: the references are checked before (and apart from) each section's model
    clip_judge = (
        (params.get("clip") or {}).get("judge") if isinstance(params.get("clip"), dict) else None
    )
    bench = params.get("bench") if isinstance(params.get("bench"), dict) else {}
    stores = list((bench or {}).get("generators") or {})  # the benchmark phase's image stores
    for key, kind in REFERENCES:
        names = known[kind] if kind != "judges" or not clip_judge else [*known[kind], clip_judge]
        if key in STORE_REFERENCES:
            names = [*names, *stores]
        for where, value in _at(params, key.split(".")):
            check_refs(value, names, where, kind, path)
