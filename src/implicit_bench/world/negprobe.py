"""The simulated world's NegT2IBench evaluation set: images with required objects and positive
and negated statements, three annotators and a simulated evaluator's yes/no probabilities, as a
labels table in the layout of ``audits.evaluator_agreement`` (world.negprobe, docs/world.md).

``negprobe_truth`` gives the expected value of the figures the audit estimates that the planted
evaluator determines: the negated-question flip rate and complementarity error (over the
negated statements) and the share of images each mode passes, given the planted true state of
every element (a finite-population truth, as everywhere in recovery).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import derive_seed
from implicit_bench.world.params import NegProbeWorld

SETTINGS: tuple[tuple[int, int], ...] = (
    (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (1, 2), (2, 2),
)  # fmt: skip
CATEGORIES = ("color", "material", "comparative", "depth", "directional", "proximity")


def _elements(world: NegProbeWorld, seed: int) -> pd.DataFrame:
    """Every element of every planted image with its true state (``satisfied``)."""
    rows = []
    for i in range(world.images):
        rng = np.random.default_rng(derive_seed(seed, f"negprobe/image/{i}"))
        p, n = SETTINGS[i % len(SETTINGS)]
        category = CATEGORIES[(i // len(SETTINGS)) % len(CATEGORIES)]
        kinds = (
            [("object", "positive", world.p_object)] * (p + n)
            + [("statement", "positive", world.p_positive)] * p
            + [("statement", "negated", world.p_negated)] * n
        )
        for j, (kind, polarity, prob) in enumerate(kinds):
            rows.append(
                {
                    "image_id": f"img{i:05d}",
                    "element_id": f"e{j}",
                    "kind": kind,
                    "polarity": polarity,
                    "setting": f"{p}:{n}",
                    "category": category,
                    "satisfied": int(rng.random() < prob),
                    "draw_seed": derive_seed(seed, f"negprobe/element/{i}/{j}"),
                }
            )
    return pd.DataFrame(rows)


def planted_labels(world: NegProbeWorld, seed: int) -> pd.DataFrame:
    """The labels table: the evaluator's probabilities and the annotators' ratings."""
    el = _elements(world, seed)
    if el.empty:
        return el
    conf = world.confidence
    p_pos, p_neg, ratings = [], [], []
    for row in el.itertuples(index=False):
        rng = np.random.default_rng(row.draw_seed)
        negated = row.polarity == "negated"
        affirmative_true = (1 - row.satisfied) if negated else row.satisfied
        says_yes = rng.random() < (world.accuracy if affirmative_true else 1 - world.accuracy)
        p_pos.append(conf if says_yes else 1 - conf)
        if negated:
            if rng.random() < world.complement:
                neg_yes = not says_yes
            else:
                neg_yes = rng.random() < world.negated_yes
            p_neg.append(conf if neg_yes else 1 - conf)
        else:
            p_neg.append(np.nan)
        err = world.rater_error_negated if negated else world.rater_error
        flips = rng.random(world.annotators) < err
        ratings.append(np.where(flips, 1 - row.satisfied, row.satisfied))
    el = el.assign(p_pos=p_pos, p_neg=p_neg)
    for k in range(world.annotators):
        el[f"rater_{k + 1}"] = [int(r[k]) for r in ratings]
    whole = []
    for image_id, ok in el.groupby("image_id", sort=False)["satisfied"].min().items():
        rng = np.random.default_rng(derive_seed(seed, f"negprobe/whole/{image_id}"))
        right = rng.random() < world.whole_accuracy
        whole.append((image_id, conf if bool(ok) == right else 1 - conf))
    el = el.merge(pd.DataFrame(whole, columns=["image_id", "p_whole"]), on="image_id")
    # the evaluator's simulated clock: one lognormal time per question (element), summed per
    # image, from a stream of its own (the labels above do not change with it)
    sizes = el.groupby("image_id", sort=False).size()
    seconds = {
        image_id: float(
            np.sum(
                world.seconds_per_question
                * np.exp(
                    world.seconds_log_sd
                    * np.random.default_rng(
                        derive_seed(seed, f"negprobe/seconds/{image_id}")
                    ).standard_normal(int(k))
                )
            )
        )
        for image_id, k in sizes.items()
    }
    el = el.assign(seconds=el["image_id"].map(seconds), gpu_gib=world.gpu_gib, load_s=world.load_s)
    return el.drop(columns=["draw_seed", "satisfied"])


def negprobe_truth(world: NegProbeWorld, seed: int) -> dict[str, Any]:
    """Expected flip rate and complementarity error over the negated statements, and the
    expected share of images each mode passes, given the planted element states."""
    el = _elements(world, seed)
    if el.empty:
        return {}
    acc, c, ny, conf = world.accuracy, world.complement, world.negated_yes, world.confidence
    sat = el["satisfied"].to_numpy()
    negated = (el["polarity"] == "negated").to_numpy()
    # P(yes to the positive form): right with P accuracy about the affirmative question
    affirmative_true = np.where(negated, 1 - sat, sat)
    q = np.where(affirmative_true == 1, acc, 1 - acc)
    flip = c + (1 - c) * (q * (1 - ny) + (1 - q) * ny)
    pass_pos = np.where(sat == 1, acc, 1 - acc)  # pass = the right answer about the element
    pass_neg = np.where(negated, c * (1 - q) + (1 - c) * ny, pass_pos)
    frame = el.assign(pass_pos=pass_pos, pass_neg=pass_neg)
    by_image = frame.groupby("image_id")
    image_ok = by_image["satisfied"].min().to_numpy()
    wa = world.whole_accuracy
    questions = by_image.size().mean()
    mean_q = world.seconds_per_question * float(np.exp(world.seconds_log_sd**2 / 2))
    return {
        "s_per_question": mean_q,
        "s_per_image": mean_q * float(questions),
        "flip_rate": float(flip[negated].mean()) if negated.any() else None,
        "complementarity_error": float(((2 * conf - 1) * (1 - flip))[negated].mean())
        if negated.any()
        else None,
        "called_correct": {
            "whole": float(np.where(image_ok == 1, wa, 1 - wa).mean()),
            "pos": float(by_image["pass_pos"].prod().mean()),
            "neg": float(by_image["pass_neg"].prod().mean()),
        },
    }
