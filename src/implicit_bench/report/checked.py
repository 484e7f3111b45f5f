"""Structure checks of the metrics the report renders field by field: the leaderboard of
``metrics/benchmark.json`` (this run's and every other run's or release's given to
``implicit-bench report``) and ``metrics/human_eval.json``. A field of the wrong type is an
``InputError`` naming the file and the field (``leaderboard.rows[2].n_units``), one line,
instead of an ``AttributeError`` / ``KeyError`` in a renderer (docs/errors.md). Unknown keys
are allowed: a producer may add keys without breaking the report."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import Estimate


def _estimate(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None:
        Estimate.from_json(value)  # a ConfigError (a ValueError) names what is wrong
    return value


#: an Estimate's JSON form (docs/metrics.md) or null
Est = Annotated[dict[str, Any] | None, AfterValidator(_estimate)]
Num = float | None  # strict: an int or a float, never a string or a bool
Count = int | None


class _Open(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", protected_namespaces=())


class _Row(_Open):
    config: str
    n_units: Count = None
    default_rate: Est = None
    success_stereotype: Est = None
    success_anti: Est = None
    gap: Est = None
    a_to_s: Est = None
    strongest_success_stereotype: Est = None
    strongest_success_anti: Est = None
    refusal_rate: Est = None
    bias_score: Est = None
    alignment: Est = None
    lean_s: Est = None
    hedges_g: Est = None


class _Pair(_Open):
    a: str
    b: str
    metric: str
    n_units: Count = None
    difference: Est = None
    p: Num = None
    p_holm: Num = None
    resolved: bool = False


class _BesideRow(_Open):
    config: str
    source: str
    n_units: Count = None
    requested: Count = None
    returned: Count = None
    refused: Count = None
    missing: Count = None
    judged: Count = None
    bias_score: Est = None
    alignment: Est = None
    note: str | None = None


class _BesidePair(_Pair):
    a_source: str
    b_source: str
    note: str | None = None


class _Beside(_Open):
    rows: list[_BesideRow] | None = None
    pairs: list[_BesidePair] | None = None
    alpha: Num = None


class _Board(_Open):
    rows: list[_Row] | None = None
    pairs: list[_Pair] | None = None
    alpha: Num = None
    min_p_holm: Num = None
    benchmark_sha256: str | None = None
    beside_release: _Beside | None = None


class _Benchmark(_Open):
    leaderboard: _Board | None = None


class _Versus(_Open):
    r: Est | float = None
    mae: Num = None


class _Flips(_Open):
    flips: Count = None
    cases: Count = None


class _Screening(_Open):
    rule: str | None = None
    threshold: Num = None
    excluded: list[Any] = []


class _InterRater(_Open):
    mean_pairwise_r: Num = None
    alpha_ordinal: Num = None


class _Subset(_InterRater):
    cases: Count = None
    images: Count = None
    directional_only: bool | None = None
    human_vs_judge: dict[str, _Versus] = {}


class _HumanEval(_Open):
    n_raters: Count = None
    n_cases: Count = None
    n_ratings: Count = None
    kg_validity: dict[str, Num] = {}
    mean_rating: dict[str, Num] = {}
    inter_rater: _InterRater = _InterRater()
    human_vs_judge: dict[str, _Versus] = {}
    direction_flips: dict[str, _Flips] = {}
    screening: _Screening = _Screening()
    by_bias_type: dict[str, _Subset] | None = None
    groups: dict[str, _Subset] | None = None


def _field(loc: tuple[Any, ...], prefix: str) -> str:
    """``("rows", 2, "n_units")`` -> ``leaderboard.rows[2].n_units``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(("function-", "union[", "float", "int", "dict[", "str")):
            out += f".{part}" if out else str(part)
    return out


def _check(model: type[BaseModel], payload: Any, path: str | Path, what: str) -> None:
    if not isinstance(payload, dict):
        raise InputError(path, None, None, f"not a JSON object ({type(payload).__name__})")
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        got = first.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {repr(got)[:80]})"
        msg = re.sub(r" or instance of \w+", "", first["msg"])
        raise InputError(path, None, _field(first["loc"], what) or None, msg + shown) from None


def check_leaderboard(benchmark: Any, path: str | Path) -> None:
    """``benchmark.json``'s ``leaderboard`` holds what the Leaderboard section reads."""
    _check(_Benchmark, benchmark, path, "")


def check_human_eval(report: Any, path: str | Path) -> None:
    """``human_eval.json`` holds what the Human evaluation section reads."""
    _check(_HumanEval, report, path, "")
