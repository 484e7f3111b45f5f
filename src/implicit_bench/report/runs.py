"""A run directory as a report input: its leaderboard source (``metrics/benchmark.json``), the
check that several runs share one benchmark, and the report params of a run directory
(``implicit-bench report``, docs/report.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from implicit_bench.errors import ConfigError, InputError
from implicit_bench.protocol.benchmark_file import BenchmarkFile
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
    BenchmarkFile.from_json(bench, file)  # the contract the Leaderboard section reads
    return Run(label, bench, _is_simulated(bench))


def same_benchmark(runs: list[Run]) -> str | None:
    """The one benchmark SHA-256 of ``runs`` (release benchmarks: ``benchmark_sha256`` of the
    leaderboard); runs of different benchmarks (a release benchmark and another, or one and the
    project's own units), or a run whose units and beside-release block name two, are refused
    with one line: one leaderboard needs one unit set."""
    from implicit_bench._util.nested import dig
    from implicit_bench.report.compare.results import benchmark_hash

    for run in runs:  # a board written before the check of evaluate.beside_release
        board = run.board or {}
        units, beside = board.get("benchmark_sha256"), dig(board, "beside_release", "benchmark")
        release = beside.get("sha256") if isinstance(beside, dict) else None
        if isinstance(units, str) and isinstance(release, str) and units != release:
            raise ConfigError(
                f"{run.label}: its units' benchmark SHA-256 {units[:12]} is not the SHA-256 of "
                f"the release beside it ({release[:12]}; edited after the units were written): "
                "analyze it again beside the release as it was"
            )
    # one entry per run, in order: two runs with one label (two folders named out) are two
    hashes = [(run.label, benchmark_hash(run.board)) for run in runs]
    if len({sha for _, sha in hashes}) > 1:
        shown = ", ".join(f"{label}: {(sha or 'own units')[:12]}" for label, sha in hashes)
        raise ConfigError(
            f"the runs are on different benchmarks ({shown}): one leaderboard merges runs of "
            "one benchmark only"
        )
    return hashes[0][1] if hashes else None


def labels_of(dirs: Sequence[Path], given: Sequence[str]) -> list[str]:
    """Each DIR's source label: ``--label`` in order, else the folder's name, lengthened by
    its parents until no two runs share one (``x/out`` and ``y/out``, not ``out`` twice);
    a ``--label`` given twice is refused (two sources one could not tell apart)."""
    twice = sorted({label for label in given if list(given).count(label) > 1})
    if twice:
        raise ConfigError(f"--label {twice[0]}: given to two directories; give each its own")
    parts = [d.resolve().parts for d in dirs[len(given) :]]
    depth = [1] * len(parts)
    while True:
        labels = [*given, *(Path(*p[-n:]).as_posix() for p, n in zip(parts, depth, strict=True))]
        clash = [i for i, p in enumerate(parts) if labels.count(labels[len(given) + i]) > 1]
        longer = [i for i in clash if depth[i] < len(parts[i])]
        if not longer:
            return labels
        for i in longer:
            depth[i] += 1


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
