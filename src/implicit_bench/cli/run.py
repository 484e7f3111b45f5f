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

import io
import re
import subprocess
from collections.abc import Collection
from pathlib import Path
from typing import Any

import click
from ruamel.yaml.comments import CommentedMap

from implicit_bench._util.files import atomic_write_text
from implicit_bench.cli.options import FiniteFloat, SeedList
from implicit_bench.errors import ConfigError
from implicit_bench.params import SubsetParams, check_name, section
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    ALL_IMAGE_INDEX_GLOB,
    BENCH_JUDGEMENTS_PATH,
    CLIP_JUDGEMENTS_PATH,
    JUDGEMENTS_PATH,
)

OPENAI_URL = "https://api.openai.com/v1"


def _entry_name(spec: str) -> str:
    """A catalogue name for a spec: its last path segment, made safe."""
    tail = spec.rstrip("/").split("@", 1)[0].split(":", 1)[-1].rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", tail).strip("._-") or "model"
    name = name.replace("..", "_")
    return name if name[0].isalnum() else f"m{name}"


def _fresh(name: str, taken: Collection[str]) -> str:
    """``name``, or ``name-2``, ``name-3``, ... when an entry of that name exists: a new model
    gets its own entry and never replaces the profile's (``openai:qwen3vl@URL`` next to the
    profile's ``qwen3vl``, which ``debias.scoring`` keeps using)."""
    fresh, i = name, 1
    while fresh in taken:
        i += 1
        fresh = f"{name}-{i}"
    return fresh


def generator_entry(
    spec: str, catalogue: dict[str, Any], device: str, taken: Collection[str] = ()
) -> tuple[str, dict[str, Any] | None]:
    """(entry name, new backend block or None for an existing catalogue entry); a new entry's
    name is none of ``catalogue`` and ``taken`` (the names this run already gave)."""
    if spec in catalogue:
        return spec, None
    used = {*catalogue, *taken}
    if spec.startswith("openai-images:"):
        return _fresh(_entry_name(spec), used), {
            "backend": "openai_images",
            "model": spec.split(":", 1)[1],
            "api_key_env": "OPENAI_API_KEY",
        }
    if spec.startswith("gemini:"):
        return _fresh(_entry_name(spec), used), {
            "backend": "gemini",
            "model": spec.split(":", 1)[1],
        }
    if Path(spec).expanduser().is_dir() or "/" in spec:
        return _fresh(_entry_name(spec), used), {
            "backend": "diffusers",
            "model": spec,
            "device": device,
        }
    raise ConfigError(
        f"--generator {spec!r}: not a generators entry ({', '.join(sorted(catalogue))}), "
        "openai-images:MODEL, gemini:MODEL, a local directory or a hub id"
    )


def judge_entry(
    spec: str,
    catalogue: dict[str, Any],
    device: str,
    api_key_env: str | None,
    taken: Collection[str] = (),
) -> tuple[str, dict[str, Any] | None]:
    """(entry name, new backend block or None for an existing catalogue entry); a new entry's
    name is none of ``catalogue`` and ``taken`` (the names this run already gave)."""
    if spec in catalogue:
        return spec, None
    used = {*catalogue, *taken}
    if spec.startswith("openai:"):
        model, _, base_url = spec.split(":", 1)[1].partition("@")
        base_url = base_url or OPENAI_URL
        key = (
            api_key_env
            if api_key_env is not None
            else ("OPENAI_API_KEY" if base_url == OPENAI_URL else None)
        )
        return _fresh(_entry_name(model), used), {
            "backend": "openai",
            "model": model,
            "base_url": base_url,
            "api_key_env": key,
        }
    if Path(spec).expanduser().is_dir() or "/" in spec:
        return _fresh(_entry_name(spec), used), {
            "backend": "transformers",
            "model": spec,
            "device": device,
        }
    raise ConfigError(
        f"--judge {spec!r}: not a judges entry ({', '.join(sorted(catalogue))}), "
        "openai:MODEL[@BASE_URL], a local directory or a hub id"
    )


def build_overlay(
    params: dict[str, Any],
    generators: list[str],
    judges: list[str],
    *,
    profile: str,
    units: int | None,
    seeds: list[int] | None,
    device: str,
    api_key_env: str | None,
    table4_only: bool = False,
    units_file: str | None = None,
    construction: bool = False,
    benchmark: str | None = None,
) -> CommentedMap:
    """The overlay profile: new catalogue entries and the benchmark phase's generators and
    judges (``bench``); construction keeps the profile's models. ``table4_only``: the neutral
    prompts only (the Table 4 row: rubric and alignment); ``units_file``: the fixed unit set;
    ``construction``: the new models run the whole protocol instead (``--sequential``);
    ``benchmark``: a copy of the authors' release whose units are the unit set (written to
    ``release.benchmark.BENCHMARK_UNITS_PATH`` by the caller): construction is skipped."""
    overlay = CommentedMap()
    overlay["extends"] = profile
    gen_names, new_gens = [], CommentedMap()
    for spec in generators:
        name, block = generator_entry(spec, params.get("generators") or {}, device, gen_names)
        gen_names.append(name)
        if block is not None:
            new_gens[name] = block
    clip_judge = (params.get("clip") or {}).get("judge")  # a blind judge outside the catalogue
    judge_names, new_judges = [], CommentedMap()
    for spec in judges:
        name, block = judge_entry(
            spec, params.get("judges") or {}, device, api_key_env, [*judge_names, clip_judge or ""]
        )
        judge_names.append(name)
        if block is not None:
            new_judges[name] = block
    if len(set(gen_names)) != len(gen_names) or len(set(judge_names)) != len(judge_names):
        raise ConfigError(
            "two --generator or two --judge specs name the same entry; give each once"
        )
    overlay["base"] = CommentedMap(profile="")  # filled in by the caller (the overlay's own name)
    if new_gens:
        overlay["generators"] = new_gens
    if new_judges:
        overlay["judges"] = new_judges
    if units is not None:
        overlay["subset"] = CommentedMap(max_units=units)
    if construction:
        _construction_overlay(overlay, params, gen_names, judge_names, seeds, clip_judge)
        return overlay
    if benchmark is not None:
        from implicit_bench.release.benchmark import BENCHMARK_UNITS_PATH, seed_map

        units_file = BENCHMARK_UNITS_PATH
        overlay["benchmark"] = CommentedMap(path=benchmark)
        if table4_only:
            overlay["benchmark"]["variants"] = ["neutral"]
        # construction skipped: no candidate rendered or judged (the release's units are fixed)
        overlay["render"] = CommentedMap(run=[])
        overlay["judge"] = CommentedMap(configs=[])
        # B.6 re-scores construction stores and debiasing configurations: none here
        overlay["b6"] = CommentedMap(enabled=False)
    _bench_overlay(overlay, params, gen_names, judge_names, seeds, table4_only, units_file)
    if benchmark is not None:
        overlay["bench"]["seed_index"] = CommentedMap(seed_map())
        # the leaderboard puts the release's Table 4 generators beside the new ones, paired;
        # construction judged nothing, so evaluate reads the benchmark phase's judgements only
        # and analyses the new generator (found by tests/e2e/test_benchmark_run_dvc.py)
        evaluate = overlay["evaluate"]
        evaluate["judgements"] = [BENCH_JUDGEMENTS_PATH]
        evaluate["config"] = overlay["bench"]["run"][0]
        evaluate["rubric_judges"] = list(judge_names)
        if table4_only:  # no blind question asked: no blind judge to analyse
            evaluate["blind_judges"] = None
        evaluate["beside_release"] = benchmark
    # debiasing (debias.generator, debias.scoring) and the HoloFair study (diversity_study) keep
    # the profile's models: steering needs a pipeline with embedding hooks and the study a face
    # judge for real images; set those keys in the overlay to run them on your model.
    return overlay


def _bench_overlay(
    overlay: CommentedMap,
    params: dict[str, Any],
    gen_names: list[str],
    judge_names: list[str],
    seeds: list[int] | None,
    table4_only: bool,
    units_file: str | None,
) -> None:
    """The benchmark phase only (docs/experiments.md, "Two phases"): the new generators render
    the fixed unit set (bench.units: the committed selection or ``units_file``); construction
    (render.run, judge, select) keeps the profile's models, so no candidate is re-rendered."""
    first_judge = judge_names[0]
    bench_seeds = list(seeds or (params.get("render") or {}).get("seeds") or [42, 1042, 2042])
    variants = ["neutral"] if table4_only else list(VARIANTS)
    bench = CommentedMap()
    if units_file is not None:
        bench["units"] = units_file
    construction = (params.get("render") or {}).get("run")
    construction = list(params.get("generators") or {}) if construction is None else construction
    stores: list[str] = []  # a generator construction renders gets a store of its own here
    for name in gen_names:
        stores.append(name if name not in construction else _fresh(f"{name}-bench", stores))
    bench["generators"] = CommentedMap(
        (store, CommentedMap(generator=name, variants=variants, seeds=bench_seeds))
        for store, name in zip(stores, gen_names, strict=True)
    )
    tasks = CommentedMap()
    tasks["rubric"] = CommentedMap(judges=list(judge_names), configs=list(stores))
    if not table4_only:
        tasks["blind"] = CommentedMap(judges=list(judge_names), configs=list(stores))
    tasks["alignment"] = CommentedMap(
        judges=[first_judge], configs=list(stores), variants=["neutral"]
    )
    bench["run"] = list(stores)  # only the new generators (a profile's own stay unrendered)
    bench["tasks"] = tasks
    overlay["bench"] = bench
    evaluate = CommentedMap(
        judgements=[JUDGEMENTS_PATH, CLIP_JUDGEMENTS_PATH, BENCH_JUDGEMENTS_PATH],
        image_index_glob=ALL_IMAGE_INDEX_GLOB,
    )
    if units_file is not None:
        evaluate["units"] = units_file
        evaluate["selected_units"] = None
    if not table4_only:  # every table on the new generator; --tables 4: its Table 4 row only
        evaluate["config"] = stores[0]
        evaluate["blind_judges"] = list(judge_names)
        evaluate["rubric_judges"] = None
    overlay["evaluate"] = evaluate


def _construction_overlay(
    overlay: CommentedMap,
    params: dict[str, Any],
    gen_names: list[str],
    judge_names: list[str],
    seeds: list[int] | None,
    clip_judge: str | None,
) -> None:
    """The whole protocol on the new models (``run --sequential``: rounds over the candidate
    units): they render and judge in construction and select the units."""
    first_gen, first_judge = gen_names[0], judge_names[0]
    render = CommentedMap(run=gen_names)
    if seeds:
        render["seeds"] = seeds
    overlay["render"] = render
    tasks = CommentedMap()
    for task in (params.get("judge") or {}).get("tasks") or {
        "rubric": None,
        "blind": None,
        "alignment": None,
    }:
        tasks[task] = CommentedMap(
            judges=[first_judge] if task == "alignment" else list(judge_names)
        )
    overlay["judge"] = CommentedMap(tasks=tasks, configs=None)
    overlay["select"] = CommentedMap(config=first_gen, judges=None)
    overlay["evaluate"] = CommentedMap(
        config=first_gen,
        blind_judges=[*judge_names, *([clip_judge] if clip_judge else [])],
        rubric_judges=None,
    )


def check_exp_name(name: str) -> str:
    """``name`` if ``dvc exp run --name`` takes it, else a one-line ``ConfigError``: DVC's rules
    (``dvc.repo.experiments.utils.check_ref_format``: ``refs/exps/../NAME`` a valid git ref
    name by git's check-ref-format, via dulwich as DVC does, and no ``/``), and no leading
    ``-`` (DVC's command line would read it as an option)."""
    from dulwich.refs import check_ref_format

    if (
        not name
        or name.startswith("-")
        or "/" in name
        or not check_ref_format(f"refs/exps/00/0000/{name}".encode())
    ):
        raise ConfigError(
            f"--name {name!r}: not a DVC experiment name (git check-ref-format rules: no "
            "'/', '..', '~', '^', ':', '?', '*', '[', '\\', space or '@{'; not starting "
            "with '-' or '.', not ending with '.' or '.lock')"
        )
    return name


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
    "--units", type=click.IntRange(0), default=None, help="subset.max_units (0: every unit)."
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
@click.option("--rounds", default=None, help="With --sequential: unit counts N1,N2,...")
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
    rounds: str | None,
    max_gpu_hours: float | None,
) -> None:
    """Evaluate your model: overlay -> preflight -> plan -> dvc exp run."""
    from implicit_bench._util.redact import url
    from implicit_bench._util.yamlsafe import load_yaml
    from implicit_bench.cli.check import images_still_to_render
    from implicit_bench.cli.options import parse_assume
    from implicit_bench.params.profiles import (
        compose,
        deep_merge,
        profile_chain,
        round_trip_yaml,
        write_profile,
    )
    from implicit_bench.planning.plan import build_plan, format_plan
    from implicit_bench.preflight.backends import load_registries
    from implicit_bench.preflight.checks import preflight
    from implicit_bench.preflight.params_check import validate_params

    overlay_name = f"run-{exp_name}" if exp_name else "run"
    if exp_name is not None:
        check_exp_name(exp_name)
    try:
        check_name(overlay_name, "--name")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if Path("profiles", f"{overlay_name}.yaml").resolve() in {
        p.resolve() for p in profile_chain(profile)
    }:  # the overlay would extend itself: refused before it is rewritten
        raise ConfigError(
            f"--profile {profile}: it is (or extends) profiles/{overlay_name}.yaml, the overlay "
            f"this run writes; use another --name or --profile"
        )
    if not sequential and (target_width or estimands or resolve or rounds or max_gpu_hours):
        raise click.UsageError(
            "--target-width, --estimand, --resolve, --rounds and --max-gpu-hours go with "
            "--sequential"
        )
    if sequential and (queue or (target_width is None and not resolve)):
        raise click.UsageError("--sequential needs --target-width or --resolve (and no --queue)")
    base = compose(profile)
    overlay = build_overlay(
        base,
        list(generators),
        list(judges),
        profile=profile,
        units=units,
        seeds=seeds,
        device=device,
        api_key_env=api_key_env,
        table4_only=tables == "4",
        units_file=units_file,
        construction=sequential,
        benchmark=benchmark,
    )
    overlay["base"]["profile"] = overlay_name
    round_units: list[int] = []
    if sequential:
        from implicit_bench.planning.sequential import parse_pairs, parse_rounds

        parse_pairs(resolve)
        everyone = {**base, "subset": {**(base.get("subset") or {}), "max_units": 0}}
        _, whole = build_plan(everyone)
        round_units = parse_rounds(rounds, int(units or whole["units"]))
        overlay["subset"] = CommentedMap(
            max_units=round_units[0],
            order="random",
            seed=section(base, "subset", SubsetParams).seed,
        )
    path = Path("profiles") / f"{overlay_name}.yaml"
    buf = io.StringIO()
    round_trip_yaml().dump(overlay, buf)
    what = "the default profile" if profile == "default" else f"profiles/{profile}.yaml"
    header = (
        f"# `implicit-bench run` overlay: {what} plus the models of this run.\n"
        f"# Apply again with `implicit-bench profile {overlay_name}`; "
        "back with `implicit-bench profile default`.\n"
    )
    # the composed params, validated (every name the overlay uses exists) before anything is
    # written: compose(overlay_name) of the file about to be written
    params = deep_merge(
        base, {k: v for k, v in load_yaml(buf.getvalue()).items() if k != "extends"}
    )
    validate_params(params, path)  # every section, as `implicit-bench check` does
    atomic_write_text(path, header + buf.getvalue())
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
        if units_file is not None or sequential:
            raise click.UsageError("--benchmark goes without --units-file and --sequential")
        from implicit_bench.release.judge_notice import judge_notice

        judges_used = {n: params["judges"][n] for n in params["bench"]["tasks"]["rubric"]["judges"]}
        try:
            notes = judge_notice(judges_used, benchmark)
        except Exception as exc:  # noqa: BLE001 - a judge not buildable here (the sim world)
            notes = [f"the judges were not compared with the release's Table 4 judge ({exc})"]
        for line in notes:
            click.echo(f"note: {line}")
    plans, info = build_plan(params, assume=parse_assume(assume) or None)
    _echo_block("plan", format_plan(plans, info))
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
        "exp", "run", *(["--name", exp_name] if exp_name else []), *(["--queue"] if queue else [])
    )
    if benchmark is not None:
        from implicit_bench.release.benchmark import write_benchmark_units

        written = write_benchmark_units(benchmark)
        click.echo(
            f"benchmark: {written.n_units:,} units of {benchmark} (sha256 {written.sha256}) "
            f"-> {params['bench']['units']}"
        )
    write_profile(overlay_name, "params.yaml", "params.yaml")
    if sequential:
        from implicit_bench.params import load_params
        from implicit_bench.planning.sequential import parse_pairs, run_sequential

        run_sequential(
            lambda: load_params("params.yaml"),
            round_units,
            target_width,
            list(estimands),
            parse_pairs(resolve),
            max_gpu_hours,
            exp_name,
        )
        return
    click.echo(f"params.yaml: profile {overlay_name}; running dvc {' '.join(cmd[3:])}")
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise SystemExit(done.returncode)


__all__ = ["build_overlay", "generator_entry", "judge_entry", "run_command"]
