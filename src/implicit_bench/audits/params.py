"""The audit sections of params.yaml: `audits.selection`, `judge_audit`, `negation`,
`diversity` (with its face detector)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PositiveInt

from implicit_bench.audits.diversity import (
    MIN_SCENE_IMAGES,
    QUANTILES,
)
from implicit_bench.audits.scene_check import SceneCheckParams
from implicit_bench.backends.faces import FaceParams
from implicit_bench.params import BootstrapParams, StrictModel
from implicit_bench.protocol.tables import CLIP_JUDGEMENTS_PATH, IMAGES_DIR, JUDGEMENTS_PATH

JUDGEMENT_INPUTS = [
    JUDGEMENTS_PATH,
    CLIP_JUDGEMENTS_PATH,
]  # the clip table is read when the clip stage ran
SELECTION_PROTOCOLS = ("main", "choice_only", "opaque_labels", "full_rotation")


class SelectionAuditParams(StrictModel):
    """When the Judge Acts' selection audit (audits/selection.py): ``source`` ``none``, ``sim``
    (the simulated world's planted pools, ``world.selection``, answered by its selection judge
    ``judge`` under each protocol of ``protocols``: the main one and the §5.5 ablations) or
    ``file`` (``decisions``: a decisions file, audits/selection_table.py; ``second_decisions``
    and ``ablations``: more decisions files on the same pools)."""

    source: Literal["none", "sim", "file"] = "none"
    judge: str = "sim_selector"
    # a second simulated selection judge: the cross-model gate (§5.3) on the main protocol
    second_judge: str | None = None
    protocols: list[Literal["main", "choice_only", "opaque_labels", "full_rotation"]] = list(
        SELECTION_PROTOCOLS
    )
    decisions: str | None = None
    # with source file: the second judge's decisions on the same pools (the cross-model gate,
    # §5.3) and the §5.5 ablations' decisions files, name -> file (declare them in the deps)
    second_decisions: str | None = None
    ablations: dict[str, str] = {}
    margin: Annotated[float, Field(ge=0)] = 0.0  # below-mean event: h < mean - margin
    sensitivity_margin: Annotated[float, Field(ge=0)] | None = 0.05  # App. O, Table 6
    near_tie_delta: Annotated[float, Field(ge=0)] = 0.05  # T17: candidates within delta of best


class JudgeAuditParams(StrictModel):
    judgements: list[str] = JUDGEMENT_INPUTS
    primary_order: Literal["hash", "sa", "as"] = "hash"
    confidence: Annotated[float, Field(gt=0, lt=1)] = 0.95
    bootstrap: BootstrapParams = BootstrapParams()
    selection: SelectionAuditParams = SelectionAuditParams()


class NegCorpusParams(StrictModel):
    """NegT2IBench's prompt corpus (audits/negation_corpus.py: ``per_cell`` prompts per category
    and polarity setting, decks seeded by ``seed``; 0 = no corpus) and a model's accuracy on it
    (audits/negation_accuracy.py) from per-object judgements: ``source`` ``none``, ``sim`` (the
    simulated world's images, ``world.negt2i``) or ``file`` (``judgements``: one row per image
    and element; declare it in the stage's deps)."""

    per_cell: Annotated[int, Field(ge=0)] = 100
    seed: int = 0
    source: Literal["none", "sim", "file"] = "none"
    judgements: str | None = None


class NegationParams(StrictModel):
    judgements: list[str] = JUDGEMENT_INPUTS
    primary_order: Literal["hash", "sa", "as"] = "hash"
    # the alignment judge whose answer on a negated image says whether its subject is present
    # (None: the only alignment judge); judge.tasks.alignment.variants must list the variants
    presence_judge: str | None = None
    # NegT2IBench's evaluator audit (audits/evaluator_agreement.py): none | sim (the simulated
    # world's evaluation set, world.negprobe) | file (evaluator_labels: an evaluator's yes/no
    # probabilities and annotators' verdicts; declare it in the stage's deps)
    evaluator_source: Literal["none", "sim", "file"] = "none"
    evaluator_labels: str | None = None
    corpus: NegCorpusParams = NegCorpusParams()
    bootstrap: BootstrapParams = BootstrapParams()


class FaceAuditParams(StrictModel):
    enabled: bool = True
    judge: FaceParams = FaceParams()
    bias_types: list[str] = ["gender", "age"]
    variant: str = "neutral"
    image_stores: list[str] = []  # data/images/<config>; empty: every store under images_root
    images_root: str = IMAGES_DIR
    cache: str = "cache/faces.sqlite"


class DiversityParams(StrictModel):
    judgements: list[str] = JUDGEMENT_INPUTS
    primary_order: Literal["hash", "sa", "as"] = "hash"
    include_neither: bool = False
    scene_variant: str = "neutral"
    template_variant: str = "subject"
    quantiles: list[float] = list(QUANTILES)
    min_scene_images: PositiveInt = (
        MIN_SCENE_IMAGES  # CA_q / MGBI need this many images per scene (HoloFair: 20)
    )
    bootstrap: BootstrapParams = BootstrapParams()
    faces: FaceAuditParams = FaceAuditParams()
    scene_check: SceneCheckParams = SceneCheckParams()  # App. C.1 (audits/scene_check.py)
