"""Agreement between any two judges or two deployments of one judge on the same images
(paper Appendix C.2: "A local and an API deployment of Qwen3-VL agree on 96% of 450 images
(kappa = 0.94)"): exact agreement and Cohen's kappa (``sklearn.metrics.cohen_kappa_score``),
each with a percentile interval from a bootstrap over units (every image of a drawn unit kept).

``implicit-bench agreement --first FILE[:JUDGE] --second FILE[:JUDGE]`` (the command:
``cli/agreement.py``; docs/analysis.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.agreement import kappa_from_counts
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.errors import ConfigError

KEY = ["unit_id", "variant", "seed", "config", "task"]


def side(
    frame: pd.DataFrame, judge: str | None, task: str, config: str | None, where: str
) -> pd.DataFrame:
    """The valid rows of one side: one judge (required when the file holds several), one task,
    optionally one configuration."""
    rows = frame[(frame["task"] == task) & frame["valid"].astype(bool)]
    if config is not None:
        rows = rows[rows["config"].astype(str) == config]
    judges = sorted(rows["judge"].astype(str).unique())
    if judge is None:
        if len(judges) != 1:
            raise ConfigError(
                f"{where}: {len(judges)} judges with valid '{task}' rows "
                f"({', '.join(judges) or 'none'}); name one as FILE:JUDGE"
            )
        judge = judges[0]
    rows = rows[rows["judge"].astype(str) == judge]
    if rows.empty:
        raise ConfigError(
            f"{where}: no valid '{task}' rows of judge {judge!r}"
            + (f" in config {config!r}" if config else "")
        )
    return rows.assign(order=rows["order"] if "order" in rows.columns else None)


def paired(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Images (and option orders, for blind rows) both sides answered:
    key columns, first, second."""
    key = KEY + ["order"]
    a = (
        first[key + ["value"]]
        .astype({"order": object})
        .fillna({"order": ""})
        .rename(columns={"value": "first"})
    )
    b = (
        second[key + ["value"]]
        .astype({"order": object})
        .fillna({"order": ""})
        .rename(columns={"value": "second"})
    )
    for frame, name in ((a, "first"), (b, "second")):
        dup = frame.duplicated(key)
        if dup.any():
            raise ConfigError(
                f"the {name} side has {int(dup.sum())} duplicate judgement "
                f"key(s), e.g. {frame[dup].iloc[0][key].to_dict()}"
            )
    return a.merge(b, on=key, how="inner").astype({"first": str, "second": str})


def pair_agreement(pairs: pd.DataFrame, boot: Bootstrap, stream: str) -> dict[str, Any]:
    """Agreement share and Cohen's kappa with unit-bootstrap intervals, the confusion table."""
    from sklearn.metrics import cohen_kappa_score

    if pairs.empty:
        raise ConfigError("the two sides share no judged image")
    labels = sorted(set(pairs["first"]) | set(pairs["second"]))
    k = len(labels)
    code = {v: i for i, v in enumerate(labels)}
    units = sorted(pairs["unit_id"].unique())
    u = pairs["unit_id"].map({x: i for i, x in enumerate(units)}).to_numpy()
    cell = pairs["first"].map(code).to_numpy() * k + pairs["second"].map(code).to_numpy()
    counts = np.zeros((len(units), k * k))
    np.add.at(counts, (u, cell), 1.0)
    agree = counts[:, [i * k + i for i in range(k)]].sum(axis=1)
    total = counts.sum(axis=1)
    share, _ = boot.ratio(agree, total, f"{stream}/agreement")
    weights = boot.weights(len(units), f"{stream}/kappa")
    kappa = (
        cohen_kappa_score(pairs["first"], pairs["second"], labels=labels) if k > 1 else float("nan")
    )
    reps = kappa_from_counts(weights @ counts, k)
    table = counts.sum(axis=0).reshape(k, k).astype(int)
    return {
        "n_images": int(len(pairs)),
        "n_units": int(len(units)),
        "agreement": share,
        "cohen_kappa": boot.interval(float(kappa), reps, f"{stream}/kappa", len(units)),
        "labels": labels,
        "confusion": {"rows": "first", "columns": "second", "counts": table.tolist()},
        "by_variant": {
            str(v): float((g["first"] == g["second"]).mean()) for v, g in pairs.groupby("variant")
        },
    }


def file_agreement(
    first: tuple[list[str], str | None],
    second: tuple[list[str], str | None],
    task: str,
    config: str | None,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Agreement of two sides, each (judgement files, judge or None): ``pair_agreement``'s
    figures and the bootstrap block."""
    from implicit_bench.protocol.tables.judgements import read_judgements

    sides = [
        side(read_judgements(paths), judge, task, config, name)
        for name, (paths, judge) in (("first", first), ("second", second))
    ]
    boot = Bootstrap(n_boot, seed, 0.95)
    result = pair_agreement(paired(sides[0], sides[1]), boot, f"agreement/{task}")
    return {**result, "bootstrap": boot.block()}
