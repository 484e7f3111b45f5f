"""``--covariates release|PATH|none``: the per-unit values known before a run, from their
source (docs/analysis.md, "Covariate-assisted sequences").

- ``release``: the authors' release the params name (``benchmark.path``,
  ``evaluate.beside_release``): its four Table 4 generators' neutral rubric and alignment
  judgements (``release.beside.release_table4``);
- a path: a checkout or .zip of the release (as ``release``), or a folder of units and
  judgements tables (``units.csv|parquet``, ``judgements*.csv|parquet``: an `implicit-bench
  import` output, or a user's earlier run), read as the analysis reads by default;
- ``none``: no covariates (the plain sequences).
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.analysis.covariates import Covariates, unit_means
from implicit_bench.errors import ConfigError

TABLE_SUFFIXES = (".csv", ".parquet")


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

    try:
        judgements, _ = release_table4(Release(path), benchmark_units(path))
    except InputError as exc:
        raise ConfigError(f"--covariates {path}: {exc}") from None
    if judgements.empty:
        raise ConfigError(f"--covariates {path}: the release holds no Table 4 judgements")
    return Covariates(f"authors' release ({path})", unit_means(judgements))
