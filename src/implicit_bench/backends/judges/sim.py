"""Backend ``sim``: a simulated VLM judge of the planted world (docs/world.md).

It reads what a picture shows from its pixels (``picture.read``), perceives a class through
its planted confusion matrix, and answers the real task prompt in text, which the real parsers
read. The task is the registered one whose answer key the prompt asks for
(``judge_tasks``). Planted behaviour (rubric, blind, alignment): the confusion matrix, a
preference for slot A when it perceives neither, a rate of malformed answers, rubric noise,
alignment errors. The perception of an image is one draw per (judge, image, task), shared by
both blind option orders; the slot-A preference and malformed answers are drawn per call (per
prompt). A task the world plants nothing for (a new one, docs/extending.md "Extending")
gets one of its allowed answers drawn from a hash of (judge, image, task).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

import numpy as np

from implicit_bench._util.hashing import derive_seed
from implicit_bench.backends.judges.base import JudgeBackend, JudgeParams, JudgeRequest
from implicit_bench.protocol.judge_tasks import TaskSpec, task_registry
from implicit_bench.protocol.tables import WORLD_DIR
from implicit_bench.world.measure import confusion
from implicit_bench.world.model import load_world, sim_name
from implicit_bench.world.params import SimJudgeWorld
from implicit_bench.world.picture import band_text, read_bytes
from implicit_bench.world.sampling import perceive_many, rubric_scores

MALFORMED = (
    "I'm sorry, I cannot determine that from this image.",
    '{"{key}": "unclear", "reason": "hard to tell"}',
    '{"reason": "The image shows a figure and a badge with',
)
UNREADABLE = "I cannot make out this image."
_OPTION = re.compile(r"^([AB]): (.*)$", re.MULTILINE)
_STEREO = re.compile(r"^Stereotypical attributes: (.*)$", re.MULTILINE)
_ANTI = re.compile(r"^Anti-stereotypical attributes: (.*)$", re.MULTILINE)
_QUOTED = re.compile(r"“(.*?)”", re.DOTALL)
_HEAD = re.compile(r"focus on the main subject: (.*)\.$", re.MULTILINE)
VERSION = 3  # bump when the simulated judge's answers change (part of the cache key)


class SimJudgeParams(JudgeParams):
    backend: Literal["sim"] = "sim"
    model: str  # sim:<world.judges entry>
    world: str = WORLD_DIR


def _uniform(*parts: Any) -> float:
    return (derive_seed(*parts) >> 11) / float(1 << 52)


def task_of(prompt: str) -> TaskSpec:
    """The registered task whose answer key (``{"key": ...``) the prompt asks for."""
    found = [s for s in task_registry() if s.asked and f'{{"{s.answer.key}":' in prompt]
    if len(found) != 1:
        raise ValueError("the simulated judge does not know this task prompt")
    return found[0]


def rubric_score(perceived: int, spec: SimJudgeWorld, u: float) -> int:
    """One rubric score (``sampling.rubric_scores``, the rule the fast path uses too)."""
    return int(rubric_scores(np.array([perceived]), spec, np.array([u]))[0])


def perceive(true: int, spec: SimJudgeWorld, u: float) -> int:
    """One perception (``sampling.perceive_many``, the rule the fast path uses too)."""
    return int(perceive_many(np.array([true]), confusion(spec), np.array([u]))[0])


class SimJudge(JudgeBackend):
    backend = "sim"
    Params = SimJudgeParams

    def load(self) -> None:
        world = load_world(self.params.world)
        self.name = sim_name(self.params.model)
        self.spec: SimJudgeWorld = world.params.judges[self.name]
        self.fingerprint = world.fingerprint

    def identity(self) -> dict[str, Any]:
        if not hasattr(self, "spec"):
            self.load()
        return {
            "backend": "sim",
            "model": self.params.model,
            "world": self.fingerprint,
            "version": VERSION,
        }

    def answer(self, batch: list[JudgeRequest]) -> list[tuple[str, str | None]]:
        if not hasattr(self, "spec"):
            self.load()
        return [(self.answer_one(r.prompt, r.image), None) for r in batch]

    def answer_one(self, prompt: str, image: bytes) -> str:
        spec = task_of(prompt)
        task = spec.name
        sha = hashlib.sha256(image).hexdigest()
        call = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        shown = read_bytes(image)
        if shown is None:
            return UNREADABLE
        if _uniform("judge-invalid", self.name, sha, call) < self.spec.invalid:
            which = derive_seed("judge-malformed", self.name, sha, call) % len(MALFORMED)
            return MALFORMED[which].replace("{key}", spec.answer.key)
        u_perceive = _uniform("judge-perceive", self.name, sha, task)
        u_call = _uniform("judge-call", self.name, sha, call)
        if task == "alignment":
            quoted = _QUOTED.search(prompt)
            text = (quoted.group(1) if quoted else prompt).lower()
            aligned = bool(shown.head) and shown.head.lower() in text
            if u_perceive < self.spec.alignment_error:
                aligned = not aligned
            why = f"The image shows {shown.head or 'no clear subject'}."
            return json.dumps({"aligned": aligned, "justification": why})
        if task == "rubric":
            stereo = _STEREO.search(prompt)
            anti = _ANTI.search(prompt)
            true = _class_of(
                shown.attribute,
                stereo.group(1) if stereo else None,
                anti.group(1) if anti else None,
            )
            score = rubric_score(perceive(true, self.spec, u_perceive), self.spec, u_call)
            why = (
                f"The badge reads '{shown.attribute}'."
                if shown.attribute
                else "No attribute is shown."
            )
            return json.dumps({"score": score, "justification": why})
        if task != "blind":  # nothing planted: an allowed answer drawn per (judge, image, task)
            allowed, span = spec.answer.allowed, spec.answer.range
            if allowed:
                value = allowed[derive_seed("judge-other", self.name, sha, task) % len(allowed)]
            else:  # a number in the task's range
                value = span[0] + _uniform("judge-other", self.name, sha, task) * (
                    span[1] - span[0]
                )
            return json.dumps({spec.answer.key: value, "reason": "Drawn by the simulated judge."})
        options = dict(_OPTION.findall(prompt))
        # the band carries at most 60 characters of the attribute: compare what it can carry
        slot = {band_text(options.get("A")): "A", band_text(options.get("B")): "B"}
        head = _HEAD.search(prompt)
        stereo_slot = self._stereo_slot(head.group(1) if head else None, options)
        true = 2
        if shown.attribute and shown.attribute in slot:
            true = 0 if slot[shown.attribute] == stereo_slot else 1
        seen = perceive(true, self.spec, u_perceive)
        if seen == 2:
            choice = "A" if u_call < self.spec.slot_a else "C"
        else:
            other = "B" if stereo_slot == "A" else "A"
            choice = stereo_slot if seen == 0 else other
        return json.dumps({"choice": choice, "reason": "Judged from the badge."})

    def _stereo_slot(self, head: str | None, options: dict[str, str]) -> str:
        """Which option is the stereotype: the world knows its units' (head, s, a) triples
        (the head disambiguates two units whose attribute pairs are swapped)."""
        pairs = _pairs(self.params.world)
        if (head, options.get("A"), options.get("B")) in pairs:
            return "A"
        return "B"


def _class_of(attribute: str, stereo: str | None, anti: str | None) -> int:
    """The class a picture's attribute shows, against the prompt's texts as the band carries them
    (a long attribute list is cut in the band: compared whole, it would read as neither)."""
    if attribute and attribute == band_text(stereo):
        return 0
    if attribute and attribute == band_text(anti):
        return 1
    return 2


_PAIRS: dict[str, set[tuple[str, str, str]]] = {}


def _pairs(world_dir: str) -> set[tuple[str, str, str]]:
    if world_dir not in _PAIRS:
        truth = load_world(world_dir).truth
        _PAIRS[world_dir] = set(zip(truth["head"], truth["shown_s"], truth["shown_a"], strict=True))
    return _PAIRS[world_dir]
