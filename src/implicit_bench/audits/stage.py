"""Stage-level work of ``judge_audit``, ``negation`` and ``diversity``: params, loading, reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.audits.diversity import (
    diversity_frame,
    diversity_report,
)
from implicit_bench.audits.labels import OrderOf, blind_rows, primary_labels
from implicit_bench.audits.negation import (
    negation_intervals,
    negation_settings,
    negation_summary,
    negation_table,
    subject_presence,
    with_presence,
)
from implicit_bench.audits.order import (
    cross_judge_gate,
    cyclic_audit,
    nan_to_none,
    order_flips,
    position_bias,
    position_plot_rows,
    risk_coverage,
    unanimity_gate,
)
from implicit_bench.audits.params import (
    DiversityParams,
    FaceAuditParams,
    JudgeAuditParams,  # noqa: F401 - re-exported for stages/judge_audit.py
    NegationParams,
    SelectionAuditParams,
)
from implicit_bench.audits.scene_check import scene_check
from implicit_bench.params import BootstrapParams
from implicit_bench.protocol.judge_families import blind_family_check, blind_models_from_judgements
from implicit_bench.protocol.schema import CYCLIC_ORDERS
from implicit_bench.runtime.provenance import upstream_provenance  # noqa: F401 - re-exported for the audit stages

# The UNITS columns the negation and diversity audits read (tables.UNITS.read(path, require=...)).
UNIT_COLUMNS_USED = ("unit_id", "bias_type")


def world_block(raw: dict[str, Any], params_path: str) -> Any:
    """The ``world`` params (``WorldParams``): the selection audit's simulated pools and the
    evaluator audit's simulated evaluation set."""
    from implicit_bench.params import section
    from implicit_bench.world.params import WorldParams

    return section(raw, "world", WorldParams, params_path)


def evaluator_report(params: NegationParams, world: Any, boot: Any) -> dict[str, Any] | None:
    """NegT2IBench's evaluator audit of a labels file or of the simulated world's evaluation
    set (``world``: the ``WorldParams``); None with source ``none``."""
    from implicit_bench.audits.evaluator_agreement import (
        evaluator_audit,
        read_labels,
        validate_labels,
    )
    from implicit_bench.errors import ConfigError

    if params.evaluator_source == "none":
        return None
    if params.evaluator_source == "file":
        if not params.evaluator_labels:
            raise ConfigError("negation.evaluator_labels: a file is needed with source file")
        labels = read_labels(params.evaluator_labels)
        block = {"simulated": False, "source": params.evaluator_labels}
        return nan_to_none({**block, **evaluator_audit(labels, boot)})
    from implicit_bench.world.negprobe import planted_labels

    if world.negprobe.images == 0:
        raise ConfigError("negation.evaluator_source sim needs world.negprobe.images > 0")
    labels = validate_labels(planted_labels(world.negprobe, world.seed), "world.negprobe")
    return nan_to_none(
        {
            "simulated": True,
            "note": "SIMULATED: images, annotators and the evaluator's probabilities come from "
            "the simulated world (world.negprobe)",
            "source": "world.negprobe",
            "world_seed": world.seed,
            **evaluator_audit(labels, boot),
        }
    )


def corpus_report(params: NegationParams, world: Any, boot: Any) -> tuple[pd.DataFrame, dict]:
    """NegT2IBench's corpus (the frame, empty with ``per_cell`` 0) and the ``corpus`` block of
    metrics/negation.json: its summary and a model's accuracy on it (``accuracy``: None with
    source ``none``)."""
    from implicit_bench.audits.negation_accuracy import accuracy_report, read_judgements
    from implicit_bench.audits.negation_corpus import corpus_summary, elements, write_corpus
    from implicit_bench.errors import ConfigError

    spec = params.corpus
    corpus = write_corpus(spec.per_cell, spec.seed)
    if corpus.empty:
        return corpus, {"prompts": 0, "accuracy": None}
    block: dict[str, Any] = {"per_cell": spec.per_cell, "seed": spec.seed}
    block.update(corpus_summary(corpus))
    el = elements(corpus)
    if spec.source == "none":
        block["accuracy"] = None
    elif spec.source == "file":
        if not spec.judgements:
            raise ConfigError("negation.corpus.judgements: a file is needed with source file")
        block["accuracy"] = {
            "simulated": False,
            "source": spec.judgements,
            **accuracy_report(read_judgements(spec.judgements, el), el, boot),
        }
    else:
        from implicit_bench.audits.negation_accuracy import validate_judgements
        from implicit_bench.audits.negation_world import accuracy_truth, simulated_judgements

        if world.negt2i.seeds == 0:
            raise ConfigError("negation.corpus.source sim needs world.negt2i.seeds > 0")
        judg = validate_judgements(
            simulated_judgements(el, world.negt2i, world.seed), el, "world.negt2i"
        )
        block["accuracy"] = {
            "simulated": True,
            "note": "SIMULATED: images and per-object judgements come from the simulated world "
            "(world.negt2i); no pixels are drawn",
            "world_seed": world.seed,
            **accuracy_report(judg, el, boot),
            "planted": accuracy_truth(corpus, world.negt2i),
        }
    return corpus, nan_to_none(block)


def selection_error_plot(selection: dict[str, Any] | None) -> pd.DataFrame:
    """plots/selection_errors.csv: When the Judge Acts' Figure 7 from the selection block."""
    from implicit_bench.audits.image_pick_outcomes import PLOT_COLUMNS, error_plot_rows

    return pd.DataFrame(error_plot_rows(selection), columns=list(PLOT_COLUMNS))


def selection_report(
    params: SelectionAuditParams, world: Any, boot: Any, confidence: float = 0.95
) -> dict[str, Any] | None:
    """The ``selection`` block of metrics/judge_audit.json (None when ``source`` is ``none``).
    ``world``: the ``WorldParams`` (source ``sim``)."""
    from implicit_bench.audits.image_pick import selection_audit
    from implicit_bench.audits.image_pick_breakdown import selection_breakdowns

    kw = {
        "margin": params.margin,
        "sensitivity_margin": params.sensitivity_margin,
        "near_tie_delta": params.near_tie_delta,
        "confidence": confidence,
    }
    if params.source == "none":
        return None
    if params.source == "file":
        from implicit_bench.errors import ConfigError

        if not params.decisions:
            raise ConfigError("judge_audit.selection.decisions: a file is needed with source file")
        return nan_to_none(
            decisions_report(params.decisions, params.second_decisions, params.ablations, boot, kw)
        )
    from implicit_bench.audits.image_pick_world import PROTOCOLS, simulate_selection
    from implicit_bench.errors import ConfigError

    missing = [j for j in (params.judge, params.second_judge) if j is not None]
    missing = [j for j in missing if j not in world.selection.judges]
    if world.selection.pools == 0 or missing:
        raise ConfigError(
            "judge_audit.selection.source sim needs world.selection.pools > 0 and "
            f"world.selection.judges.{(missing or [params.judge])[0]}"
        )
    out: dict[str, Any] = {
        "simulated": True,
        "note": "SIMULATED: pools, utilities, choices and seconds per call come from the "
        "simulated world (world.selection); the seconds are a simulated clock",
        "judge": params.judge,
        "second_judge": params.second_judge,
        "world_seed": world.seed,
        "protocols": {},
    }
    for name in params.protocols:
        protocol = PROTOCOLS[name]
        pools, counts = simulate_selection(world.selection, world.seed, params.judge, protocol)
        block = selection_audit(pools, boot, f"selection/{name}", **kw)
        if name == "main":  # the breakdowns (generators, strata, consensus, validity)
            block["breakdowns"] = selection_breakdowns(
                pools, boot, "selection/main", params.margin, params.near_tie_delta, confidence
            )
        block["protocol"] = {
            "n_orders": protocol.n_orders,
            "full_rotation": protocol.full_rotation,
            "labels": protocol.labels,
            "contract": protocol.contract,
        }
        block["parse"] = counts
        if world.selection.scorers and name == "main":
            from implicit_bench.audits.image_pick import scorer_report
            from implicit_bench.audits.image_pick_world import scorer_choices

            # When the Judge Acts §5.4, Table 15: a content-only similarity scorer (the CLIP
            # baseline), one entry per backbone, side by side against the judge
            block["content_baselines"] = {
                scorer: scorer_report(
                    pools,
                    scorer_choices(world.selection, world.seed, scorer),
                    boot,
                    f"selection/{name}",
                    params.margin,
                )
                for scorer in sorted(world.selection.scorers)
            }
        if params.second_judge is not None and name == "main":
            from implicit_bench.audits.image_pick import cross_model_gate

            second, second_counts = simulate_selection(
                world.selection, world.seed, params.second_judge, protocol
            )
            block["cross_model"] = {
                "second_judge": params.second_judge,
                "second_parse": second_counts,
                **cross_model_gate(pools, second, boot, f"selection/{name}", params.margin),
            }
        out["protocols"][name] = block
    return nan_to_none(out)


def decisions_report(
    decisions: str,
    second: str | None,
    ablations: dict[str, str],
    boot: Any,
    kw: dict[str, Any],
) -> dict[str, Any]:
    """The selection audit of decisions files: the main judge's (with its breakdowns), the
    cross-model gate against a second judge's file on the same pools, and each ablation's file
    audited like the main one (When the Judge Acts §5.3, §5.5)."""
    from implicit_bench.audits.image_pick import cross_model_gate, selection_audit
    from implicit_bench.audits.image_pick_breakdown import selection_breakdowns
    from implicit_bench.audits.image_pick_table import read_decisions
    from implicit_bench.errors import InputError

    pools = read_decisions(decisions)
    main = selection_audit(pools, boot, "selection/main", **kw)
    breakdown_kw = {k: v for k, v in kw.items() if k in ("margin", "near_tie_delta", "confidence")}
    main["breakdowns"] = selection_breakdowns(pools, boot, "selection/main", **breakdown_kw)
    if second is not None:
        other = read_decisions(second)
        try:
            gate = cross_model_gate(pools, other, boot, "selection/main", kw.get("margin", 0.0))
        except ValueError as err:
            raise InputError(second, None, "utility", str(err)) from None
        main["cross_model"] = {"second_judge": second, **gate}
    out: dict[str, Any] = {"simulated": False, "source": decisions, "main": main}
    if ablations:
        out["ablations"] = {
            name: {
                "source": path,
                **selection_audit(read_decisions(path), boot, f"selection/{name}", **kw),
            }
            for name, path in sorted(ablations.items())
        }
    return out


def order_function(primary_order: str) -> OrderOf | None:
    """The primary order of an image asked under both orders (see labels.primary_labels)."""
    if primary_order == "hash":
        from implicit_bench.protocol.schema import blind_order

        return blind_order
    return lambda unit_id, seed, variant: primary_order


RISK_DEFINITION = (
    "risk = 1 - success_a (the share of anti-stereotype images the judge reads as the "
    "anti-stereotype, on the images the gate keeps). When the Judge Acts takes risk as regret "
    "against human utilities; this benchmark has no human utility per image, so a blind rate "
    "stands in for it and the risk is not the paper's regret."
)


def judge_audit(
    judgements: pd.DataFrame,
    order_of: OrderOf | None,
    confidence: float = 0.95,
    source: str = "judgements",
    boot: Any = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """metrics/judge_audit.json content (without provenance) and the position-bias plot rows."""
    blind = blind_rows(judgements, source)
    judges = sorted(blind["judge"].astype(str).unique())
    with_orders = sorted(blind.loc[blind["order"].notna(), "judge"].astype(str).unique())
    report = {
        "judges": judges,
        "judges_with_orders": with_orders,
        "position_bias": position_bias(blind[blind["judge"].isin(with_orders)], confidence, boot),
        "order_flips": order_flips(blind),
        "unanimity_gate": unanimity_gate(blind, order_of, boot),
        "cross_judge_gate": cross_judge_gate(blind, order_of, boot),
        # judge.blind_orders: cyclic3 (When the Judge Acts): three cyclic orders of s, a, neither
        "judges_with_cyclic_orders": sorted(
            blind.loc[blind["order"].isin(CYCLIC_ORDERS), "judge"].astype(str).unique()
        ),
        "cyclic_orders": cyclic_audit(blind, boot, confidence),
    }
    # When the Judge Acts' risk-coverage table of the gates (its Table 22)
    report["risk_coverage"] = risk_coverage(report)
    report["risk_coverage_note"] = (
        "risk = 1 - success_a (anti-stereotype images read as a): the benchmark has no human "
        "utility, where When the Judge Acts takes selective regret from human ratings; the "
        "selection block (judge_audit.selection) gives the paper's regret on rated pools"
    )
    report["risk_definition"] = RISK_DEFINITION
    # IMPLICIT-Bench E.4 step 4: a blind judge outside the selection families (Qwen, Gemma)
    report["blind_judge_families"] = blind_family_check(blind_models_from_judgements(blind))
    if boot is not None:
        report["bootstrap"] = boot.block("units with replacement")
    return nan_to_none(report), position_plot_rows(blind)


def make_bootstrap(params: BootstrapParams) -> Any:
    """The analysis library's cluster bootstrap (one implementation for the whole project)."""
    from implicit_bench.analysis.bootstrap import Bootstrap

    return Bootstrap.from_params(params)


def negation_report(
    judgements: pd.DataFrame,
    units: pd.DataFrame,
    order_of: OrderOf | None,
    source: str = "judgements",
    boot: Any = None,
    presence_judge: str | None = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """metrics/negation.json content and the plot rows (success by default strength)."""
    presence = subject_presence(judgements, presence_judge, source)
    primary = with_presence(primary_labels(blind_rows(judgements, source), order_of), presence)
    table = negation_table(primary, units)
    intervals = negation_intervals(primary, units, boot) if boot is not None else None
    prompts: dict[str, Any] = {}
    for column in ("prompt_negated_0_1", "prompt_negated_1_1"):
        if column in units.columns:
            checks = units.get(f"{column}_check")
            prompts[column] = {
                "units": len(units),
                "written": int(units[column].notna().sum()),
                "failed_checks": {str(k): int(v) for k, v in checks.value_counts().items()}
                if checks is not None
                else {},
            }
    plot = table[table["grouping"] == "strength"][
        [
            "judge",
            "variant",
            "group",
            "n",
            "strict_success",
            "lenient_success",
            "forbidden_rendered",
            "forbidden_rendered_of_images",
        ]
    ]
    # ``series`` ("judge: variant") colours the bars of the DVC ``bar_grouped`` template
    plot = plot.assign(series=plot["judge"].astype(str) + ": " + plot["variant"].astype(str))
    report = {
        "prompts": prompts,
        "by_judge": negation_summary(table, intervals),
        "settings": negation_settings(),
        "presence": {
            "judge": presence_judge,
            "images_judged": int(len(presence)),
            "note": "lenient success and forbidden rendered (of failed statements) need a presence "
            "judgement (alignment) of every image not read as s; null where none exists",
        },
    }
    if boot is not None:
        report["bootstrap"] = boot.block("units within each group")
    return nan_to_none(report), plot.rename(columns={"group": "strength"})


def diversity_labels(
    judgements: pd.DataFrame,
    units: pd.DataFrame,
    params: DiversityParams,
    order_of: OrderOf | None,
    source: str = "judgements",
    boot: Any = None,
) -> dict[str, Any]:
    primary = primary_labels(blind_rows(judgements, source), order_of)
    frame = diversity_frame(primary, units, params.scene_variant, params.template_variant)
    return nan_to_none(
        diversity_report(
            frame,
            params.include_neither,
            params.scene_variant,
            params.template_variant,
            params.quantiles,
            boot,
            params.min_scene_images,
        )
    )


def diversity_metrics(
    judgements: pd.DataFrame,
    units: pd.DataFrame,
    params: DiversityParams,
    inputs: list[str],
    faces: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """metrics/diversity.json content without provenance: the one writer of the stage and of
    ``implicit-bench analyze`` (which has no images, hence no ``faces``)."""
    boot = make_bootstrap(params.bootstrap)
    return {
        "blind_labels": diversity_labels(
            judgements, units, params, order_function(params.primary_order), boot=boot
        ),
        "bootstrap": boot.block("units with replacement"),
        "faces": faces,
        "scene_check": nan_to_none(
            scene_check(
                primary_labels(
                    blind_rows(judgements, "judgements"), order_function(params.primary_order)
                ),
                units,
                params.scene_check,
            )
        )
        if params.scene_check.enabled
        else None,
        "inputs": inputs,
        "include_neither": params.include_neither,
        "template_variant": params.template_variant,
    }


def face_diversity(units: pd.DataFrame, params: FaceAuditParams) -> dict[str, Any]:
    """Gender and age distributions (face judge) of the neutral images of gender and age units."""
    from implicit_bench.backends.faces import create
    from implicit_bench.backends.faces.attributes import (
        face_attributes,
        face_report,
        judge_images,
        race_note,
    )
    from implicit_bench.render.images import ImageStore, published_stores, read_index
    from implicit_bench.runtime.cache import DiskCache

    roots = [Path(p) for p in params.image_stores] or published_stores(params.images_root)
    chosen = units[units["bias_type"].isin(params.bias_types)][["unit_id", "bias_type"]].astype(
        {"unit_id": str}
    )
    judge = create(params.judge)
    cache = DiskCache(params.cache)
    frames = []
    for root in roots:
        store = ImageStore(root)
        index = read_index(root)  # the render plan's items only
        index = index[(index["status"] == "ok") & (index["variant"] == params.variant)].astype(
            {"unit_id": str}
        )
        index = index.merge(chosen, on="unit_id", how="inner")
        faces = judge_images(judge, cache, index["sha256"], store.load_image)
        attrs = pd.DataFrame(
            [face_attributes(faces[sha], params.judge) for sha in index["sha256"]],
            columns=["faces", "gender", "age", "age_group"],
        )
        frames.append(
            pd.concat(
                [index[["config", "unit_id", "bias_type", "sha256"]].reset_index(drop=True), attrs],
                axis=1,
            )
        )
        store.close()
    frame = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(
            columns=[
                "config",
                "unit_id",
                "bias_type",
                "sha256",
                "faces",
                "gender",
                "age",
                "age_group",
            ]
        )
    )
    return nan_to_none(
        {
            "backend": params.judge.backend,
            "images": len(frame),
            "multi_face_images": int((frame["faces"] > 1).sum()) if len(frame) else 0,
            "by_config": face_report(frame),
            "race": race_note(params.judge.backend),
        }
    )


#: metrics files whose provenance the audit sections inherit when run as DVC stages
UPSTREAM_METRICS = ["metrics/judge.json", "metrics/clip.json", "metrics/render.json"]


def judge_audit_section(
    judgements: pd.DataFrame,
    params: JudgeAuditParams,
    raw: dict[str, Any],
    params_path: str | Path,
    inputs: list[str],
    provenance: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame]:
    """metrics/judge_audit.json and the position-bias plot rows, composed in one place for the
    ``judge_audit`` stage and the ``analyze`` extension (the same keys in the same order):
    the order audit, ``selection``, ``inputs``, ``primary_order``, ``provenance``."""
    report, plot_rows = judge_audit(
        judgements,
        order_function(params.primary_order),
        params.confidence,
        boot=make_bootstrap(params.bootstrap),
    )
    world = world_block(raw, str(params_path)) if params.selection.source == "sim" else None
    report["selection"] = selection_report(
        params.selection, world, make_bootstrap(params.bootstrap), params.confidence
    )
    report["inputs"] = inputs
    report["primary_order"] = params.primary_order
    report["provenance"] = provenance
    return report, plot_rows


def negation_section(
    judgements: pd.DataFrame,
    units: pd.DataFrame,
    params: NegationParams,
    raw: dict[str, Any],
    params_path: str | Path,
    inputs: list[str],
    provenance: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """metrics/negation.json, the by-strength plot rows and NegT2IBench's prompt corpus,
    composed in one place for the ``negation`` stage and the ``analyze`` extension: the
    negation report, ``evaluator_agreement`` (NegT2IBench Tables 2, 5-7, 9-13: the evaluator
    against the annotators' majority), ``corpus`` (Tables 1, 3, 4, 19, Figures 3, 5, 6: the
    corpus and a model's accuracy on it from per-object judgements), ``inputs``,
    ``primary_order``, ``provenance``."""
    report, plot_rows = negation_report(
        judgements,
        units,
        order_function(params.primary_order),
        boot=make_bootstrap(params.bootstrap),
        presence_judge=params.presence_judge,
    )
    sim = params.evaluator_source == "sim" or params.corpus.source == "sim"
    world = world_block(raw, str(params_path)) if sim else None
    report["evaluator_agreement"] = evaluator_report(
        params, world, make_bootstrap(params.bootstrap)
    )
    corpus, report["corpus"] = corpus_report(params, world, make_bootstrap(params.bootstrap))
    report.update(inputs=inputs, primary_order=params.primary_order, provenance=provenance)
    return report, plot_rows, corpus
