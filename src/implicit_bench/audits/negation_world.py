"""The simulated world's images of NegT2IBench's corpus, judged per object (world.negt2i).

Per prompt and seed (stream ``negt2i/image/<prompt>/<seed>``): each required object present
with P ``p_object``; each statement, in a category listed in ``dead_zone``, without a predicate
with that P, otherwise its condition holds with P ``p_positive`` (positive statements) or
``p_forbidden`` (negated ones: the forbidden condition rendered). No pixels are drawn.

``accuracy_truth`` is the expected pass share of the same images (every element independent):
an attribute prompt passes with p_o^(P+N) p_+^P (1 - p_f)^N; a relation prompt with
p_o^(1+P+N) ((1 - d) p_+)^P (d + (1 - d)(1 - p_f))^N, d the category's dead-zone P; averaged over
the prompts of each setting, load and category (a finite-population truth, as in recovery).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import derive_seed
from implicit_bench.audits.negation_corpus import CATEGORIES
from implicit_bench.world.params import NegT2IWorld


def simulated_judgements(elements: pd.DataFrame, world: NegT2IWorld, seed: int) -> pd.DataFrame:
    """The per-object judgements table (audits/negation_accuracy.py) of ``world.seeds`` images
    per prompt."""
    rows = []
    for prompt_id, frame in elements.groupby("prompt_id", sort=True):
        kinds = frame["kind"].to_numpy()
        pol = frame["polarity"].to_numpy()
        category = str(frame["category"].iloc[0])
        d = world.dead_zone.get(category, 0.0) if CATEGORIES[category][0] == "relation" else 0.0
        for s in range(world.seeds):
            rng = np.random.default_rng(derive_seed(seed, f"negt2i/image/{prompt_id}/{s}"))
            u = rng.random((len(frame), 2))
            p_hold = np.where(
                kinds == "object",
                world.p_object,
                np.where(pol == "negated", world.p_forbidden, world.p_positive),
            )
            holds = (u[:, 0] < p_hold).astype(float)
            dead = (kinds == "statement") & (u[:, 1] < d)
            holds[dead] = np.nan
            for eid, h in zip(frame["element_id"], holds, strict=True):
                rows.append(
                    {
                        "image_id": f"{prompt_id}/s{s}",
                        "prompt_id": prompt_id,
                        "element_id": eid,
                        "holds": h,
                    }
                )
    return pd.DataFrame(rows, columns=["image_id", "prompt_id", "element_id", "holds"])


def accuracy_truth(corpus: pd.DataFrame, world: NegT2IWorld) -> dict[str, Any]:
    """Expected accuracy overall, by setting, load and category on the corpus's prompts."""
    p_o, p_p, p_f = world.p_object, world.p_positive, world.p_forbidden
    expected = []
    for rec in corpus.itertuples(index=False):
        kind = CATEGORIES[rec.category][0]
        d = world.dead_zone.get(rec.category, 0.0) if kind == "relation" else 0.0
        n_obj = rec.positive + rec.negated + (1 if kind == "relation" else 0)
        expected.append(
            p_o**n_obj * ((1 - d) * p_p) ** rec.positive * (d + (1 - d) * (1 - p_f)) ** rec.negated
        )
    f = corpus.assign(expected=expected, load=corpus["positive"] + corpus["negated"])
    return {
        "overall": float(f["expected"].mean()),
        "by_setting": {
            str(k): float(v) for k, v in f.groupby("setting")["expected"].mean().items()
        },
        "by_load": {str(k): float(v) for k, v in f.groupby("load")["expected"].mean().items()},
        "by_category": {
            str(k): float(v) for k, v in f.groupby("category")["expected"].mean().items()
        },
    }
