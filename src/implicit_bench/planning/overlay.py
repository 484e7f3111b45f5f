"""The params overlay of ``implicit-bench run`` (README, "Evaluate your model"): the models of
a run, given as specs, as a profile that ``extends:`` another (``profiles/run[-NAME].yaml``).

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
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap

from implicit_bench._util.files import atomic_write_text
from implicit_bench._util.yamlsafe import load_yaml
from implicit_bench.errors import ConfigError
from implicit_bench.params import SubsetParams, catalogue, check_name, section
from implicit_bench.params.profiles import deep_merge, profile_chain, round_trip_yaml
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    ALL_IMAGE_INDEX_GLOB,
    BENCH_IMAGE_INDEX_GLOB,
    BENCH_IMAGES_DIR,
    BENCH_JUDGEMENTS_PATH,
    CLIP_JUDGEMENTS_PATH,
    JUDGEMENTS_PATH,
)
from implicit_bench.runtime.preflight.params_check import validate_params

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
        name, block = generator_entry(spec, catalogue(params, "generators"), device, gen_names)
        gen_names.append(name)
        if block is not None:
            new_gens[name] = block
    clip_judge = (params.get("clip") or {}).get("judge")  # a blind judge outside the catalogue
    judge_names, new_judges = [], CommentedMap()
    for spec in judges:
        name, block = judge_entry(
            spec, catalogue(params, "judges"), device, api_key_env, [*judge_names, clip_judge or ""]
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

        units_file = units_file or BENCHMARK_UNITS_PATH  # the release's units, or a pilot of them
        overlay["benchmark"] = CommentedMap(path=benchmark)
        if table4_only:
            overlay["benchmark"]["variants"] = ["neutral"]
        # construction skipped: no candidate rendered or judged (the release's units are fixed)
        overlay["render"] = CommentedMap(run=[])
        overlay["judge"] = CommentedMap(configs=[])
        # B.6 re-scores construction stores and debiasing configurations: none here
        overlay["b6"] = CommentedMap(enabled=False)
    _bench_overlay(overlay, params, gen_names, judge_names, seeds, table4_only, units_file)
    if units_file is not None:
        fixed_unit_set_overlay(overlay, units_file, judge_names, table4_only)
    if benchmark is not None:
        overlay["bench"]["seed_index"] = CommentedMap(seed_map())
        # the leaderboard puts the release's Table 4 generators beside the new ones, paired;
        # construction judged nothing, so evaluate reads the benchmark phase's judgements only
        # and analyses the new generator (found by tests/e2e/test_benchmark_run_dvc.py)
        overlay["evaluate"]["beside_release"] = benchmark
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
    construction = list(catalogue(params, "generators")) if construction is None else construction
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
    if not table4_only:  # every table on the new generator; --tables 4: its Table 4 row only
        evaluate["config"] = stores[0]
        evaluate["blind_judges"] = list(judge_names)
        evaluate["rubric_judges"] = None
    overlay["evaluate"] = evaluate


def fixed_unit_set_overlay(
    overlay: CommentedMap, units_file: str, judge_names: list[str], table4_only: bool
) -> None:
    """A run on a fixed unit set (``--benchmark``, ``--units-file``) needs no construction: the
    world plants that set's units, the benchmark phase names no construction store, and
    evaluate reads the benchmark phase's judgements only, with every construction input it
    depends on (``evaluate.inputs``) pointed at the run's own files (docs/experiments.md,
    "Run only what the job needs")."""
    overlay["world"] = CommentedMap(units=units_file)
    bench = overlay["bench"]
    stores = list(bench["run"])
    # the construction stores a task may name: none (a dep of bench_judge, judge.images_dir)
    overlay.setdefault("judge", CommentedMap())["images_dir"] = BENCH_IMAGES_DIR
    for task in bench["tasks"].values():  # only the run's own stores are judged
        task["configs"] = [c for c in task["configs"] if c in stores]
    evaluate = overlay["evaluate"]
    evaluate["units"] = units_file
    evaluate["selected_units"] = None
    evaluate["judgements"] = [BENCH_JUDGEMENTS_PATH]
    evaluate["image_index_glob"] = BENCH_IMAGE_INDEX_GLOB
    evaluate["config"] = stores[0]
    evaluate["rubric_judges"] = list(judge_names)
    if table4_only:  # no blind question asked: no blind judge to analyse
        evaluate["blind_judges"] = None
    evaluate["inputs"] = CommentedMap(
        selection=units_file,
        selection_metrics=units_file,  # not read: no selection is analysed
        judgements=BENCH_JUDGEMENTS_PATH,
        clip=BENCH_JUDGEMENTS_PATH,
        images=BENCH_IMAGES_DIR,
    )


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
    # B.6 re-scores the profile's Table 4 stores, which these rounds do not render
    overlay["b6"] = CommentedMap(enabled=False)
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


def overlay_name_for(exp_name: str | None, profile: str) -> str:
    """The overlay profile ``run`` writes (``run`` or ``run-NAME``), checked: a DVC experiment
    name, a safe profile name, and not a profile that ``profile`` extends (the overlay would
    extend itself)."""
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
    return overlay_name


def first_round_subset(base: dict[str, Any], max_units: int) -> CommentedMap:
    """The ``subset`` block of a sequential run's first round: the first ``max_units`` units
    of one random order (the base's subset seed)."""
    return CommentedMap(
        max_units=max_units,
        order="random",
        seed=section(base, "subset", SubsetParams).seed,
    )


def write_overlay(
    overlay: CommentedMap, base: dict[str, Any], profile: str, overlay_name: str
) -> tuple[Path, dict[str, Any]]:
    """Write ``profiles/<overlay_name>.yaml`` once the params it composes to validate (every
    section, as ``implicit-bench check`` does); returns its path and those params."""
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
    validate_params(params, path)
    atomic_write_text(path, header + buf.getvalue())
    return path, params


__all__ = ["build_overlay", "check_exp_name", "generator_entry", "judge_entry", "write_overlay"]
