"""The contract of ``metrics/summary.json`` (written by ``report.summary.stage``; read by
``implicit-bench diff``, ``exps`` and the results document, docs/compare.md): every value a
number, a bool, a short string or null, at most ``MAX_VALUES`` of them (what ``dvc metrics
show`` prints one column each for). Percentages end in ``_pct``, interval bounds in ``_lo`` /
``_hi``. ``SummaryFile.from_json`` checks a parsed file and returns it typed; a value of the
wrong type is one ``InputError`` naming the file and the key.

The headline keys (``<metric>_pct`` with ``_lo`` / ``_hi``, and their ``_corrected`` twins) are
fields of the model built for ``metric_schema.headline()``, so a new headline metric is checked
here with no edit."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import create_model, model_validator

from implicit_bench.errors import InputError
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.json_contract import Count, Num, Open, parse

#: the most values summary.json may hold
MAX_VALUES = 60

Scalar = int | float | str | bool | None


class SummaryFile(Open):
    """``metrics/summary.json``, typed (build it with ``from_json`` or ``read``)."""

    __pydantic_extra__: dict[str, Scalar]  # a key added by a newer writer: a scalar too

    kg_units: Count = None
    triplets: Count = None
    units_analysed: Count = None
    n_seeds: Count = None
    primary_judge: str | None = None
    a_to_s_pct: Num = None
    corrected_source: str | None = None
    corrected_calibration_items: Count = None
    corrected_condition_number: Num = None
    corrected_warning: str | None = None
    strongest_default_units: Count = None
    strongest_default_success_stereotype_pct: Num = None
    strongest_default_success_anti_pct: Num = None
    blind_agreement_pct: Num = None
    hedges_g_max: Num = None
    position_bias_slot_a_pct: Num = None
    negation_success_pct: Num = None
    negation_strict_success_pct: Num = None
    debias_best_dS_own: Num = None
    debias_best_own: str | None = None
    debias_best_dS_retrieved: Num = None
    debias_best_retrieved: str | None = None
    images: Count = None
    refusal_pct: Num = None
    random_init: bool = False
    simulated: bool = False

    @model_validator(mode="after")
    def _small(self) -> SummaryFile:
        n = len(self.model_fields_set)
        if n > MAX_VALUES:
            raise ValueError(f"{n} values, more than {MAX_VALUES}")
        return self

    @classmethod
    def from_json(cls, payload: Any, path: str | Path) -> SummaryFile:
        """``payload`` (the parsed file at ``path``) checked against the contract."""
        return parse(_model(metric_schema.headline()), payload, path)

    @classmethod
    def read(cls, path: str | Path) -> SummaryFile:
        """The file at ``path``, parsed and checked (an ``InputError`` naming it otherwise)."""
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(path, None, None, f"not valid JSON: {exc}") from None
        return cls.from_json(payload, path)

    def interval(self, key: str) -> tuple[Any, Any, Any]:
        """``(key, key_lo, key_hi)``; None where the file has no such value."""
        return (
            getattr(self, key, None),
            getattr(self, f"{key}_lo", None),
            getattr(self, f"{key}_hi", None),
        )


def headline_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    """The interval keys of the headline metrics ``names``, judged and corrected."""
    return tuple(
        f"{name}{kind}_pct{bound}"
        for name in names
        for kind in ("", "_corrected")
        for bound in ("", "_lo", "_hi")
    )


@cache
def _model(names: tuple[str, ...]) -> type[SummaryFile]:
    """``SummaryFile`` with a number field per headline interval key."""
    fields: dict[str, Any] = {key: (Num, None) for key in headline_keys(names)}
    return create_model("SummaryFile", __base__=SummaryFile, **fields)
