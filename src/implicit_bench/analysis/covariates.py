"""Covariates of the anytime-valid sequences: what is known about every unit before a run.

``--covariates`` names a source of per-unit values known for the whole unit set before the
new model renders anything (docs/analysis.md, "Covariate-assisted sequences"):

- ``release``: the authors' release of the workspace (``benchmark`` or
  ``evaluate.beside_release`` in the params): its four Table 4 generators' neutral rubric and
  alignment judgements (``release.beside.release_table4``);
- a path: a checkout or .zip of the release (as ``release``), or a folder of units and
  judgements tables (``units.csv|parquet``, ``judgements*.csv|parquet``: an `implicit-bench
  import` output, or a user's earlier run);
- ``none``: no covariates (the plain sequences).

Per Table 4 metric (``bias_score``: mean neutral rubric score of the configuration's first
rubric judge, by name; ``alignment``: share of neutral images judged aligned) one column per
configuration of the source, the per-unit mean over the unit's valid images (NaN: none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from implicit_bench.errors import ConfigError

METRIC_TASKS = {"bias_score": "rubric", "alignment": "alignment"}


@dataclass
class Covariates:
    """Per metric, a unit_id-indexed frame with one column per source configuration."""

    source: str
    columns: dict[str, pd.DataFrame] = field(default_factory=dict)

    def for_estimand(self, metric: str, exclude: set[str]) -> pd.DataFrame | None:
        """The columns of ``metric`` less the configurations in ``exclude`` (the estimand's
        own: a configuration never predicts itself)."""
        frame = self.columns.get(metric)
        if frame is None:
            return None
        keep = [c for c in frame.columns if c not in exclude]
        return frame[keep] if keep else None


def unit_means(judgements: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per metric, the per-unit mean valid neutral score of each configuration (its first
    judge by name), one column per configuration."""
    out: dict[str, pd.DataFrame] = {}
    valid = judgements["valid"].astype(bool) & (judgements["variant"] == "neutral")
    for metric, task in METRIC_TASKS.items():
        sub = judgements[valid & (judgements["task"] == task)]
        if sub.empty:
            continue
        first = sub.groupby("config")["judge"].transform(lambda s: sorted(s.astype(str))[0])
        sub = sub[sub["judge"].astype(str) == first]
        means = sub.groupby(["unit_id", "config"])["score"].mean().unstack("config")
        means.index = means.index.astype(str)
        means.columns = [str(c) for c in means.columns]
        out[metric] = means
    return out


def load_covariates(source: str, release_path: str | None = None) -> Covariates | None:
    """The covariates of ``source`` (``release``, a path or ``none``)."""
    if source == "none":
        return None
    if source == "release":
        if not release_path:
            raise ConfigError(
                "--covariates release: no release in the params (set `benchmark` or "
                "`evaluate.beside_release`), or pass --covariates PATH"
            )
        return _from_release(release_path)
    path = Path(source)
    if not path.exists():
        raise ConfigError(f"--covariates {source}: no such file or folder (or: release, none)")
    if path.is_dir() and any(p.stem == "units" for p in path.iterdir()):
        from implicit_bench.planning.target_width import TABLE_SUFFIXES, source_tables

        if not any(
            p.stem.startswith("judgements") and p.suffix in TABLE_SUFFIXES for p in path.iterdir()
        ):
            raise ConfigError(f"--covariates {source}: no judgements*.csv|parquet beside units")

        tables, where = source_tables(str(path), Path("."))
        return Covariates(where, unit_means(tables.judgements))
    return _from_release(str(path))


def _from_release(path: str) -> Covariates:
    from implicit_bench.errors import InputError
    from implicit_bench.release.benchmark import benchmark_units
    from implicit_bench.release.beside import release_table4
    from implicit_bench.release.importer import Release

    try:
        judgements, _ = release_table4(Release(path), benchmark_units(path))
    except InputError as exc:
        raise ConfigError(f"--covariates {path}: {exc}") from None
    if judgements.empty:
        raise ConfigError(f"--covariates {path}: the release holds no Table 4 judgements")
    return Covariates(f"authors' release ({path})", unit_means(judgements))
