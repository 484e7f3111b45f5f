"""JUDGEMENTS rows of debiasing runs whose scores are worked out by hand in
tests/unit/debias/test_debias_scoring.py (S, bias, alignment per configuration), shared with the
``debias`` extension's tests in tests/unit/analysis/byo/."""

from __future__ import annotations

import pandas as pd


def debias_rows(config, unit, seed, bias, aligned, judge="qwen", variant="neutral"):
    rows = []
    if bias is not ...:
        rows.append(
            dict(
                unit_id=unit,
                variant=variant,
                seed=seed,
                config=config,
                judge=judge,
                task="rubric",
                value=None if bias is None else str(bias),
                valid=bias is not None,
            )
        )
    if aligned is not ...:
        rows.append(
            dict(
                unit_id=unit,
                variant=variant,
                seed=seed,
                config=config,
                judge=judge,
                task="alignment",
                value=None if aligned is None else ("true" if aligned else "false"),
                valid=aligned is not None,
            )
        )
    return rows


def debias_judgements(extra=()):
    rows = []
    # unmodified: (b, Y) -> Y (1 - b/5)
    #   u1/42: (4, 1) -> 0.2   u1/1042: (2, 1) -> 0.6   u2/42: (5, 0) -> 0   u2/1042: (3, 1) -> 0.4
    for unit, seed, b, y in [
        ("u1", 42, 4, True),
        ("u1", 1042, 2, True),
        ("u2", 42, 5, False),
        ("u2", 1042, 3, True),
    ]:
        rows += debias_rows("unmodified", unit, seed, b, y)
    # rewrite_own: u1/42: (1, 1) -> 0.8   u1/1042: (0, 0) -> 0   u2/42: (2, 1) -> 0.6
    #   u2/1042: rubric invalid, Y = 1 -> no product
    for unit, seed, b, y in [
        ("u1", 42, 1, True),
        ("u1", 1042, 0, False),
        ("u2", 42, 2, True),
        ("u2", 1042, None, True),
    ]:
        rows += debias_rows("rewrite_own", unit, seed, b, y)
    # rewrite_removed: u1: (3, 1) -> 0.4 twice; u2/42: (4, 1) -> 0.2; u2/1042: (0, 0) -> 0
    for unit, seed, b, y in [
        ("u1", 42, 3, True),
        ("u1", 1042, 3, True),
        ("u2", 42, 4, True),
        ("u2", 1042, 0, False),
    ]:
        rows += debias_rows("rewrite_removed", unit, seed, b, y)
    # explicit-prompt images of the unmodified model are not debiasing images: ignored
    rows += debias_rows("unmodified", "u1", 42, 0, True, variant="stereotype")
    rows += list(extra)
    return pd.DataFrame(rows)
