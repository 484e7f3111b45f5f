"""``implicit-bench diff`` and ``implicit-bench exps`` (docs/compare.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench._util.nested import dig
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.compare.diff import LEVEL, diff_summaries, flat_estimates, format_diff
from implicit_bench.compare.revs import WORKSPACE, experiments, read_json, resolve
from implicit_bench.errors import ConfigError

SUMMARY = "metrics/summary.json"
BENCHMARK = "metrics/benchmark.json"
#: the headline columns of ``exps`` (value [lo, hi] where the summary has an interval)
EXPS_COLUMNS = (
    "units_analysed",
    "n_seeds",
    "default_rate_pct",
    "success_stereotype_pct",
    "success_anti_pct",
    "gap_pct",
    "hedges_g_max",
    "refusal_pct",
    "debias_best_dS_own",
)


def _summary(root: Path, rev: str) -> dict[str, Any]:
    data = read_json(root, rev, SUMMARY)
    if data is None:
        raise ConfigError(
            f"{SUMMARY}: not found at {rev} (run dvc repro and commit, or name another revision)"
        )
    return data


def _level(root: Path, rev: str) -> float:
    bench = read_json(root, rev, BENCHMARK) or {}
    return float(dig(bench, "bootstrap", "level") or LEVEL)


@click.command("diff", cls=FriendlyCommand)
@click.argument("rev_a", default="HEAD")
@click.argument("rev_b", default=WORKSPACE)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--all", "everything", is_flag=True, help="Also list headline values that did not change."
)
@click.option(
    "--detail",
    "details",
    multiple=True,
    metavar="FILE",
    help="Also every interval estimate of a detail metrics file, "
    "e.g. metrics/debias.json (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON rows instead of the table.")
def diff_command(
    rev_a: str, rev_b: str, repo: str, everything: bool, details: tuple[str, ...], as_json: bool
) -> None:
    """Change of each headline metric (metrics/summary.json) from REV_A (default HEAD) to REV_B
    (default: the workspace), both intervals and a verdict: resolved / within noise.

    A revision is anything git understands or a DVC experiment's name (dvc exp list).
    --detail adds the changed interval estimates of a detail file (metrics/debias.json: dS of
    every debiasing configuration)."""
    root = Path(repo)
    a, b = _summary(root, rev_a), _summary(root, rev_b)
    level = _level(root, rev_a)
    rows = diff_summaries(a, b, level, everything)
    for detail in details:
        name = Path(detail).name
        da = flat_estimates(read_json(root, rev_a, detail) or {}, f"{name}:")
        db = flat_estimates(read_json(root, rev_b, detail) or {}, f"{name}:")
        rows += [
            r for r in diff_summaries(da, db, level) if everything or r["verdict"] != "unchanged"
        ]
    if as_json:
        click.echo(json.dumps({"a": rev_a, "b": rev_b, "level": level, "rows": rows}, indent=1))
        return
    notes = [
        f"{SUMMARY}: {rev_a} -> {rev_b}; intervals at {level:g}; "
        "verdict: |change| > z x sqrt(se_a^2 + se_b^2), "
        "se from each interval (independent runs, conservative for shared units)"
    ]
    if a.get("simulated") or b.get("simulated"):
        notes.append("SIMULATED: at least one side comes from the simulated world (docs/world.md)")
    click.echo(format_diff(rows, rev_a, rev_b, notes))


def _flat(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: obj}


def _params(root: Path, rev: str) -> dict[str, Any]:
    import subprocess

    path = root / "params.yaml"
    if rev == WORKSPACE:
        return _flat(load_yaml_file(path) or {})  # the strict loader: one line naming the file
    res = subprocess.run(
        ["git", "show", f"{resolve(root, rev)}:params.yaml"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        return {}
    return _flat(load_yaml_file(path, res.stdout, f" at {rev}") or {})


def changed_params(base: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """``key=value`` for every flattened param that differs from ``base``."""
    return [
        f"{k}={json.dumps(other.get(k))}"
        for k in sorted(set(base) | set(other))
        if base.get(k) != other.get(k)
    ]


def _cell(summary: dict[str, Any], key: str) -> str:
    v = summary.get(key)
    if v is None:
        return "-"
    lo, hi = summary.get(f"{key}_lo"), summary.get(f"{key}_hi")
    return (
        f"{v:g} [{lo:g}, {hi:g}]"
        if isinstance(lo, int | float) and isinstance(hi, int | float)
        else str(v)
    )


@click.command("exps", cls=FriendlyCommand)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--baseline",
    default="HEAD",
    show_default=True,
    help="Revision the params changes are listed against.",
)
def exps_command(repo: str, baseline: str) -> None:
    """The headline table across the baseline, the workspace and every DVC experiment: one
    line each, the params it changed, the headline values with their intervals."""
    root = Path(repo)
    base_params = _params(root, baseline)
    revs = [baseline, WORKSPACE, *sorted(experiments(root))]
    header = ["Experiment", "changed params", *EXPS_COLUMNS]
    lines = []
    for rev in revs:
        summary = read_json(root, rev, SUMMARY)
        if summary is None:
            continue
        changed = ", ".join(changed_params(base_params, _params(root, rev))) or "-"
        lines.append([rev, changed, *(_cell(summary, k) for k in EXPS_COLUMNS)])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    click.echo("\n".join(fmt.format(*line).rstrip() for line in [header, *lines]))


@click.command("results", cls=FriendlyCommand)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Output file (default: logs/results_<commit>.json under the repository, gitignored).",
)
def results_command(repo: str, out: str | None) -> None:
    """Write the run's results file: headline and leaderboard, params, package and model
    versions, git commit, the run log's timings and model calls, and where the per-sample
    records (judgements with raw answers, image indexes) are."""
    from implicit_bench._util.files import write_json
    from implicit_bench.compare.results import default_path, results

    doc = results(repo)
    path = Path(out) if out else Path(repo) / default_path(doc)
    write_json(path, doc)
    flag = " (SIMULATED)" if doc["simulated"] else ""
    click.echo(
        f"results: {path}{flag}: {len(doc['samples'])} per-sample files, "
        f"{len(doc['run_log']['stages'])} stages in the run log"
    )
