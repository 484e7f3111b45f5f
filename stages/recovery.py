"""Stage `recovery`: every headline estimate beside the simulated world's planted truth
(``metrics/recovery.json``; docs/world.md, "Recovery")."""

from __future__ import annotations

import glob
from pathlib import Path

import click

from implicit_bench._util.files import read_json, write_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.params import load_params, section
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
    WorldParams,
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


def _json(path: str) -> dict:
    return read_json(path) if Path(path).exists() else {}


def _sims(block: dict) -> dict[str, str]:
    """name -> world entry, for the ``sim`` backends of a params block of configs."""
    return {
        name: sim_name(str(cfg["model"]))
        for name, cfg in (block or {}).items()
        if isinstance(cfg, dict) and cfg.get("backend") == "sim"
    }


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default="metrics/recovery.json", show_default=True)
def main(params_path: str, out: str) -> None:
    raw = load_params(params_path)
    world_params = section(raw, "world", WorldParams, params_path)
    gens = _sims(raw.get("generators"))
    judges = _sims(raw.get("judges"))
    if not gens or not judges:
        write_json(
            out, {"simulated": False, "note": "no simulated generator or judge in this profile"}
        )
        click.echo("recovery: no simulated world in this profile")
        return
    world = load_world(world_params.out_dir)
    rt = RowTruth(world, gens)
    judgements = read_judgements(JUDGEMENTS_PATH)
    units = UNITS.read(UNITS_PATH)
    selected = SELECTED_UNITS.read(SELECTED_UNITS_PATH)["unit_id"].tolist()
    bench, audit = _json("metrics/benchmark.json"), _json("metrics/judge_audit.json")
    primary = bench.get("primary_judge")
    config = bench.get("config")
    if (
        config not in gens
    ):  # e.g. `implicit-bench run` on your own model: no planted truth to recover
        write_json(
            out,
            {
                "simulated": False,
                "note": f"the evaluated configuration {config!r} is not a simulated generator",
            },
        )
        click.echo(f"recovery: {config} is not simulated: nothing to recover")
        return
    evaluate = raw.get("evaluate") or {}
    index_paths = sorted(glob.glob(IMAGE_INDEX_GLOB))
    index = IMAGE_INDEX.read_many(index_paths) if index_paths else None
    if index is not None:
        index = index.merge(units[["unit_id", "bias_type"]], on="unit_id", how="left")
    # evaluate.n_seeds null: the seeds in the judgements (as the evaluate stage does)
    n_seeds = evaluate.get("n_seeds") or bench.get("n_seeds") or int(judgements["seed"].nunique())
    entries = benchmark_entries(rt, judgements, bench, selected, judges, int(n_seeds))
    boot = evaluate_bootstrap(raw, params_path)
    if primary in judges and config:
        entries += all_units_entries(
            rt, judgements, config, primary, units["unit_id"].astype(str).tolist(), judges, boot
        )
        # judge-error correction from the simulated human rater's
        # calibration set (docs/correction.md)
        corrected, calibration = calibration_entries(
            rt,
            judgements,
            config,
            primary,
            units["unit_id"].astype(str).tolist(),
            world_params,
            boot.n,
            boot.seed,
            IMAGES_DIR,
            selected,
        )
        entries += corrected
    else:
        calibration = None
    entries += _hedges(rt, judgements, read_json("metrics/lean.json"), selected, judges, config)
    entries += selection_entries(
        world,
        selected,
        units["unit_id"].astype(str).tolist(),
        gens.get((raw.get("select") or {}).get("config"), next(iter(gens.values()))),
    )
    entries += other_generator_entries(
        world,
        selected,
        units["unit_id"].astype(str).tolist(),
        gens,
        _json("metrics/selection.json").get("other_generators") or {},
    )
    entries += direct_arm_entries(rt, judgements, _json("metrics/selection.json"), judges)
    entries += diversity_study_entries(
        world, _json("metrics/diversity_study.json"), gens, world_params.faces.error
    )
    entries += audit_entries(rt, judgements, audit, judges)
    entries += refusal_entries(world, index, gens)
    entries += judge_selection_entries(audit, world_params)
    entries += negprobe_entries(_json("metrics/negation.json"), world_params)
    if primary in judges:
        entries += negation_entries(rt, judgements, _json("metrics/negation.json"), primary, judges)
        entries += diversity_entries(
            rt, judgements, _json("metrics/diversity.json"), primary, config, units, judges
        )
        entries += scene_check_entries(
            rt, judgements, _json("metrics/diversity.json"), primary, config, judges
        )
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
    write_json(out, payload)
    s = payload["summary"]
    click.echo(
        f"recovery (SIMULATED): {s['covered']} of {s['with_interval']} "
        f"intervals cover the planted truth -> {out}"
    )


def _hedges(rt, judgements, lean, selected, judges, config):
    pooled = ((lean.get("hedges_g") or {}).get("pooled")) or {}
    rubric_judges = (lean.get("hedges_g") or {}).get("judges") or []
    rubric_judges = [j for j in rubric_judges if j in judges]
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


if __name__ == "__main__":
    main()
