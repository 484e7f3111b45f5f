"""A run directory as a report input: its leaderboard source (``metrics/benchmark.json``), the
check that several runs share one benchmark, and the report params of a run directory
(``implicit-bench report``, docs/report.md)."""

from __future__ import annotations

import json
from pathlib import Path

from implicit_bench.errors import ConfigError, InputError
from implicit_bench.report.checked import check_leaderboard
from implicit_bench.report.confine import Scope
from implicit_bench.report.leaderboard import Run
from implicit_bench.report.params import ReportParams


def _is_simulated(payload: object, depth: int = 0) -> bool:
    if depth > 3 or not isinstance(payload, dict):
        return False
    return payload.get("simulated") is True or any(
        _is_simulated(v, depth + 1) for v in payload.values()
    )


def run_of(path: Path, label: str) -> Run:
    """A run's leaderboard source from its ``metrics/benchmark.json`` (which must resolve
    inside ``path``: a link out is refused unread, its content never echoed)."""
    file = path / "metrics" / "benchmark.json"
    if file.exists():
        Scope.of(path).check(file, "metrics/benchmark.json")
    if not file.exists():
        raise InputError(
            file,
            None,
            None,
            "not found: give an analyze output directory or a repository root after dvc repro",
        )
    try:
        bench = json.loads(file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(file, None, None, f"not valid JSON: {exc}") from None
    check_leaderboard(bench, file)
    return Run(label, bench, _is_simulated(bench))


def same_benchmark(runs: list[Run]) -> str | None:
    """The one benchmark SHA-256 of ``runs`` (release benchmarks: ``benchmark_sha256`` of the
    leaderboard); runs of different benchmarks (a release benchmark and another, or one and the
    project's own units) are refused with one line: one leaderboard needs one unit set."""
    from implicit_bench.compare.results import benchmark_hash

    hashes = {run.label: benchmark_hash(run.board) for run in runs}
    if len(set(hashes.values())) > 1:
        shown = ", ".join(f"{k}: {(v or 'own units')[:12]}" for k, v in hashes.items())
        raise ConfigError(
            f"the runs are on different benchmarks ({shown}): one leaderboard merges runs of "
            "one benchmark only"
        )
    return next(iter(hashes.values()), None)


def params_for(
    path: Path, out: Path, units: str | None, judgements: tuple[str, ...]
) -> tuple[ReportParams, Path]:
    """Report params and root for DIR: a repository's own ``report`` section, else the
    layout of an analyze output directory (absolute paths; the unit browser needs ``--units``)."""
    if (path / "dvc.yaml").exists() and (path / "params.yaml").exists():
        from implicit_bench.params import load_params, section

        Scope.of(path).check(path / "params.yaml", "params.yaml")

        params = section(
            load_params(path / "params.yaml"), "report", ReportParams, str(path / "params.yaml")
        )
        return params.model_copy(update={"out": str(out.resolve())}), path
    base = path.resolve()
    found = next(
        (str(base / n) for n in ("units.parquet", "units.csv") if (base / n).exists()), None
    )
    params = ReportParams(
        units=str(Path(units).resolve()) if units else (found or str(base / "units.parquet")),
        selected_units=str(base / "selected_units.parquet"),
        judgements=[str(Path(j).resolve()) for j in judgements],
        image_roots=[],
        metrics_dir=str(base / "metrics"),
        plots_dir=str(base / "plots"),
        dvc_file=str(base / "dvc.yaml"),
        out=str(out.resolve()),
    )
    return params, base
