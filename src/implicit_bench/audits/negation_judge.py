"""NegT2IBench's per-element judge: a ``judges`` catalogue entry (any judge backend: ``openai``,
``transformers``) asked one question per element of each corpus image, written as the
per-object judgements table that ``audits/negation_accuracy.py`` scores (Table 3 by setting
and statement load, the settings 2:0, 0:2, 2:1, 1:2 and 2:2 included).

Questions (always in positive form, as the per-element mode ``pos`` of the evaluator audit: a
negated statement "the cup is not red" is asked "Is the cup red?" and passes on "no"):

- object: "Is there a cup in the image?";
- attribute statement: "Is the cup red?";
- relation statement: "Is the laptop left of the zebra?", where the judge may answer
  ``unclear`` when the picture does not let it tell (no predicate: a dead zone, Table 19).

Answers: JSON ``{"answer": "yes" | "no" | "unclear"}`` (the lenient JSON parser, then a bare
first word); ``holds`` is 1 for yes, 0 for no, empty for a relation's unclear. An image with an
object answered otherwise, an attribute answered unclear, or any answer unparsed or failed is
left out whole (an image cannot be scored with an element missing) and counted.

Answers are cached as the judge stage caches its own (``runtime/cache.model_key``: the judge's
identity, the question, the image's sha256, the decoding), so a re-run asks only what is new.
Cost (NegT2IBench Tables 2 and 8): the judge's own wall time per image on the questions it
asked (together, in batches of the backend's ``batch_size``), seconds per question, load
seconds and peak GPU memory where torch has used CUDA. These depend on the clock, so they go to the
command's output and the untracked run log, never into the judgements file.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.jsonparse import parse_json_answer
from implicit_bench.audits.negation_corpus import CATEGORIES, article
from implicit_bench.backends.judges.base import JudgeBackend, JudgeRequest, peak_gpu_gib
from implicit_bench.runtime.cache import DiskCache, model_key

ANSWERS = ("yes", "no", "unclear")
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": list(ANSWERS)}},
    "required": ["answer"],
}
_REPLY = 'Reply with JSON only: {"answer": "yes"} or {"answer": "no"}'
_WORD = re.compile(r"[a-z]+")


def element_question(element: dict[str, Any]) -> str:
    """The question asked about one element (a row of ``negation_corpus.elements``)."""
    obj = str(element["object"])
    if element["kind"] == "object":
        return f"Is there {article(obj)} {obj} in the image? {_REPLY}."
    value = str(element["value"])
    if CATEGORIES[str(element["category"])][0] == "attribute":
        return f"Is the {obj} {value}? {_REPLY}."
    target = str(element["target"])
    return (
        f"Is the {obj} {value} the {target}? {_REPLY}, or "
        '{"answer": "unclear"} when the image does not let you tell.'
    )


def read_answer(text: str) -> str | None:
    """``yes``, ``no``, ``unclear`` or None (unparsed): the JSON ``answer``, else the first word."""
    parsed = parse_json_answer(text)
    if parsed.valid and isinstance(parsed.value, dict):
        value = str(parsed.value.get("answer", "")).strip().lower()
        return value if value in ANSWERS else None
    words = _WORD.findall((text or "").lower())
    return words[0] if words and words[0] in ANSWERS else None


def holds_of(answer: str | None, kind: str, relation: bool) -> float | None:
    """1.0 / 0.0 / nan for a usable answer; None when the image cannot be scored with it."""
    if answer == "yes":
        return 1.0
    if answer == "no":
        return 0.0
    if answer == "unclear" and kind == "statement" and relation:
        return float("nan")
    return None


@dataclass
class JudgeCost:
    """The judge's own timings (wall clock: never in a tracked output)."""

    load_s: float = 0.0
    seconds: list[float] = field(default_factory=list)  # per judged image
    questions: list[int] = field(default_factory=list)  # per judged image
    gpu_gib: float | None = None

    def summary(self) -> dict[str, Any]:
        """Tables 2 and 8: s/img (load excluded), s/Q, questions per image, GPU GiB, load s."""
        total_q = sum(self.questions)
        return {
            "images_timed": len(self.seconds),
            "s_per_image": float(np.mean(self.seconds)) if self.seconds else None,
            "s_per_question": float(sum(self.seconds) / total_q) if total_q else None,
            "questions_per_image": float(np.mean(self.questions)) if self.questions else None,
            "gpu_gib": self.gpu_gib,
            "load_s": self.load_s,
        }


def judge_corpus_images(
    images: pd.DataFrame,
    elements: pd.DataFrame,
    backend: JudgeBackend,
    load_image: Callable[[str], bytes],
    cache: DiskCache | None = None,
) -> tuple[pd.DataFrame, dict[str, Any], JudgeCost]:
    """Ask ``backend`` every element of each image (``images``: ``image_id``, ``prompt_id``,
    ``path``); the judgements table (``image_id``, ``prompt_id``, ``element_id``, ``holds``,
    ``answer``), the counts, and the judge's timings. ``cache``: answers kept by (judge
    identity, question, image sha256, decoding), as the judge stage keys them; only the
    questions it lacks are asked (and timed), the model loaded at the first of them."""
    by_prompt = {p: f for p, f in elements.groupby("prompt_id", sort=False)}
    unknown = sorted(set(images["prompt_id"].astype(str)) - set(by_prompt))
    if unknown:
        raise ValueError(f"image prompt_id not in the corpus: {unknown[:3]}")
    cost = JudgeCost()
    rows: list[dict[str, Any]] = []
    left_out: dict[str, int] = {"unparsed": 0, "unusable": 0, "failed": 0}
    asked = {"questions": 0, "cached": 0}
    loaded = False
    try:
        for rec in images.itertuples(index=False):
            els = by_prompt[str(rec.prompt_id)].to_dict("records")
            data = load_image(str(rec.path))
            requests = [JudgeRequest(element_question(e), data, ANSWER_SCHEMA) for e in els]
            keys = [_cache_key(backend, r.prompt, data) for r in requests]
            found = {  # an entry that is not an answer's text is a miss
                k: v
                for k, v in (cache.get_many(keys) if cache is not None else {}).items()
                if isinstance(v, dict) and isinstance(v.get("text"), str)
            }
            todo = [i for i, k in enumerate(keys) if k not in found]
            if todo and not loaded:
                start = time.perf_counter()
                backend.load()
                cost.load_s, loaded = time.perf_counter() - start, True
            fresh = _ask(backend, [requests[i] for i in todo], cost)
            answers = {i: (found[k]["text"], None) for i, k in enumerate(keys) if k in found}
            answers.update(dict(zip(todo, fresh, strict=True)))
            if cache is not None:
                done = zip(todo, fresh, strict=True)
                cache.put_many((keys[i], {"text": text}) for i, (text, err) in done if err is None)
            asked["questions"] += len(todo)
            asked["cached"] += len(keys) - len(todo)
            out, reason = _image_rows(rec, els, [answers[i] for i in range(len(keys))])
            if reason:
                left_out[reason] += 1
            else:
                rows += out
    finally:
        cost.gpu_gib = peak_gpu_gib()
        if loaded:
            backend.close()
    frame = pd.DataFrame(rows, columns=["image_id", "prompt_id", "element_id", "holds", "answer"])
    counts = {
        "images": int(len(images)),
        "images_judged": int(frame["image_id"].nunique()) if len(frame) else 0,
        "images_left_out": left_out,
        "questions": asked["questions"],
        "answers_from_cache": asked["cached"],
    }
    return frame, counts, cost


def _cache_key(backend: JudgeBackend, question: str, image: bytes) -> str:
    return model_key(
        "judge",
        backend.identity(),
        task="negt2i_element",
        prompt=question,
        image_sha256=hashlib.sha256(image).hexdigest(),
        decoding=backend.decoding(),
    )


def _ask(
    backend: JudgeBackend, requests: list[JudgeRequest], cost: JudgeCost
) -> list[tuple[str, str | None]]:
    """The backend's answers to one image's uncached questions, in batches of its
    ``batch_size``; the image's wall time and questions go to ``cost``."""
    if not requests:
        return []
    size = backend.params.batch_size
    start = time.perf_counter()
    answers: list[tuple[str, str | None]] = []
    for i in range(0, len(requests), size):
        answers += backend.answer(requests[i : i + size])
    cost.seconds.append(time.perf_counter() - start)
    cost.questions.append(len(requests))
    return answers


def _image_rows(
    rec: Any, els: list[dict[str, Any]], answers: list[tuple[str, str | None]]
) -> tuple[list[dict[str, Any]], str | None]:
    out = []
    for e, (text, error) in zip(els, answers, strict=True):
        if error is not None:
            return [], "failed"
        answer = read_answer(text)
        if answer is None:
            return [], "unparsed"
        relation = CATEGORIES[str(e["category"])][0] == "relation"
        holds = holds_of(answer, str(e["kind"]), relation)
        if holds is None:
            return [], "unusable"
        out.append(
            {
                "image_id": str(rec.image_id),
                "prompt_id": str(rec.prompt_id),
                "element_id": str(e["element_id"]),
                "holds": holds,
                "answer": answer,
            }
        )
    return out, None


__all__ = [
    "ANSWER_SCHEMA",
    "JudgeCost",
    "element_question",
    "holds_of",
    "judge_corpus_images",
    "read_answer",
]
