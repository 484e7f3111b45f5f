"""``--covariates release|PATH|none``: the per-unit values known before a run, from their
source (docs/analysis.md, "Covariate-assisted sequences").

- ``release``: the authors' release the params name (``benchmark.path``,
  ``evaluate.beside_release``): its four Table 4 generators' neutral rubric and alignment
  judgements (``release.beside.release_table4``) and, for the bias score, two columns of
  Qwen-Image's images (``QWEN_DERIVED``: Gemma-4's construction rubric scores of its neutral
  images; the mean over its debiasing runs, experiments 1-11 with and without alpha 1), which
  an estimand of ``qwen_image`` never uses;
- a path: a checkout or .zip of the release (as ``release``), or a folder of units and
  judgements tables (``units.csv|parquet``, ``judgements*.csv|parquet``: an `implicit-bench
  import` output, or a user's earlier run), read as the analysis reads by default;
- ``none``: no covariates (the plain sequences).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from implicit_bench.analysis.covariates import Covariates, unit_means
from implicit_bench.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from implicit_bench.release.importer import Release

TABLE_SUFFIXES = (".csv", ".parquet")
#: derived bias-score columns of the release, each of Qwen-Image's images (``Covariates.origins``)
GEMMA_CONSTRUCTION = "qwen_image_gemma4"
DEBIAS_RUNS = "qwen_image_debias_runs"
QWEN_DERIVED = (GEMMA_CONSTRUCTION, DEBIAS_RUNS)


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
        return _from_tables(path, source)
    return _from_release(str(path))


def _from_tables(folder: Path, source: str) -> Covariates:
    """A folder of units and judgements tables, loaded as ``analyze`` loads by default."""
    from implicit_bench.analysis.load import load_tables
    from implicit_bench.analysis.params import EvaluateParams

    tables = sorted(p for p in folder.iterdir() if p.suffix in TABLE_SUFFIXES)
    units = [p for p in tables if p.stem == "units"]
    judgements = [str(p) for p in tables if p.stem.startswith("judgements")]
    if not units or not judgements:
        raise ConfigError(f"--covariates {source}: no judgements*.csv|parquet beside units")
    fields = EvaluateParams.model_fields
    settings = [fields[k].default for k in ("on_bad_row", "on_duplicate", "primary_order")]
    loaded = load_tables(str(units[0]), judgements, (), *settings)
    return Covariates(str(folder), unit_means(loaded.judgements))


def _from_release(path: str) -> Covariates:
    from implicit_bench.errors import InputError
    from implicit_bench.release.benchmark import benchmark_units
    from implicit_bench.release.beside import release_table4
    from implicit_bench.release.importer import Release
    from implicit_bench.release.layout import BASE_CONFIG, EXPERIMENTS

    try:
        judgements, _ = release_table4(Release(path), benchmark_units(path))
        derived = qwen_image_columns(Release(path))
    except InputError as exc:
        raise ConfigError(f"--covariates {path}: {exc}") from None
    if judgements.empty:
        raise ConfigError(f"--covariates {path}: the release holds no Table 4 judgements")
    columns = unit_means(judgements)
    if "bias_score" in columns and not derived.empty:
        columns["bias_score"] = columns["bias_score"].join(derived, how="outer")
    # Qwen-Image is `qwen_image` in Table 4 and `unmodified` (experiment 0) in the debiasing runs
    origins = dict.fromkeys(QWEN_DERIVED, (BASE_CONFIG, EXPERIMENTS[0]))
    return Covariates(f"authors' release ({path})", columns, origins)


def qwen_image_columns(release: Release) -> pd.DataFrame:
    """Per unit (index ``unit_id``): ``qwen_image_gemma4``, the mean valid Gemma-4 rubric score
    of the construction run's neutral images (``data/benchmark_scores.csv``), and
    ``qwen_image_debias_runs``, the mean over the debiasing runs (experiments 1-11, each with
    and without alpha 1) of each run's per-unit mean valid rubric score; NaN where none; a
    column whose files the copy lacks is left out."""
    import pandas as pd

    from implicit_bench.release.beside import judged_scores
    from implicit_bench.release.importer import SCORES, read_scores
    from implicit_bench.release.layout import RUBRIC_JUDGES

    out: dict[str, pd.Series] = {}
    if release.exists(SCORES):
        scores, _ = read_scores(release)
        gemma = scores[
            (scores["judge"] == RUBRIC_JUDGES["gemma"])
            & (scores["variant"] == "neutral")
            & (scores["task"] == "rubric")
        ]
        gemma = gemma.assign(score=judged_scores(gemma))
        out[GEMMA_CONSTRUCTION] = gemma.groupby("unit_id")["score"].mean()
    runs = debias_run_columns(release)
    if not runs.empty:
        out[DEBIAS_RUNS] = runs.mean(axis=1)
    frame = pd.DataFrame(out)
    frame.index = frame.index.astype(str)
    return frame


def debias_run_columns(release: Release) -> pd.DataFrame:
    """Per unit (index ``unit_id``), one column per debiasing run of Qwen-Image (experiments
    1-11, each with and without alpha 1; named by its eval file): the run's mean valid rubric
    score of the unit's neutral images. Empty when the copy holds none."""
    import pandas as pd

    from implicit_bench.release.beside import judged_scores
    from implicit_bench.release.importer import eval_files, read_eval
    from implicit_bench.release.layout import EXPERIMENTS

    chosen, _ = eval_files(release)
    runs = []
    for (exp, alpha1, kind), name in chosen.items():
        if kind == "eval" and 1 <= exp <= max(EXPERIMENTS):
            rows = read_eval(release, name, exp, kind, f"{exp}{'_alpha1' if alpha1 else ''}")
            rows = rows.assign(score=judged_scores(rows))
            runs.append(rows.groupby("unit_id")["score"].mean().rename(name))
    return pd.concat(runs, axis=1) if runs else pd.DataFrame()
