"""Agreement between any two judges or two deployments of one judge on the same images
(paper Appendix C.2: "A local and an API deployment of Qwen3-VL agree on 96% of 450 images
(kappa = 0.94)"): exact agreement and Cohen's kappa (``sklearn.metrics.cohen_kappa_score``),
each with a percentile interval from a bootstrap over units (every image of a drawn unit kept).

``implicit-bench agreement --first FILE[:JUDGE] --second FILE[:JUDGE]`` (docs/analysis.md).
"""

from __future__ import annotations

from typing import Any

import click
import numpy as np
import pandas as pd

from implicit_bench.analysis.bootstrap import Bootstrap, safe_div
from implicit_bench.errors import ConfigError, InputError

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


def kappa_from_counts(counts: np.ndarray, k: int) -> np.ndarray:
    """Cohen's kappa of flattened k x k confusion counts (rows: last axis k*k)."""
    m = counts.reshape(*counts.shape[:-1], k, k)
    n = m.sum(axis=(-1, -2))
    po = safe_div(np.trace(m, axis1=-2, axis2=-1), n)
    pe = safe_div((m.sum(axis=-1) * m.sum(axis=-2)).sum(axis=-1), n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


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


def _spec(text: str) -> tuple[list[str], str | None]:
    """FILE[,FILE...][:JUDGE]: the part after the last colon is a judge name unless it looks
    like a path (contains '/' or '.')."""
    head, colon, tail = text.rpartition(":")
    if colon and tail and "/" not in tail and "." not in tail:
        return head.split(","), tail
    return text.split(","), None


@click.command("agreement")
@click.option(
    "--first",
    "first",
    required=True,
    help="judgements FILE[,FILE...][:JUDGE] of the first judge or deployment",
)
@click.option(
    "--second", "second", required=True, help="judgements FILE[,FILE...][:JUDGE] of the second"
)
@click.option(
    "--task",
    default="blind",
    show_default=True,
    help="judge task compared (blind, rubric, alignment, ...)",
)
@click.option(
    "--config",
    default=None,
    help="generator configuration (default: every configuration both sides judged)",
)
@click.option(
    "--n-boot", type=int, default=1000, show_default=True, help="bootstrap resamples of units"
)
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="metrics JSON to write")
def agreement_command(
    first: str, second: str, task: str, config: str | None, n_boot: int, seed: int, out: str
) -> None:
    """Exact agreement (%) and Cohen's kappa, with unit-bootstrap 95% intervals."""
    from implicit_bench._util.files import write_json
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.analysis.report import clean
    from implicit_bench.protocol.tables.judgements import read_judgements

    try:
        sides = []
        for name, text in (("first", first), ("second", second)):
            paths, judge = _spec(text)
            sides.append((side(read_judgements(paths), judge, task, config, name), paths))
        boot = Bootstrap(n_boot, seed, 0.95)
        result = pair_agreement(paired(sides[0][0], sides[1][0]), boot, f"agreement/{task}")
    except (ConfigError, InputError) as exc:
        raise click.ClickException(str(exc)) from None
    result = {
        "first": first,
        "second": second,
        "task": task,
        "config": config,
        **result,
        "bootstrap": boot.block(),
    }
    write_json(out, clean(result))
    a, k = result["agreement"], result["cohen_kappa"]
    click.echo(
        f"agreement: {result['n_images']} images of "
        f"{result['n_units']} units; agree {100 * a['value']:.1f}% "
        f"{[round(100 * x, 1) for x in a['ci'] or []]}, kappa {k['value']:.3f} "
        f"{[round(x, 3) for x in k['ci'] or []]} -> {out}"
    )
