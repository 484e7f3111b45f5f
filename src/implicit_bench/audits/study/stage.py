"""The diversity study's work (stage ``diversity_study``): render, read faces, score.

Kept apart from ``audits.diversity_study`` (params and scores) so the other audit stages do
not import the render machinery.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.audits.diversity_study import (
    DiversityStudyParams,  # noqa: F401 - re-exported for the stage script
    face_diversity_scores,
    gen_agreement,
    gen_study_units,
    sample_units,
    scm_by_trigger,
    scm_frame_variants,
    scm_study_units,
    study_intervals,
)
from implicit_bench.backends.clip.params import ClipStageParams  # noqa: F401 - re-exported for the stage
from implicit_bench.backends.faces.attributes import race_note


def render_study(
    units: pd.DataFrame, params: DiversityStudyParams, render: Any, root: str | Path = "."
) -> dict[str, Any]:
    """Render the sample's prompts ``n_images`` times with ``params.generator``; its metrics."""
    from implicit_bench.params import check_refs
    from implicit_bench.render.images import unpublish
    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import pool_dir, render_config

    check_refs(params.generator, render.configs, "diversity_study.generator", "generators")
    study = RenderParams(
        configs={params.generator: render.configs[params.generator]},
        run=[params.generator],
        seeds=params.seeds(),
        variants=params.variants(),
        verify=render.verify,
        retry_failed=render.retry_failed,
        executor=render.executor_for(params.generator),
    )
    images = Path(root) / params.images_dir
    for other in sorted(images.iterdir()) if images.is_dir() else []:
        if other.is_dir() and other.name != params.generator:  # the output holds one store
            unpublish(other, pool_dir(other))
    return render_config(
        params.generator,
        study.configs[params.generator],
        units,
        Path(root) / params.images_dir / params.generator,
        study,
    )


def read_faces(
    params: DiversityStudyParams, units: pd.DataFrame, root: str | Path = "."
) -> pd.DataFrame:
    """One row per ok study image of the sampled units: unit_id, variant, seed,
    faces, gender, age_group."""
    from implicit_bench.backends.faces import create
    from implicit_bench.backends.faces.attributes import face_attributes, judge_images
    from implicit_bench.render.images import ImageStore, read_index
    from implicit_bench.runtime.cache import DiskCache

    store_dir = Path(root) / params.images_dir / params.generator
    store = ImageStore(store_dir)
    try:
        index = read_index(store_dir)  # the study's plan only, not every stored image
        index = index[
            (index["status"] == "ok")
            & index["variant"].isin(params.variants())
            & index["unit_id"].astype(str).isin(set(units["unit_id"].astype(str)))
            & index["seed"].isin(params.seeds())
        ]
        judge = create(params.judge)
        faces = judge_images(
            judge, DiskCache(Path(root) / params.cache), index["sha256"], store.load_image
        )
    finally:
        store.close()
    attrs = pd.DataFrame(
        [face_attributes(faces[sha], params.judge) for sha in index["sha256"]],
        columns=["faces", "gender", "age", "age_group"],
    )
    # each face's detector confidence (0-1) where the judge reports one (HoloFair C.4)
    attrs["detector_confidences"] = [
        [f.get("detection_confidence") for f in faces[sha]] for sha in index["sha256"]
    ]
    return pd.concat(
        [
            index[["unit_id", "variant", "seed", "sha256", "prompt"]].reset_index(drop=True),
            attrs,
        ],
        axis=1,
    )


def study_clip_scores(
    frame: pd.DataFrame, params: DiversityStudyParams, clip: Any, root: str | Path = "."
) -> pd.Series:
    """CLIP-Score (cos of image and prompt embeddings, ``clip.quality.clip_scores``) of each
    study image with the ``clip`` section's model and cache."""
    from implicit_bench.backends.clip import create
    from implicit_bench.backends.clip.embeddings import CachedEmbedder
    from implicit_bench.backends.clip.quality import clip_scores
    from implicit_bench.render.images import ImageStore
    from implicit_bench.runtime.cache import DiskCache

    if not len(frame):
        return pd.Series(dtype=float)
    embedder = CachedEmbedder(create(clip.model), DiskCache(Path(root) / clip.cache))
    store = ImageStore(Path(root) / params.images_dir / params.generator)
    try:
        img = embedder.images(frame["sha256"], store.load_image)
    finally:
        store.close()
    txt = embedder.texts(frame["prompt"].astype(str))
    scored = clip_scores(frame.assign(config=params.generator), img, txt)
    return pd.Series(scored["cos"].to_numpy(float), index=frame.index)


def run_study(
    units: pd.DataFrame,
    params: DiversityStudyParams,
    render: Any,
    root: str | Path = ".",
    clip: Any = None,
) -> dict[str, Any]:
    """metrics/diversity_study.json content: render, read faces, quality control (``clip``:
    the ``clip`` section, for the CLIP-Score rule; None: that rule is not run), score."""
    scm = params.prompt_source == "scm"
    gen = params.prompt_source == "gen"
    if scm:
        sample = scm_study_units(params.scm)
    elif gen:
        sample = gen_study_units()
    else:
        sample = sample_units(units, params.sample)
    rendered = render_study(sample, params, render, root)
    frame = read_faces(params, sample, root)
    quality = None
    if params.quality.enabled:
        from implicit_bench.audits.diversity_study import ATTRIBUTES
        from implicit_bench.audits.holofair_qc import quality_control

        quality, passed = quality_control(
            frame,
            None if clip is None else study_clip_scores(frame, params, clip, root),
            {a: ATTRIBUTES[a] for a in params.attributes},
            params.quality,
            params.judge.backend,
        )
        quality["clip_model"] = None if clip is None else clip.model.model
        if params.quality.apply:
            frame = frame[passed].reset_index(drop=True)
    agreement = gen_agreement(frame, sample) if gen else None
    if scm:
        frame = scm_frame_variants(frame, sample)
    scene_variant, template_variant = params.score_variants()
    scores = face_diversity_scores(
        frame,
        params.attributes,
        scene_variant,
        template_variant,
        params.quantiles,
        {a: params.reward_weights.get(a, 0.0) for a in params.attributes},
    )
    from implicit_bench.analysis.bootstrap import Bootstrap

    boot = Bootstrap.from_params(params.bootstrap)
    intervals = (
        study_intervals(
            boot,
            frame,
            scores,
            attributes=params.attributes,
            scene_variant=scene_variant,
            template_variant=template_variant,
            quantiles=params.quantiles,
            stream=f"diversity_study/{params.generator}",
        )
        if len(frame)
        else None
    )
    two_level = None
    if params.resample_generations and len(frame):
        from implicit_bench.audits.diversity_study import ATTRIBUTES
        from implicit_bench.audits.holofair import two_level_intervals

        two_level = two_level_intervals(
            boot,
            frame,
            scores,
            attributes={a: ATTRIBUTES[a] for a in params.attributes},
            scene_variant=scene_variant,
            template_variant=template_variant,
            quantiles=params.quantiles,
            stream=f"diversity_study/{params.generator}",
        )
    extra: dict[str, Any] = {"prompt_source": params.prompt_source}
    if scm:
        extra["scm"] = {
            **params.scm.model_dump(),
            "split": "eval",
            "prompts": {
                "neutral": int(sample["trigger"].isna().sum()),
                "trigger": int(sample["trigger"].notna().sum()),
            },
            "roles": "neutral prompts pooled for ID, each trigger prompt one CA scene",
            "by_trigger": scm_by_trigger(frame, sample, scores),
        }
    if gen:
        extra["gen"] = {
            **(agreement or {}),
            "split": "gen",
            "roles": "every image pooled for ID, each prompt's images one CA scene",
        }
    return {
        **extra,
        "generator": params.generator,
        "n_images": params.n_images,
        "seeds": params.seeds(),
        "units": sample["unit_id"].tolist(),
        "bias_types": {
            str(k): int(v) for k, v in sample["bias_type"].value_counts().sort_index().items()
        },
        "face_judge": params.judge.backend,
        "quality": quality,
        "race": race_note(params.judge.backend),  # faces.attributes
        "abstention_tau": params.judge.tau,
        "attributes": list(params.attributes),
        "render": {k: rendered[k] for k in ("generator", "items", "by_status") if k in rendered},
        "scores": scores,
        "intervals": intervals,
        # HoloFair F.2: prompts (units) and, within each, its generations resampled
        "intervals_prompts_and_generations": two_level,
        "bootstrap": boot.block("sampled units with replacement"),
    }
