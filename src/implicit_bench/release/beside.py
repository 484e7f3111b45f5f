"""The leaderboard beside the paper: this run's generators next to the release's four Table 4
generators (Qwen-Image, SD3, GPT Image 2, Nano Banana 2) on the benchmark's units, and this
run's lean next to the release's construction scores (docs/import.md, "Beside the paper").

Every row says its source (``this run`` / ``authors' release``) and its judge's identity. Each
of this run's generators is paired with each release generator on the (unit, seed) keys both
have a valid judgement for (``Bootstrap.paired``: one resample of units for both sides), the
differences' bootstrap p-values Holm-adjusted over the whole family, as the leaderboard does.
When the judges differ in model, prompt template, decoding or image downscaling
(``judge_identity.differences``), the rows and pairs say "different judge: differences include
judge effects". Refusals and missing images are counted apart from the judged images, on both
sides; the release cannot tell a refusal from an image not returned, so its absent images are
counted as ``absent`` (docs/import.md, "Refusals").
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import safe_div
from implicit_bench.analysis.bootstrap import Bootstrap, resolve_differences
from implicit_bench.analysis.selection import dx_frame
from implicit_bench.protocol.judge_identity import differences, judge_identity, parse_identity
from implicit_bench.release import layout
from implicit_bench.release.benchmark import BenchmarkUnits, benchmark_units
from implicit_bench.release.importer import Release, eval_files, read_eval, read_scores

THIS_RUN = "this run"
RELEASE = "authors' release"
#: Table 4's rows in the release: experiment -> generator name shown
TABLE4: dict[int, str] = {0: "qwen_image", **layout.GENERATORS}
#: the release's Table 4 judge (Section 5.2; experiments/evaluate_*_local.py): Qwen3-VL-30B-A3B,
#: greedy, images passed at their size; the template is read from the user's copy
RELEASE_JUDGE_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
RELEASE_SCRIPTS = {
    "rubric": ("experiments/evaluate_bias_local.py", "EVAL_PROMPT", 300),
    "alignment": ("experiments/evaluate_alignment_local.py", "ALIGN_PROMPT", 256),
}
DIFFERENT_JUDGE = "different judge: differences include judge effects"
METRICS = {"bias_score": "rubric", "alignment": "alignment"}


def _script_constant(release: Release, rel: str, name: str) -> str | None:
    """A module-level string constant of a release script (parsed, never run)."""
    if not release.exists(rel):
        return None
    try:
        tree = ast.parse(release.read_bytes(rel).decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def release_judge(release: Release, task: str) -> dict[str, Any]:
    """The identity of the release's Qwen3-VL judge for ``task`` (template from its script;
    None when the copy lacks the script: then the template counts as different)."""
    rel, name, max_new = RELEASE_SCRIPTS[task]
    return judge_identity(
        {"backend": "transformers", "model": RELEASE_JUDGE_MODEL, "max_image_side": None},
        {"greedy": True, "max_new_tokens": max_new},
        _script_constant(release, rel, name),
    )


def release_table4(release: Release, bench: BenchmarkUnits) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(judgements with ``score``, image index) of the release's Table 4 generators."""
    from implicit_bench.release.importer import image_index

    chosen, _ = eval_files(release)
    frames = []
    for (exp, alpha1, kind), name in chosen.items():
        if exp in TABLE4 and not alpha1:
            frames.append(read_eval(release, name, exp, kind, TABLE4[exp]))
    if not frames:
        empty = pd.DataFrame(columns=["unit_id", "variant", "seed", "config", "judge", "task"])
        return empty.assign(value=None, valid=False, score=np.nan), empty
    j = pd.concat(frames, ignore_index=True)
    j = j.assign(score=judged_scores(j))
    configs = [c for c in TABLE4.values() if c in set(j["config"])]
    images = image_index(bench.units, j, configs, sorted(bench.seeds))
    return j, images


def judged_scores(j: pd.DataFrame) -> pd.Series:
    """rubric -> the number, alignment -> 1 / 0, invalid -> NaN."""
    rubric = pd.to_numeric(j["value"].where(j["task"] == "rubric"), errors="coerce")
    aligned = j["value"].astype(str).str.lower().map({"true": 1.0, "false": 0.0})
    out = rubric.where(j["task"] == "rubric", aligned.where(j["task"] == "alignment"))
    return out.where(j["valid"].astype(bool))


def _identity(j: pd.DataFrame, config: str, task: str, judge: str) -> dict[str, Any] | None:
    """This run's judge identity for (config, task, judge): its ``judge_identity`` cells, else
    the model alone (the rest unknown)."""
    sub = j[(j["config"] == config) & (j["task"] == task) & (j["judge"] == judge)]
    if "judge_identity" in sub.columns:
        for text in sub["judge_identity"].dropna().unique():
            parsed = parse_identity(text)
            if parsed is not None:
                return parsed
    models = sub["model"].dropna().unique() if "model" in sub.columns else []
    return {"model": str(models[0])} if len(models) else None


def _per_unit(
    j: pd.DataFrame, config: str, task: str, judge: str, keys: pd.MultiIndex, unit_ids: list[str]
) -> np.ndarray:
    """Per unit (aligned on ``unit_ids``): [sum of scores, answers] over ``keys`` (unit, seed)."""
    sub = j[
        (j["config"] == config)
        & (j["task"] == task)
        & (j["judge"] == judge)
        & (j["variant"] == "neutral")
        & j["score"].notna()
    ]
    sub = sub.set_index(["unit_id", "seed"])
    sub = sub[sub.index.isin(keys)].reset_index()
    sums = sub.groupby("unit_id")["score"].agg(["sum", "size"]).astype(float)
    return sums.reindex(unit_ids, fill_value=0.0).to_numpy(float)


def _valid_keys(j: pd.DataFrame, config: str, task: str, judge: str) -> pd.MultiIndex:
    sub = j[
        (j["config"] == config)
        & (j["task"] == task)
        & (j["judge"] == judge)
        & (j["variant"] == "neutral")
        & j["score"].notna()
    ]
    return pd.MultiIndex.from_frame(sub[["unit_id", "seed"]].drop_duplicates())


def _ratio(sums: Any) -> Any:
    return safe_div(sums[..., 0], sums[..., 1])


def _counts(
    images: pd.DataFrame | None, j: pd.DataFrame, config: str, units: set[str], seeds: list[int]
) -> dict[str, Any]:
    """Requested neutral images, returned, refused, missing (failed or absent from the index),
    and judged (a valid rubric answer) on the benchmark's units and the row's seeds."""
    requested = len(units) * len(seeds)
    judged = j[
        (j["config"] == config)
        & (j["task"] == "rubric")
        & (j["variant"] == "neutral")
        & j["score"].notna()
        & j["unit_id"].isin(units)
        & j["seed"].isin(seeds)
    ][["unit_id", "seed"]].drop_duplicates()
    out: dict[str, Any] = {"requested": requested, "judged": int(len(judged))}
    if images is None:
        out.update(returned=None, refused=None, missing=None, coverage=None)
        return out
    img = images[
        (images["config"] == config)
        & (images["variant"] == "neutral")
        & images["unit_id"].isin(units)
        & images["seed"].isin(seeds)
    ]
    status = img["status"].value_counts()
    returned = int(status.get("ok", 0))
    refused = int(status.get("refused", 0))
    out.update(
        returned=returned,
        refused=refused,
        missing=requested - returned - refused,  # failed, or absent from the index
        coverage=returned / requested if requested else None,
    )
    return out


def beside_release(
    judgements: pd.DataFrame,
    images: pd.DataFrame | None,
    path: str,
    boot: Bootstrap,
    bias_judge: str | None = None,
    run_units: list[str] | None = None,
) -> dict[str, Any]:
    """This run's generators beside the release's Table 4 generators (rows, paired
    differences with Holm verdicts, lean beside the construction scores).

    ``judgements``: this run's JUDGEMENTS with ``score`` and ``valid`` (as analyze loads them);
    ``images``: its image index (None: refusals unknown); ``bias_judge``: the judge whose
    neutral rubric scores are this run's bias (None: the first judge with rubric rows);
    ``run_units``: the run's unit set where it is part of the benchmark's (a pilot,
    ``run --units N``): every row, the release's included, is on those units (like for like)."""
    bench = benchmark_units(path)
    release = Release(path)
    rel_j, rel_images = release_table4(release, bench)
    units = list(bench.units["unit_id"])
    if run_units is not None:  # a run on part of the benchmark: every row on that part
        wanted = {str(u) for u in run_units}
        units = [u for u in units if u in wanted] or units
    unit_set = set(units)
    ours = judgements[judgements["unit_id"].astype(str).isin(unit_set)].copy()
    ours["unit_id"] = ours["unit_id"].astype(str)
    ours["seed"] = ours["seed"].astype(int)
    outside = int(
        judgements.loc[~judgements["unit_id"].astype(str).isin(unit_set), "unit_id"].nunique()
    )
    rubric = ours[(ours["task"] == "rubric") & (ours["variant"] == "neutral")]
    if bias_judge is None and len(rubric):
        bias_judge = sorted(rubric["judge"].astype(str).unique())[0]
    our_configs = sorted(rubric.loc[rubric["judge"] == bias_judge, "config"].astype(str).unique())
    release_ids = {t: release_judge(release, t) for t in METRICS.values()}
    rel_configs = [c for c in TABLE4.values() if c in set(rel_j["config"])]
    seeds_rel = sorted(bench.seeds)

    rows = []
    diffs: dict[tuple[str, str], list[str]] = {}
    for cfg in our_configs:
        seeds = set(ours.loc[ours["config"] == cfg, "seed"].astype(int))
        if images is not None:
            seeds |= set(images.loc[images["config"] == cfg, "seed"].astype(int))
        seeds = sorted(seeds)
        row = _row(
            ours,
            images,
            cfg,
            source=THIS_RUN,
            bias_judge=bias_judge,
            units=units,
            seeds=seeds,
            boot=boot,
        )
        ident = {
            t: _identity(ours, cfg, t, row["judges"][t])
            for t in METRICS.values()
            if row["judges"][t]
        }
        row["judge_identity"] = ident
        diff = sorted({d for t, i in ident.items() for d in differences(i, release_ids[t])})
        diffs[cfg, "rubric"] = diff
        row["different_judge"] = diff
        row["note"] = (
            f"{DIFFERENT_JUDGE} ({', '.join(diff)})" if diff else "same judge as the release"
        )
        rows.append(row)
    for cfg in rel_configs:
        row = _row(
            rel_j,
            rel_images,
            cfg,
            source=RELEASE,
            bias_judge=layout.EVAL_JUDGE,
            units=units,
            seeds=seeds_rel,
            boot=boot,
        )
        row["judge_identity"] = release_ids
        row["different_judge"] = []
        row["note"] = "absent images: refused or not returned (the release cannot tell)"
        rows.append(row)

    pairs, reps = [], []
    for a in our_configs:
        ra = next(r for r in rows if r["config"] == a and r["source"] == THIS_RUN)
        for b in rel_configs:
            for metric, task in METRICS.items():
                ja = ra["judges"][task]
                if ja is None:
                    continue
                keys = _valid_keys(ours, a, task, ja).intersection(
                    _valid_keys(rel_j, b, task, layout.EVAL_JUDGE)
                )
                if not len(keys):
                    continue
                ma = _per_unit(ours, a, task, ja, keys, units)
                mb = _per_unit(rel_j, b, task, layout.EVAL_JUDGE, keys, units)
                pos = np.flatnonzero((ma[:, 1] > 0) & (mb[:, 1] > 0))
                est, rep = boot.paired(ma[pos], mb[pos], _ratio, f"beside/{a}~{b}/{metric}")
                pairs.append(_pair(a, b, metric, len(pos), len(keys), est, diffs[a, "rubric"]))
                reps.append(rep)
            refusal = _refusal_pair(images, rel_images, a, b, units, boot)
            if refusal is not None:
                n, n_keys, est, rep = refusal
                pairs.append(_pair(a, b, "absent_rate", n, n_keys, est, []))
                reps.append(rep)
    lean = _lean_beside(
        ours,
        our_configs,
        judge=bias_judge,
        release=release,
        bench=bench,
        units=units,
        boot=boot,
        diffs=diffs,
    )
    for entry, rep in lean:
        pairs.append(entry)
        reps.append(rep)
    resolve_differences(pairs, reps, boot.level)
    return {
        "benchmark": {
            "path": path,
            "sha256": bench.sha256,
            "units": bench.n_units,
            "units_compared": len(units),  # fewer than units: a pilot (run --units N)
        },
        "units_outside_benchmark": outside,
        "bias_judge": bias_judge,
        "release_judge": release_ids,
        "rows": rows,
        "pairs": pairs,
        "correction": "holm",
        "alpha": round(1 - boot.level, 10),
        "paired_on": "the (unit, seed) keys both sides have a valid judgement for (paired "
        "cluster bootstrap over units); absent_rate on the keys both sides requested",
    }


def _row(
    j: pd.DataFrame,
    images: pd.DataFrame | None,
    cfg: str,
    *,
    source: str,
    bias_judge: str | None,
    units: list[str],
    seeds: list[int],
    boot: Bootstrap,
) -> dict[str, Any]:
    judges: dict[str, str | None] = {"rubric": bias_judge}
    align = j[(j["config"] == cfg) & (j["task"] == "alignment")]["judge"].astype(str).unique()
    judges["alignment"] = (
        bias_judge if bias_judge in align else (align[0] if len(align) == 1 else None)
    )
    row: dict[str, Any] = {"config": cfg, "source": source, "judges": judges, "seeds": seeds}
    row.update(_counts(images, j, cfg, set(units), seeds))
    for metric, task in METRICS.items():
        judge = judges[task]
        if judge is None:
            row[metric] = None
            continue
        keys = _valid_keys(j, cfg, task, judge)
        sums = _per_unit(j, cfg, task, judge, keys, units)
        sums = sums[sums[:, 1] > 0]
        row[metric] = (
            boot.ratio(sums[:, 0], sums[:, 1], f"beside/{source}/{cfg}/{metric}")[0]
            if len(sums)
            else None
        )
        if metric == "bias_score":
            row["n_units"] = int(len(sums))
    return row


def _pair(
    a: str, b: str, metric: str, n: int, n_keys: int, est: dict[str, Any], diff: list[str]
) -> dict[str, Any]:
    return {
        "a": a,
        "a_source": THIS_RUN,
        "b": b,
        "b_source": RELEASE,
        "metric": metric,
        "n_units": n,
        "n_images": n_keys,
        "difference": est,
        "different_judge": diff,
        "note": f"{DIFFERENT_JUDGE} ({', '.join(diff)})" if diff else None,
    }


def _refusal_pair(
    images: pd.DataFrame | None,
    rel_images: pd.DataFrame,
    a: str,
    b: str,
    units: list[str],
    boot: Bootstrap,
) -> tuple[int, int, dict[str, Any], np.ndarray] | None:
    """Share of requested neutral images not returned (refused, failed or absent), A - B, on
    the (unit, seed) keys both requested."""
    if images is None or not len(rel_images):
        return None
    ia = images[(images["config"] == a) & (images["variant"] == "neutral")]
    ib = rel_images[(rel_images["config"] == b) & (rel_images["variant"] == "neutral")]
    ia = ia.assign(unit_id=ia["unit_id"].astype(str), seed=ia["seed"].astype(int))
    m = ia.merge(ib, on=["unit_id", "seed"], suffixes=("_a", "_b"))
    m = m[m["unit_id"].isin(set(units))]
    if not len(m):
        return None
    cols = []
    for side in ("a", "b"):
        per = (
            m.assign(absent=(m[f"status_{side}"] != "ok").astype(float), one=1.0)
            .groupby("unit_id")[["absent", "one"]]
            .sum()
            .reindex(units, fill_value=0.0)
            .to_numpy(float)
        )
        cols.append(per)
    pos = np.flatnonzero(cols[0][:, 1] > 0)
    est, rep = boot.paired(cols[0][pos], cols[1][pos], _ratio, f"beside/{a}~{b}/absent")
    return len(pos), int(len(m)), est, rep


def _lean_beside(
    ours: pd.DataFrame,
    configs: list[str],
    *,
    judge: str | None,
    release: Release,
    bench: BenchmarkUnits,
    units: list[str],
    boot: Bootstrap,
    diffs: dict[tuple[str, str], list[str]],
) -> list[tuple[dict[str, Any], np.ndarray]]:
    """This run's lean (dx of its rubric judge) minus the release's construction lean (Qwen3-VL
    on Qwen-Image, benchmark_scores.csv) on the (unit, seed) keys both have: mean dx and the
    share of dx > 0. Empty when this run has no stereotype / anti-stereotype rubric scores."""
    if judge is None:
        return []
    base, _ = read_scores(release)
    base = base.assign(score=pd.to_numeric(base["value"], errors="coerce"))
    base["unit_id"] = base["unit_id"].astype(str)
    theirs = dx_frame(base, layout.BASE_CONFIG, layout.RUBRIC_JUDGES["qwen"], None, units)
    out = []
    for cfg in configs:
        mine = dx_frame(ours, cfg, judge, None, units)
        m = mine.merge(theirs, on=["unit_id", "seed"], suffixes=("_a", "_b"))
        if not len(m):
            continue
        for metric, f in (("mean_lean", lambda x: x), ("lean_s", lambda x: (x > 0).astype(float))):
            cols = []
            for side in ("a", "b"):
                per = (
                    m.assign(v=f(m[f"dx_{side}"]), one=1.0)
                    .groupby("unit_id")[["v", "one"]]
                    .sum()
                    .reindex(units, fill_value=0.0)
                    .to_numpy(float)
                )
                cols.append(per)
            pos = np.flatnonzero(cols[0][:, 1] > 0)
            est, rep = boot.paired(
                cols[0][pos], cols[1][pos], _ratio, f"beside/{cfg}/lean/{metric}"
            )
            entry = _pair(
                cfg,
                "qwen_image (construction)",
                metric,
                len(pos),
                len(m),
                est,
                diffs[cfg, "rubric"],
            )
            out.append((entry, rep))
    return out


def beside_tables(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """``leaderboard_beside_release`` (one row per generator, labelled with its source and
    judge note) and ``leaderboard_beside_release_pairs``."""
    rows = []
    for r in report["rows"]:
        rec: dict[str, Any] = {
            "source": r["source"],
            "generator": r["config"],
            "units": r.get("n_units"),
            "requested": r["requested"],
            "returned": r["returned"],
            "refused": r["refused"],
            "missing": r["missing"],
            "judged": r["judged"],
        }
        for metric, pct in (("bias_score", False), ("alignment", True)):
            e = r.get(metric) or {}
            k = 100.0 if pct else 1.0
            name = f"{metric}_pct" if pct else metric
            ci = e.get("ci") or [None, None]
            rec[name] = None if e.get("value") is None else e["value"] * k
            rec[f"{metric}_ci_low"] = None if ci[0] is None else ci[0] * k
            rec[f"{metric}_ci_high"] = None if ci[1] is None else ci[1] * k
        rec["note"] = r["note"]
        rows.append(rec)
    pairs = []
    for p in report["pairs"]:
        k = 1.0 if p["metric"] in ("bias_score", "mean_lean") else 100.0
        ci = p["difference"].get("ci") or [None, None]
        v = p["difference"].get("value")
        pairs.append(
            {
                "a": f"{p['a']} ({p['a_source']})",
                "b": f"{p['b']} ({p['b_source']})",
                "metric": p["metric"],
                "units": p["n_units"],
                "difference": None if v is None else v * k,
                "difference_ci_low": None if ci[0] is None else ci[0] * k,
                "difference_ci_high": None if ci[1] is None else ci[1] * k,
                "p": None if p["p"] is None else f"{p['p']:.3g}",
                "p_holm": None if p["p_holm"] is None else f"{p['p_holm']:.3g}",
                "resolved": p["resolved"],
                "note": p["note"],
            }
        )
    return {
        "leaderboard_beside_release": pd.DataFrame(rows),
        "leaderboard_beside_release_pairs": pd.DataFrame(pairs),
    }


def _same_release(units_sha: Any, path: str) -> None:
    """Units written from a release (``benchmark_sha256``) go beside that release only as it
    was then: a copy edited since (one prompt) is refused, not paired on other prompts."""
    from implicit_bench.errors import ConfigError
    from implicit_bench.release.benchmark import benchmark_sha256

    if not isinstance(units_sha, str) or not units_sha:
        return  # the project's own units: no release to match
    now, _ = benchmark_sha256(Release(path))
    if now != units_sha:
        raise ConfigError(
            f"evaluate.beside_release: {path} changed since the run's units were written from "
            f"it (units: benchmark SHA-256 {units_sha[:12]}..., the release now: {now[:12]}...): "
            "restore that copy of the release, or write the units again from this one "
            "(run --benchmark PATH) and rerun"
        )


def add_beside(ev: Any, tables: Any, params: Any) -> dict[str, Any] | None:
    """``evaluate.beside_release`` set: the board beside the paper added to an evaluation
    (``ev.benchmark["leaderboard"]["beside_release"]`` and its two tables) before it is
    written; the evaluate stage and ``implicit-bench analyze`` call it. The bootstrap is the
    evaluation's own (same seed; its own streams)."""
    from implicit_bench.errors import ConfigError, InputError

    path = getattr(params, "beside_release", None)
    board = ev.benchmark.get("leaderboard") if isinstance(ev.benchmark, dict) else None
    if not path or not isinstance(board, dict):
        return None
    boot = Bootstrap.from_params(params.bootstrap)
    try:
        _same_release(board.get("benchmark_sha256"), str(path))
        beside = beside_release(
            tables.judgements,
            tables.images,
            str(path),
            boot,
            board.get("rubric_judge"),
            run_units=list(tables.units["unit_id"].astype(str)),
        )
    except InputError as exc:
        raise ConfigError(f"evaluate.beside_release: {exc}") from None
    board["beside_release"] = beside
    ev.tables.update(beside_tables(beside))
    return beside
