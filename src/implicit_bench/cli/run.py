"""``implicit-bench run``: evaluate your own model in one step (README, "Evaluate your model").

``implicit-bench run --generator SPEC --judge SPEC [...]`` writes its choices as a params
overlay, ``profiles/<overlay>.yaml`` (a profile that ``extends:`` ``--profile``, so it composes
from the default like any profile), runs the preflight (``implicit-bench check``), prints the
plan (``implicit-bench plan``) and runs the pipeline through DVC (``dvc exp run``): the result
is an ordinary DVC experiment that ``dvc metrics diff`` and the report read. Every flag is a
params key (docs/experiments.md has the table); the command writes nothing else.

Specs:
- generator: a ``generators`` entry name; ``openai-images:<model>``; ``gemini:<model>``; a
  local diffusers directory; or a hub id (diffusers).
- judge: a ``judges`` entry name; ``openai:<model>`` (api.openai.com, ``$OPENAI_API_KEY``);
  ``openai:<model>@<base_url>`` (an OpenAI-compatible server such as vLLM; no key unless
  ``--api-key-env``); or a hub id (transformers).
"""

from __future__ import annotations

import functools
import subprocess
import tempfile

import click

from implicit_bench.cli.options import FiniteFloat, SeedList
from implicit_bench.planning.overlay import (
    build_overlay,
    first_round_subset,
    overlay_name_for,
    write_overlay,
)


def dvc_targets(stages: str) -> list[str]:
    """The DVC targets of ``--stages``: stage names (DVC runs what they depend on, nothing
    else), or none for ``all`` (the whole pipeline)."""
    names = [s.strip() for s in stages.split(",") if s.strip()]
    if not names:
        raise click.BadParameter("name at least one stage, or `all`", param_hint="--stages")
    if names == ["all"]:
        return []
    from implicit_bench.runtime.dvc import dvc_stages

    known = set(dvc_stages())
    # outside a checkout (no ./dvc.yaml) DVC itself names an unknown target
    unknown = [n for n in names if known and n.split("@", 1)[0] not in known]
    if unknown:
        raise click.BadParameter(
            f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}, all",
            param_hint="--stages",
        )
    return names


#: stages that only their own targets (or --stages all) run: no target of a Table 4 row needs them
OPTIONAL_STAGES = ("retrieve", "rewrite", "debias_render", "debias_judge", "b6", "diversity_study")


def planned(plans: list, targets: list[str]) -> list:
    """The plan's lines of the stages ``dvc exp run TARGETS`` runs (every line for ``all``)."""
    if not targets:
        return plans
    asked = {t.split("@", 1)[0] for t in targets}
    skipped = set(OPTIONAL_STAGES) - asked
    return [p for p in plans if p.stage.split()[0].split("@", 1)[0] not in skipped]


def fixed_unit_set(
    benchmark: str | None,
    units_file: str | None,
    units: int | None,
    base: dict,
    scratch: str | None = None,
) -> tuple[str, str]:
    """(the path params name, the file written) of a run on a fixed unit set: the release's
    units (written from the user's copy), or ``units_file``; with ``--units N``, a pilot of N of
    them (bench/pilot.py). ``scratch``: a dry run writes there, so that its plan counts the set
    and the workspace keeps no units it did not run."""
    from pathlib import Path

    def where(path: str) -> str:
        return str(Path(scratch) / Path(path).name) if scratch else path

    named = written = units_file
    if benchmark is not None:
        from implicit_bench.release.benchmark import BENCHMARK_UNITS_PATH, write_benchmark_units

        named, written = BENCHMARK_UNITS_PATH, where(BENCHMARK_UNITS_PATH)
        bench = write_benchmark_units(benchmark, written)
        click.echo(
            f"benchmark: {bench.n_units:,} units of {benchmark} (sha256 {bench.sha256}) -> {named}"
        )
    assert named is not None and written is not None
    if not units:  # None or 0: every unit of the set
        return named, written
    from implicit_bench.bench.pilot import PILOT_UNITS_PATH, write_pilot_units
    from implicit_bench.params import SubsetParams, section

    seed = section(base, "subset", SubsetParams).seed
    pilot = write_pilot_units(written, units, seed, where(PILOT_UNITS_PATH))
    click.echo(
        f"pilot: {pilot.n_units:,} of {pilot.of_units:,} units of {named} (--units; stratified "
        f"by bias type in proportion, seed {seed}) -> {PILOT_UNITS_PATH}"
    )
    return PILOT_UNITS_PATH, pilot.path


def _echo_block(title: str, text: str) -> None:
    click.echo(f"== {title}")
    click.echo(text.rstrip())


@click.command("run")
@click.option(
    "--generator",
    "generators",
    multiple=True,
    required=True,
    help="Hub id, local directory, openai-images:MODEL, gemini:MODEL "
    "or a generators entry (repeatable).",
)
@click.option(
    "--judge",
    "judges",
    multiple=True,
    required=True,
    help="Hub id, openai:MODEL[@BASE_URL] or a judges entry "
    "(repeatable; the first also does alignment).",
)
@click.option(
    "--units",
    type=click.IntRange(0),
    default=None,
    help="Units evaluated (0: every unit): a pilot of the fixed unit set (--benchmark, "
    "--units-file), else subset.max_units of construction.",
)
@click.option(
    "--seeds",
    type=SeedList(),
    default=None,
    help="render.seeds, comma separated (e.g. 42,1042).",
)
@click.option(
    "--tables",
    type=click.Choice(["all", "4"]),
    default="all",
    show_default=True,
    help="all: every table on the new generator (3 variants, blind + rubric + alignment); "
    "4: its Table 4 row only (neutral prompts: rubric + alignment).",
)
@click.option(
    "--units-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The fixed unit set of the benchmark phase (bench.units): a UNITS-format table; "
    "default: the profile's (the committed selection).",
)
@click.option(
    "--benchmark",
    "benchmark",
    type=click.Path(exists=True),
    default=None,
    help="A checkout or .zip of the authors' release: its 1,831 units are the unit set "
    "(construction and selection skipped; seeds 42/1042/2042 are the release's 0/1/2).",
)
@click.option(
    "--assume",
    default=None,
    help="For the printed plan only: unit counts not built yet, e.g. selected=1831 "
    "(as `implicit-bench plan --assume`).",
)
@click.option(
    "--profile", default="default", show_default=True, help="The profile the overlay extends."
)
@click.option(
    "--name",
    "exp_name",
    default=None,
    help="DVC experiment name; also names the overlay profiles/run-NAME.yaml.",
)
@click.option(
    "--device",
    default="auto",
    show_default=True,
    help="device of the local models the specs create.",
)
@click.option(
    "--api-key-env", default=None, help="api_key_env of the HTTP judges the specs create."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write the overlay, print the preflight and the plan; change nothing else.",
)
@click.option("--no-preflight", is_flag=True, help="Skip `implicit-bench check`.")
@click.option(
    "--queue",
    is_flag=True,
    help="Queue the experiment (dvc exp run --queue) instead of running it.",
)
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=FiniteFloat(0.1, 60),
    help="Seconds an endpoint has to answer the preflight.",
)
@click.option(
    "--sequential",
    is_flag=True,
    help="Render and judge in rounds over a random order; stop when the targets hold "
    "(anytime-valid intervals; docs/experiments.md, 'Sequential runs').",
)
@click.option(
    "--target-width",
    type=FiniteFloat(1e-6, 100),
    default=None,
    help="With --sequential: stop when every estimand's half-width is at most this.",
)
@click.option(
    "--estimand",
    "estimands",
    multiple=True,
    help="With --sequential --target-width: the estimands the target applies to "
    "(default: every rate and Table 4 score).",
)
@click.option(
    "--resolve",
    "resolve",
    multiple=True,
    help="With --sequential: A,B: stop when the bias-score difference of A and B excludes 0.",
)
@click.option(
    "--stages",
    "stages",
    default="evaluate",
    show_default=True,
    help="The DVC stages run (with what they need), comma separated, or `all` for the whole "
    "pipeline (construction audits, debiasing, CLIP, the diversity study, the report).",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="After the run: the HTML report of this run's outputs only (its leaderboard, beside "
    "the paper with --benchmark) in this folder.",
)
@click.option("--rounds", default=None, help="With --sequential: unit counts N1,N2,...")
@click.option(
    "--export-eee",
    "export_eee_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="After the run: its Every Eval Ever records (`implicit-bench export eee . --out DIR`).",
)
@click.option(
    "--covariates",
    default=None,
    help="With --sequential: per-unit values known before the run that the sequences use: "
    "release, a release checkout / .zip, a folder of units + judgements tables (an earlier "
    "run), or none (default: release when the params name one, else none).",
)
@click.option(
    "--max-gpu-hours",
    type=FiniteFloat(0, 1e9),
    default=None,
    help="With --sequential: stop before a round that would pass this budget.",
)
def run_command(
    generators: tuple[str, ...],
    judges: tuple[str, ...],
    units: int | None,
    seeds: list[int] | None,
    tables: str,
    units_file: str | None,
    benchmark: str | None,
    assume: str | None,
    profile: str,
    exp_name: str | None,
    device: str,
    api_key_env: str | None,
    dry_run: bool,
    no_preflight: bool,
    queue: bool,
    timeout: float,
    sequential: bool,
    target_width: float | None,
    estimands: tuple[str, ...],
    resolve: tuple[str, ...],
    stages: str,
    report_dir: str | None,
    rounds: str | None,
    max_gpu_hours: float | None,
    export_eee_dir: str | None,
    covariates: str | None,
) -> None:
    """Evaluate your model: overlay -> preflight -> plan -> dvc exp run."""
    if export_eee_dir and queue:
        raise click.BadParameter(
            "the records are written when the run has finished here: not with --queue "
            "(run `implicit-bench export eee . --out DIR` after the queue)",
            param_hint="--export-eee",
        )
    from implicit_bench._util.redact import url
    from implicit_bench.cli.options import parse_assume
    from implicit_bench.params.profiles import compose, write_profile
    from implicit_bench.planning.plan import build_plan, format_plan, images_still_to_render
    from implicit_bench.runtime.preflight.backends import load_registries
    from implicit_bench.runtime.preflight.checks import preflight

    overlay_name = overlay_name_for(exp_name, profile)
    if not sequential and (
        target_width or estimands or resolve or rounds or max_gpu_hours or covariates
    ):
        raise click.UsageError(
            "--target-width, --estimand, --resolve, --rounds, --max-gpu-hours and --covariates "
            "go with --sequential"
        )
    if sequential and (queue or (target_width is None and not resolve)):
        raise click.UsageError("--sequential needs --target-width or --resolve (and no --queue)")
    if benchmark is not None and (units_file is not None or sequential):
        raise click.UsageError("--benchmark goes without --units-file and --sequential")
    targets = dvc_targets(stages)
    base = compose(profile)
    unit_set = unit_set_file = None
    if benchmark is not None or units_file is not None:  # a fixed unit set: no construction
        scratch = tempfile.mkdtemp(prefix="implicit-bench-dry-run-") if dry_run else None
        unit_set, unit_set_file = fixed_unit_set(benchmark, units_file, units, base, scratch)
    overlay = build_overlay(
        base,
        list(generators),
        list(judges),
        profile=profile,
        units=None if unit_set is not None else units,
        seeds=seeds,
        device=device,
        api_key_env=api_key_env,
        table4_only=tables == "4",
        units_file=unit_set,
        construction=sequential,
        benchmark=benchmark,
    )
    overlay["base"]["profile"] = overlay_name
    round_units: list[int] = []
    if sequential:
        from implicit_bench.planning.sequential import check_estimands

        check_estimands(list(estimands), list(overlay["render"]["run"]))  # nothing written yet
        from implicit_bench.planning.sequential import parse_pairs, parse_rounds

        parse_pairs(resolve)
        everyone = {**base, "subset": {**(base.get("subset") or {}), "max_units": 0}}
        _, whole = build_plan(everyone)
        round_units = parse_rounds(rounds, int(units or whole["units"]))
        overlay["subset"] = first_round_subset(base, round_units[0])
    path, params = write_overlay(overlay, base, profile, overlay_name)
    click.echo(f"wrote {path} (extends {profile})")
    if not no_preflight:
        warnings: list[str] = []
        load_registries()  # every stage's models
        problems = preflight(params, ".", timeout, images_still_to_render(params), warnings)
        lines = "\n".join(  # no URL prints its password
            [url(f"check: warning: {w}") for w in warnings]
            + ([url(f"check: {p}") for p in problems] or ["check: ok"])
        )
        _echo_block("preflight", lines)
        if problems and not dry_run:
            raise SystemExit(1)
    if benchmark is not None:
        from implicit_bench.release.judge_notice import judge_notice

        judges_used = {n: params["judges"][n] for n in params["bench"]["tasks"]["rubric"]["judges"]}
        try:
            notes = judge_notice(judges_used, benchmark)
        except Exception as exc:  # noqa: BLE001 - a judge not buildable here (the sim world)
            notes = [f"the judges were not compared with the release's Table 4 judge ({exc})"]
        for line in notes:
            click.echo(f"note: {line}")
    plan_params = params  # a dry run plans the unit set it wrote aside
    if unit_set_file is not None and unit_set_file != unit_set:
        plan_params = {**params, "bench": {**params["bench"], "units": unit_set_file}}
    plans, info = build_plan(plan_params, assume=parse_assume(assume) or None)
    _echo_block("plan", format_plan(planned(plans, targets), info))
    if sequential:
        click.echo(f"sequential rounds (units): {', '.join(map(str, round_units))}")
    if dry_run:
        click.echo(
            "dry run: params.yaml unchanged; run it with `implicit-bench "
            f"profile {overlay_name} && dvc exp run`"
        )
        return
    from implicit_bench.runtime.dvc import dvc_command

    cmd = dvc_command(  # DVC of this environment, found before params.yaml is switched
        "exp",
        "run",
        *(["--name", exp_name] if exp_name else []),
        *(["--queue"] if queue else []),
        *targets,
    )
    write_profile(overlay_name, "params.yaml", "params.yaml")
    if sequential:
        from implicit_bench.params import load_params
        from implicit_bench.planning.sequential import dvc_round, parse_pairs, run_sequential

        run_sequential(
            lambda: load_params("params.yaml"),
            round_units,
            target_width,
            list(estimands),
            parse_pairs(resolve),
            max_gpu_hours,
            exp_name,
            **({"covariates": covariates} if covariates else {}),  # default: run_sequential's
            run_round=functools.partial(dvc_round, targets=targets),
        )
        _export_eee(export_eee_dir)
        return
    click.echo(f"params.yaml: profile {overlay_name}; running dvc {' '.join(cmd[3:])}")
    if targets:
        click.echo(
            f"stages: {', '.join(targets)} and what they need (--stages all: the whole pipeline)"
        )
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise SystemExit(done.returncode)
    if report_dir is not None and not queue:
        from implicit_bench.report.run_folder import write_run_report

        page = write_run_report(params, report_dir, exp_name or overlay_name)
        click.echo(f"report: {page}")
    _export_eee(export_eee_dir)


def _export_eee(out: str | None) -> None:
    """``--export-eee``: the finished run's records, as ``implicit-bench export eee``."""
    if not out:
        return
    from implicit_bench.publish.eee import Options, export_eee

    written, reason = export_eee(".", out, Options())
    click.echo(f"export eee: {len(written)} records -> {out} (schema valid); instances: {reason}")


__all__ = ["run_command"]
