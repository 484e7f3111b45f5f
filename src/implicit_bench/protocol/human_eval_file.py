"""The contract of ``metrics/human_eval.json`` (written by ``human_eval.stage`` and
``implicit-bench import``; the report renders it field by field), beside
``protocol.benchmark_file`` and ``protocol.summary_file``. A field of the wrong
type is an ``InputError`` naming the file and the field (``inter_rater.alpha_ordinal``), one
line, instead of an ``AttributeError`` / ``KeyError`` in a renderer (docs/errors.md). Unknown
keys are allowed: a producer may add keys without breaking the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implicit_bench.protocol.json_contract import Count, Est, Num, Open, parse


class _Versus(Open):
    r: Est | float = None
    mae: Num = None


class _Flips(Open):
    flips: Count = None
    cases: Count = None


class _Screening(Open):
    rule: str | None = None
    threshold: Num = None
    excluded: list[Any] = []


class _InterRater(Open):
    mean_pairwise_r: Num = None
    alpha_ordinal: Num = None


class _Subset(_InterRater):
    cases: Count = None
    images: Count = None
    directional_only: bool | None = None
    human_vs_judge: dict[str, _Versus] = {}


class _HumanEval(Open):
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


def check_human_eval(report: Any, path: str | Path) -> None:
    """``human_eval.json`` holds what the Human evaluation section reads."""
    parse(_HumanEval, report, path)
