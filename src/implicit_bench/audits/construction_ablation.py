"""IMPLICIT-Bench App. C.1, the construction ablation (opt-in): triplets written directly from
the sentence pair and its dataset labels (the direct arm, no KG unit) against the benchmark's
unit-based triplets, rated blind by two LLM raters on a 1-5 scale.

- Direct arm: one cached JSON request per unit to ``construction_ablation.writer`` (an ``llms``
  entry) with the Stage 2 instructions, the unit's source sentence pair and its dataset labels
  (bias type, target), without the unit's fields (``prompts/direct_triplet_writer.txt``);
  columns ``prompt_direct_neutral``, ``prompt_direct_stereotype``,
  ``prompt_direct_anti_stereotype`` (null for an invalid answer, counted).
- Rating: each rater (``construction_ablation.raters``, the paper: two models from families
  other than the writer's) sees the pair and both sets as "Set 1" / "Set 2", in an order drawn
  from a hash of (seed, unit id), and rates each set 1-5 on scene consistency, visual
  realisability and fidelity to the source wording (``prompts/construction_rater.txt``).
- Summary per rater and criterion: the mean of each arm over the units both arms have a rating
  for, and ours - direct (the paper: +0.12 / +0.21 scene consistency, +0.18 / +0.19
  realisability, -0.23 / -0.31 fidelity).

``implicit-bench construction-rating`` runs both on a units table and writes the ratings and a
metrics JSON; it calls models (LLM catalogue entries) and is not a DVC stage.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from implicit_bench._util.hashing import derive_seed

# the direct arm's writer lives with the triplets (the rendered direct arm's hook uses it too)
from implicit_bench.construction.triplets.direct import (
    DIRECT_COLUMNS,
    ConstructionAblationParams,
    direct_triplets,
)

CRITERIA: tuple[str, ...] = ("scene_consistency", "visual_realisability", "source_fidelity")


Score = Field(ge=1, le=5)


class SetRating(BaseModel):
    scene_consistency: int = Score
    visual_realisability: int = Score
    source_fidelity: int = Score


class RatingAnswer(BaseModel):
    set1: SetRating
    set2: SetRating


def _template(name: str) -> str:
    return resources.files("implicit_bench").joinpath(f"prompts/{name}").read_text("utf-8")


def ours_first(unit_id: str, seed: int) -> bool:
    """Whether the unit-based set is shown as Set 1 (a hash of (seed, unit id))."""
    return derive_seed("construction_rating", seed, str(unit_id)) % 2 == 0


def rate(
    units: pd.DataFrame, pairs: pd.DataFrame, client: Any, rater: str, seed: int, counter=None
) -> pd.DataFrame:
    """Long rows (unit_id, rater, arm, criterion, score) of one rater; units without both arms
    or with an invalid answer give no rows (counted by ``counter``)."""
    from implicit_bench.backends.llm import chat_json_many

    template = _template("construction_rater.txt")
    by_id = pairs.set_index(pairs["pair_id"].astype(str))
    complete = units.dropna(
        subset=[
            "prompt_neutral",
            "prompt_stereotype",
            "prompt_anti_stereotype",
            *DIRECT_COLUMNS,
        ]
    )
    requests, orders = [], []
    for r in complete.itertuples(index=False):
        pair = by_id.loc[str(r.source_pair_id)]
        ours = (r.prompt_neutral, r.prompt_stereotype, r.prompt_anti_stereotype)
        direct = tuple(getattr(r, c) for c in DIRECT_COLUMNS)
        first = ours_first(r.unit_id, seed)
        one, two = (ours, direct) if first else (direct, ours)
        orders.append(first)
        requests.append(
            [
                {
                    "role": "user",
                    "content": template.format(
                        stereotype_sentence=pair["stereotype_sentence"],
                        anti_stereotype_sentence=pair["anti_stereotype_sentence"],
                        set1_neutral=one[0],
                        set1_stereotype=one[1],
                        set1_anti=one[2],
                        set2_neutral=two[0],
                        set2_stereotype=two[1],
                        set2_anti=two[2],
                    ),
                }
            ]
        )
    answers = chat_json_many(client, requests, RatingAnswer, desc=f"construction: {rater}")
    rows = []
    for r, first, answer in zip(complete.itertuples(index=False), orders, answers, strict=True):
        if counter is not None:
            counter.add(answer)
        if not answer.valid:
            continue
        value = (
            answer.value
            if isinstance(answer.value, RatingAnswer)
            else RatingAnswer.model_validate(answer.value)
        )
        arms = {"ours": value.set1, "direct": value.set2}
        if not first:
            arms = {"ours": value.set2, "direct": value.set1}
        for arm, ratings in arms.items():
            for criterion in CRITERIA:
                rows.append(
                    {
                        "unit_id": str(r.unit_id),
                        "rater": rater,
                        "arm": arm,
                        "criterion": criterion,
                        "score": int(getattr(ratings, criterion)),
                    }
                )
    return pd.DataFrame(rows, columns=["unit_id", "rater", "arm", "criterion", "score"])


def rating_summary(rows: pd.DataFrame) -> dict[str, Any]:
    """Per rater and criterion: units rated in both arms, each arm's mean, ours - direct."""
    out: dict[str, Any] = {}
    for (rater, criterion), g in rows.groupby(["rater", "criterion"], sort=True):
        wide = g.pivot_table(index="unit_id", columns="arm", values="score", aggfunc="mean")
        wide = wide.dropna(subset=[a for a in ("ours", "direct") if a in wide.columns])
        if not {"ours", "direct"} <= set(wide.columns) or wide.empty:
            entry = {"units": 0, "ours": math.nan, "direct": math.nan, "difference": math.nan}
        else:
            ours, direct = float(wide["ours"].mean()), float(wide["direct"].mean())
            entry = {"units": int(len(wide)), "ours": ours, "direct": direct}
            entry["difference"] = ours - direct
        out.setdefault(str(rater), {})[str(criterion)] = entry
    return out


def construction_rating(
    params_path: str, units: str, pairs: str, out_dir: str, metrics: str
) -> tuple[int, int]:
    """App. C.1's construction ablation: write the direct arm, rate both arms blind with the
    raters; writes ``out_dir``/direct_triplets.parquet, ``out_dir``/ratings.csv and ``metrics``.
    Returns (units, raters)."""
    from implicit_bench._util.files import nan_to_none
    from implicit_bench.backends.llm import InvalidCounter, build_llm, llm_entry
    from implicit_bench.errors import ConfigError
    from implicit_bench.params import catalogue, load_params, section
    from implicit_bench.protocol.tables import PAIRS, UNITS

    raw = load_params(params_path)
    params = section(raw, "construction_ablation", ConstructionAblationParams, params_path)
    if not params.writer or not params.raters:
        raise ConfigError(
            f"{params_path}: construction_ablation needs writer and raters (llms entries)"
        )
    llms = catalogue(raw, "llms", params_path)
    table, pair_table = UNITS.read(units), PAIRS.read(pairs)
    writer_block = llm_entry(llms, params.writer, "construction_ablation.writer", params.max_tokens)
    written = InvalidCounter("construction_ablation.writer")
    table = direct_triplets(table, pair_table, build_llm(writer_block), written)
    frames, counters = [], {"writer": written.as_dict()}
    for rater in params.raters:
        block = llm_entry(llms, rater, "construction_ablation.raters", params.max_tokens)
        counter = InvalidCounter(f"construction_ablation.{rater}")
        frames.append(rate(table, pair_table, build_llm(block), rater, params.seed, counter))
        counters[rater] = counter.as_dict()
    ratings = pd.concat(frames, ignore_index=True)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    table.to_parquet(folder / "direct_triplets.parquet", index=False)
    ratings.to_csv(folder / "ratings.csv", index=False)
    report = {
        "units": int(len(table)),
        "direct_written": int(table[list(DIRECT_COLUMNS)].notna().all(axis=1).sum()),
        "answers": counters,
        "seed": params.seed,
        "by_rater": rating_summary(ratings),
    }
    Path(metrics).parent.mkdir(parents=True, exist_ok=True)
    Path(metrics).write_text(json.dumps(nan_to_none(report), indent=2) + "\n")
    return len(table), len(params.raters)


__all__ = [
    "ConstructionAblationParams",
    "construction_rating",
    "direct_triplets",
    "rate",
    "rating_summary",
]
