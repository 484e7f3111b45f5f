"""Slices and wide views of the validated judgements table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from implicit_bench.errors import ConfigError
from implicit_bench.protocol.schema import VARIANTS


def rows(
    judgements: pd.DataFrame,
    task: str,
    config: str | None = None,
    judge: str | None = None,
    seeds: Sequence[int] | None = None,
    units: Sequence[str] | pd.Index | None = None,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of one task (and config / judge / seeds / units when given); ``columns``: only
    those (copying a row copies every column: a caller names what it reads).

    The unit test runs on the rows the other tests kept (the text column's set lookup is the
    costly one), so the rows and their order are those of one mask over the whole table."""
    mask = judgements["task"] == task
    if config is not None:
        mask &= judgements["config"] == config
    if judge is not None:
        mask &= judgements["judge"] == judge
    if seeds is not None:
        mask &= judgements["seed"].isin(list(seeds))
    out = judgements[mask] if columns is None else judgements.loc[mask, list(columns)]
    if units is not None:
        out = out[out["unit_id"].isin(set(units))]
    return out


WIDE_SCORE = ("unit_id", "seed", "variant", "score")  # the columns ``wide(..., "score")`` reads


def wide(frame: pd.DataFrame, column: str, variants: Sequence[str] = VARIANTS) -> pd.DataFrame:
    """One row per (unit_id, seed), one column per variant (NaN / None where missing or invalid)."""
    sub = frame[frame["variant"].isin(variants)]
    out = sub.set_index(["unit_id", "seed", "variant"])[column].unstack("variant")
    return out.reindex(columns=list(variants))


def resolve_config(judgements: pd.DataFrame, task: str, config: str | None, param: str) -> str:
    """The configuration named by a param, or the only one with rows of ``task``."""
    present = sorted(judgements.loc[judgements["task"] == task, "config"].unique())
    if config is not None:
        if config not in present:
            raise ConfigError(
                f"{param}: config '{config}' has no {task} judgements; present: {present}"
            )
        return config
    if len(present) != 1:
        raise ConfigError(
            f"{param}: set the configuration to analyse; {task} judgements exist for {present}"
        )
    return present[0]


def resolve_judges(
    judgements: pd.DataFrame, task: str, config: str, judges: Sequence[str] | None, param: str
) -> list[str]:
    """The judges named by a param (each must have rows), or every judge of ``task`` sorted."""
    present = sorted(
        judgements.loc[
            (judgements["task"] == task) & (judgements["config"] == config), "judge"
        ].unique()
    )
    if judges is None:
        return present
    missing = [j for j in judges if j not in present]
    if missing:
        raise ConfigError(
            f"{param}: no {task} judgements of config '{config}' for {missing}; present: {present}"
        )
    return list(judges)
