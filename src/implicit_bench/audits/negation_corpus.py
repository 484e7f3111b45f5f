"""NegT2IBench's prompt corpus (Tables 1, 4; Figures 5, 6), written by the project's own generator.

Six categories x eight polarity settings P:N (P positive statements that must hold, N negated
ones that must not; 1:0, 0:1, 2:0, 1:1, 0:2, 2:1, 1:2, 2:2) x ``per_cell`` prompts (100: 4,800)
over 79 object classes (the 80 COCO classes without ``person``: our reading of "79 eligible COCO
classes"; the paper does not list them).

- Attributes (color: 10 values, material: 4): one value per prompt, each statement on its own
  object: "a photo of a plastic bus, a plastic knife, a non-plastic sandwich, and a non-plastic
  toilet" (2:2). P + N objects.
- Relations (comparative, depth, directional, proximity): one subject and one target per
  statement, a predicate per statement: "a photo of a laptop, a zebra, a backpack, a surfboard,
  and a carrot, where the laptop is right of the zebra, is right of the backpack, is not below
  the surfboard, and is not right of the carrot" (2:2). 1 + P + N objects.
- Balance: objects are dealt per category from a shuffled deck of the 79 classes, reshuffled
  when spent (no class twice in one prompt), so every class appears in every category and the
  counts differ by at most a few (Figure 5); values and predicates are dealt from their own
  decks the same way (Figure 6). Positive statements come first, then negated ones (Table 4).
- Articles: "an" before a vowel letter, otherwise "a" ("a non-..." always); the paper's own
  examples keep "a" throughout ("a skis"); our choice, for fluency.
- Each prompt's elements (the required objects and the statements) are listed, so an image can
  be judged per object (audits/negation_accuracy.py).
- Checks (``check_prompt``): every object named, every negated value written "non-<v>" and
  every negated predicate "is not <p>", the statement count equal to P + N. A failing prompt is
  an error (the writer is deterministic: a failure is a bug, never repaired).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import derive_seed
from implicit_bench._util.words import contains_phrase

COCO_CLASSES: tuple[str, ...] = (
    "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog",
    "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella",
    "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite",
    "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
    "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich",
    "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
    "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote",
    "keyboard", "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book",
    "clock", "vase", "scissors", "teddy bear", "hair drier", "toothbrush",
)  # fmt: skip
# category -> (kind, values or predicates) (Table 1)
CATEGORIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "color": ("attribute", ("red", "orange", "yellow", "green", "blue", "purple", "pink",
                            "brown", "black", "white")),
    "material": ("attribute", ("wooden", "metal", "plastic", "glass")),
    "comparative": ("relation", ("bigger than", "smaller than", "taller than", "shorter than")),
    "depth": ("relation", ("in front of", "behind")),
    "directional": ("relation", ("left of", "right of", "above", "below")),
    "proximity": ("relation", ("near", "far from")),
}  # fmt: skip
SETTINGS: tuple[tuple[int, int], ...] = (
    (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (1, 2), (2, 2),
)  # fmt: skip
COLUMNS = (
    "prompt_id", "category", "kind", "setting", "positive", "negated", "load", "prompt",
    "objects", "statements",
)  # fmt: skip


class _Deck:
    """Deals items from shuffled copies of ``items``, reshuffled when spent."""

    def __init__(self, items: tuple[str, ...], rng: np.random.Generator) -> None:
        self.items, self.rng, self.pile = items, rng, []

    def _refill(self) -> None:
        self.pile.extend(self.items[i] for i in self.rng.permutation(len(self.items)))

    def deal(self, k: int, distinct: bool = True) -> list[str]:
        out: list[str] = []
        skipped: list[str] = []
        while len(out) < k:
            if not self.pile:
                self._refill()
            x = self.pile.pop(0)
            (skipped if distinct and x in out else out).append(x)
        self.pile[:0] = skipped  # put back what a prompt could not use, first in line
        return out


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def join(items: list[str]) -> str:
    """x; x and y; x, y, and z (the paper's serial comma)."""
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + ", and " + items[-1]


def _cell(category: str, p: int, n: int, count: int, decks: dict[str, _Deck]) -> Iterator[dict]:
    kind, values = CATEGORIES[category]
    for _ in range(count):
        polarity = ["positive"] * p + ["negated"] * n
        if kind == "attribute":
            (value,) = decks["values"].deal(1)
            objects = decks["objects"].deal(p + n)
            items = [
                f"{article(value)} {value} {o}" if pol == "positive" else f"a non-{value} {o}"
                for o, pol in zip(objects, polarity, strict=True)
            ]
            text = f"a photo of {join(items)}"
            statements = [
                {"object": o, "target": None, "value": value, "polarity": pol}
                for o, pol in zip(objects, polarity, strict=True)
            ]
        else:
            objects = decks["objects"].deal(1 + p + n)
            subject, targets = objects[0], objects[1:]
            preds = decks["values"].deal(p + n, distinct=False)
            clauses = [
                f"is {pred} the {t}" if pol == "positive" else f"is not {pred} the {t}"
                for pred, t, pol in zip(preds, targets, polarity, strict=True)
            ]
            head = join([f"{article(o)} {o}" for o in objects])
            text = f"a photo of {head}, where the {subject} {join(clauses)}"
            statements = [
                {"object": subject, "target": t, "value": pred, "polarity": pol}
                for pred, t, pol in zip(preds, targets, polarity, strict=True)
            ]
        yield {
            "category": category,
            "kind": kind,
            "setting": f"{p}:{n}",
            "positive": p,
            "negated": n,
            "load": p + n,
            "prompt": text,
            "objects": objects,
            "statements": statements,
        }


def check_prompt(row: dict[str, Any]) -> str | None:
    """The name of the first failed check of a corpus row, or None."""
    text = row["prompt"]
    if not all(contains_phrase(text, o) for o in row["objects"]):
        return "object_missing"
    if len(row["statements"]) != row["positive"] + row["negated"]:
        return "statement_count"
    for st in row["statements"]:
        neg = st["polarity"] == "negated"
        if row["kind"] == "attribute":
            want = f"non-{st['value']} {st['object']}" if neg else f"{st['value']} {st['object']}"
        else:
            want = f"is {'not ' if neg else ''}{st['value']} the {st['target']}"
        if want not in text:
            return "negation_missing" if neg else "statement_missing"
    return None


def write_corpus(per_cell: int = 100, seed: int = 0) -> pd.DataFrame:
    """The corpus: ``per_cell`` prompts per category and setting; ``objects`` and ``statements``
    as JSON text. Decks per category from ``derive_seed(seed, "negt2i/<category>/<deck>")``."""
    rows = []
    for category, (_, values) in CATEGORIES.items():
        decks = {
            name: _Deck(
                items, np.random.default_rng(derive_seed(seed, f"negt2i/{category}/{name}"))
            )
            for name, items in (("objects", COCO_CLASSES), ("values", values))
        }
        for p, n in SETTINGS:
            for row in _cell(category, p, n, per_cell, decks):
                failed = check_prompt(row)
                if failed is not None:
                    raise RuntimeError(f"negation corpus: {failed}: {row['prompt']}")
                rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    frame.insert(0, "prompt_id", [f"neg{i:05d}" for i in range(len(frame))])
    frame["objects"] = frame["objects"].map(json.dumps)
    frame["statements"] = frame["statements"].map(json.dumps)
    return frame[list(COLUMNS)]


def elements(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per required object and statement of each prompt: ``prompt_id``, ``element_id``
    (``o<i>`` objects in prompt order, ``s<j>`` statements), ``kind``, ``polarity``, ``object``,
    ``target``, ``value``, with the prompt's category and setting."""
    rows = []
    for rec in corpus.itertuples(index=False):
        base = {"prompt_id": rec.prompt_id, "category": rec.category, "setting": rec.setting}
        for i, o in enumerate(json.loads(rec.objects)):
            rows.append({**base, "element_id": f"o{i}", "kind": "object", "polarity": "positive",
                         "object": o, "target": None, "value": None})  # fmt: skip
        for j, st in enumerate(json.loads(rec.statements)):
            rows.append({**base, "element_id": f"s{j}", "kind": "statement", **st})
    return pd.DataFrame(rows)


def corpus_summary(corpus: pd.DataFrame) -> dict[str, Any]:
    """Counts per category and setting, object coverage and balance (Figure 5: max - min of the
    classes' counts against the most even allocation, which differs by at most 1), and value /
    predicate counts per category (Figure 6)."""
    cells = corpus.groupby(["category", "setting"]).size()
    out: dict[str, Any] = {
        "prompts": int(len(corpus)),
        "categories": sorted(corpus["category"].unique().tolist()) if len(corpus) else [],
        "cells": {f"{c}/{s}": int(v) for (c, s), v in cells.items()},
        "object_classes": len(COCO_CLASSES),
        "by_category": {},
    }
    for category, frame in corpus.groupby("category"):
        objs = pd.Series([o for js in frame["objects"] for o in json.loads(js)])
        counts = objs.value_counts().reindex(list(COCO_CLASSES), fill_value=0)
        vals = pd.Series([s["value"] for js in frame["statements"] for s in json.loads(js)])
        out["by_category"][str(category)] = {
            "prompts": int(len(frame)),
            "object_draws": int(len(objs)),
            "classes_used": int((counts > 0).sum()),
            "object_count_min": int(counts.min()),
            "object_count_max": int(counts.max()),
            "even_allocation": [len(objs) // len(COCO_CLASSES), -(-len(objs) // len(COCO_CLASSES))],
            "values": {str(k): int(v) for k, v in vals.value_counts().sort_index().items()},
        }
    return out
