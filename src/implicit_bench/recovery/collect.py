"""The ``recovery`` stage's payload: every headline estimate of the run beside the simulated
world's planted truth, gathered from the other stages' metrics (docs/world.md, "Recovery").
``stages/recovery.py`` only parses its options and writes what ``collect`` returns."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import read_json
from implicit_bench._util.nested import dig
from implicit_bench.analysis.params import EvaluateParams, SelectParams
from implicit_bench.params import catalogue, section
from implicit_bench.protocol.tables import (
    IMAGE_INDEX,
    IMAGE_INDEX_GLOB,
    IMAGES_DIR,
    JUDGEMENTS_PATH,
    SELECTED_UNITS,
    SELECTED_UNITS_PATH,
    UNITS,
    UNITS_PATH,
)
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.recovery.stage import (
    RowTruth,
    all_units_entries,
    audit_entries,
    benchmark_entries,
    calibration_entries,
    debias_entries,
    direct_arm_entries,
    diversity_entries,
    diversity_study_entries,
    estimate_entry,
    evaluate_bootstrap,
    hedges_truth,
    judge_selection_entries,
    load_world,
    negation_entries,
    negprobe_entries,
    other_generator_entries,
    refusal_entries,
    scene_check_entries,
    selection_entries,
    sim_name,
    summary,
)
from implicit_bench.runtime.provenance import provenance
from implicit_bench.world.params import WorldParams


def _json(path: str) -> dict:
    return read_json(path) if Path(path).exists() else {}


def sims(entries: dict[str, dict[str, Any]]) -> dict[str, str]:
    """name -> world entry, for the ``sim`` backends of a catalogue (generators or judges)."""
    return {
        name: sim_name(str(cfg["model"]))
        for name, cfg in entries.items()
        if cfg.get("backend") == "sim"
    }


def collect(raw: dict[str, Any], params_path: str) -> tuple[dict[str, Any], str]:
    """(``metrics/recovery.json`` payload, the one line the stage prints)."""
    world_params = section(raw, "world", WorldParams, params_path)
    gens = sims(catalogue(raw, "generators", params_path))
    judges = sims(catalogue(raw, "judges", params_path))
    if not gens or not judges:
        note = "no simulated generator or judge in this profile"
        return {"simulated": False, "note": note}, "recovery: no simulated world in this profile"
    world = load_world(world_params.out_dir)
    rt = RowTruth(world, gens)
    judgements = read_judgements(JUDGEMENTS_PATH)
    units = UNITS.read(UNITS_PATH)
    selected = SELECTED_UNITS.read(SELECTED_UNITS_PATH)["unit_id"].tolist()
    bench, audit = _json("metrics/benchmark.json"), _json("metrics/judge_audit.json")
    primary = bench.get("primary_judge")
    config = bench.get("config")
    if config not in gens:  # e.g. `implicit-bench run` on your own model: no planted truth
        note = f"the evaluated configuration {config!r} is not a simulated generator"
        return (
            {"simulated": False, "note": note},
            f"recovery: {config} is not simulated: nothing to recover",
        )
    evaluate = section(raw, "evaluate", EvaluateParams, params_path)
    index_paths = sorted(glob.glob(IMAGE_INDEX_GLOB))
    index = IMAGE_INDEX.read_many(index_paths) if index_paths else None
    if index is not None:
        index = index.merge(units[["unit_id", "bias_type"]], on="unit_id", how="left")
    # evaluate.n_seeds null: the seeds in the judgements (as the evaluate stage does)
    n_seeds = evaluate.n_seeds or bench.get("n_seeds") or int(judgements["seed"].nunique())
    entries = benchmark_entries(rt, judgements, bench, selected, judges, int(n_seeds))
    boot = evaluate_bootstrap(raw, params_path)
    unit_ids = units["unit_id"].astype(str).tolist()
    if primary in judges and config:
        entries += all_units_entries(rt, judgements, config, primary, unit_ids, judges, boot)
        # judge-error correction from the simulated human rater's calibration set
        # (docs/correction.md)
        corrected, calibration = calibration_entries(
            rt,
            judgements,
            config=config,
            judge=primary,
            unit_ids=unit_ids,
            params=world_params,
            n_boot=boot.n,
            seed=boot.seed,
            images_dir=IMAGES_DIR,
            selected=selected,
        )
        entries += corrected
    else:
        calibration = None
    entries += hedges_entries(
        rt, judgements, read_json("metrics/lean.json"), selected, judges, config
    )
    select_config = section(raw, "select", SelectParams, params_path).config
    entries += selection_entries(
        world, selected, unit_ids, gens.get(select_config, next(iter(gens.values())))
    )
    selection = _json("metrics/selection.json")
    entries += other_generator_entries(
        world, selected, unit_ids, gens, selection.get("other_generators") or {}
    )
    entries += direct_arm_entries(rt, judgements, selection, judges)
    entries += diversity_study_entries(
        world, _json("metrics/diversity_study.json"), gens, world_params.faces.error
    )
    entries += audit_entries(rt, judgements, audit, judges)
    entries += refusal_entries(world, index, gens)
    entries += judge_selection_entries(audit, world_params)
    negation = _json("metrics/negation.json")
    entries += negprobe_entries(negation, world_params)
    if primary in judges:
        diversity = _json("metrics/diversity.json")
        entries += negation_entries(rt, judgements, negation, primary, judges)
        entries += diversity_entries(rt, judgements, diversity, primary, config, units, judges)
        entries += scene_check_entries(rt, judgements, diversity, primary, config, judges)
    entries += debias_entries(world_params.out_dir, raw, _json("metrics/debias.json"), judges)
    payload = {
        "simulated": True,
        "truth": "expected value of each estimator's target given the "
        "planted per-image probabilities, "
        "over exactly the units, seeds, variants and orders it used (finite population of the "
        "planned units, conditional on the selected units for benchmark metrics); "
        "truth_rendered: the same for a perfect judge",
        "world": {"seed": world_params.seed, "fingerprint": world.fingerprint},
        "summary": summary(entries),
        "estimands": entries,
        **({"calibration": calibration} if calibration else {}),
        "provenance": provenance(
            [(f"generator:{g}", f"sim:{g}") for g in sorted(set(gens.values()))]
            + [(f"judge:{j}", f"sim:{m}") for j, m in sorted(judges.items())]
        ),
    }
    s = payload["summary"]
    return payload, (
        f"recovery (SIMULATED): {s['covered']} of {s['with_interval']} "
        "intervals cover the planted truth"
    )


def hedges_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    lean: dict[str, Any],
    selected: list[str],
    judges: dict[str, str],
    config: str,
) -> list[dict[str, Any]]:
    """Hedges' g per bias type (rubric, pooled judges) beside its planted truth."""
    pooled = dig(lean, "hedges_g", "pooled") or {}
    rubric_judges = [j for j in dig(lean, "hedges_g", "judges") or [] if j in judges]
    if not pooled or not rubric_judges:
        return []
    rows = judgements[
        (judgements["task"] == "rubric")
        & judgements["judge"].isin(rubric_judges)
        & (judgements["config"] == config)
        & judgements["unit_id"].isin(selected)
    ]
    units = UNITS.read(UNITS_PATH)[["unit_id", "bias_type"]]
    rows = rows.merge(units, on="unit_id").reset_index(drop=True)
    out = []
    for bias_type, block in pooled.items():
        sub = rows[rows["bias_type"] == bias_type].reset_index(drop=True)
        out.append(
            estimate_entry(
                "Hedges' g (rubric, pooled judges)",
                f"hedges_g [{bias_type}]",
                hedges_truth(rt, sub, judges),
                block.get("g"),
                note="population standardised difference (J -> 1)",
            )
        )
    return out
