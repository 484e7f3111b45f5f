"""The ``clip`` stage's work: embed every ok image once, write lean and blind rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.backends.clip import create
from implicit_bench.backends.clip.embeddings import CachedEmbedder
from implicit_bench.backends.clip.params import ClipStageParams
from implicit_bench.backends.clip.quality import (
    backbone_comparison,
    clip_score_summary,
    clip_scores,
)
from implicit_bench.backends.clip.scores import (
    attribute_text,
    blind_rows,
    lean_rows,
    lean_summary,
    variant_sims,
)
from implicit_bench.render.images import ImageStore, published_stores, read_index
from implicit_bench.runtime.cache import DiskCache


def store_dirs(params: ClipStageParams) -> list[Path]:
    if params.image_stores:
        return [Path(p) for p in params.image_stores]
    return published_stores(params.images_root)


# The UNITS columns the clip stage reads (tables.UNITS.read(path, require=UNIT_COLUMNS_USED)).
UNIT_COLUMNS_USED = ("unit_id", "stereotype", "anti_stereotype")


def run_clip(params: ClipStageParams, units: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """JUDGEMENTS rows (clip_lean + blind) and the metrics dict (without provenance)."""
    backend = create(params.model)
    embedder = CachedEmbedder(backend, DiskCache(params.cache))
    others = {
        name: CachedEmbedder(create(cfg), DiskCache(params.cache))
        for name, cfg in params.compare_models.items()
    }
    unit_ids = set(units["unit_id"].astype(str))
    frames, per_config, images_seen = [], {}, 0
    config_dirs: dict[str, Path] = {}
    quality: list[pd.DataFrame] = []
    compared: dict[str, dict[str, list[pd.DataFrame]]] = {n: {} for n in others}
    for root in store_dirs(params):
        store = ImageStore(root)
        index = read_index(root)  # the render plan's items only
        ok = index[(index["status"] == "ok") & index["unit_id"].astype(str).isin(unit_ids)].copy()
        ok["unit_id"] = ok["unit_id"].astype(str)
        config_dirs.update({str(c): root for c in ok["config"].unique()})
        images_seen += len(ok)
        emb = embedder.images(ok["sha256"], store.load_image)
        used = units[units["unit_id"].astype(str).isin(set(ok["unit_id"]))]
        texts = [
            attribute_text(t, params.text_template)
            for col in ("stereotype", "anti_stereotype")
            for t in used[col]
        ]
        txt = embedder.texts(texts)
        sims = variant_sims(ok, emb)
        model_name = params.model.model
        blind = blind_rows(
            ok,
            units,
            img_emb=emb,
            txt_emb=txt,
            template=params.text_template,
            margin=params.margin,
            judge=params.judge,
            model=model_name,
        )
        frames += [lean_rows(sims, params.judge, model_name), blind]
        if params.clip_score:
            quality.append(clip_scores(ok, emb, embedder.texts(ok["prompt"].astype(str))))
        for name, other in others.items():
            o_emb = other.images(ok["sha256"], store.load_image)
            o_txt = other.texts(texts)
            o_blind = blind_rows(
                ok,
                units,
                img_emb=o_emb,
                txt_emb=o_txt,
                template=params.text_template,
                margin=params.margin,
                judge=name,
                model=name,
            )
            parts = compared[name]
            for label, frame in (
                ("sims", sims),
                ("other_sims", variant_sims(ok, o_emb)),
                ("blind", blind),
                ("other_blind", o_blind),
            ):
                parts.setdefault(label, []).append(frame)
        for config, g in sims.groupby("config"):
            per_config[str(config)] = lean_summary(g)
        store.close()
    rows = (
        pd.concat(frames, ignore_index=True)
        if frames
        else lean_rows(
            variant_sims(
                pd.DataFrame(columns=["config", "unit_id", "variant", "seed", "sha256"]), {}
            ),
            params.judge,
            params.model.model,
        )
    )
    from implicit_bench.backends.clip.margin import margin_calibration

    calibration, rows = margin_calibration(
        rows, params.margin_calibration, params.margin, units, config_dirs
    )
    blind = rows[rows["task"] == "blind"]
    metrics = {
        "images": images_seen,
        "embedded_now": embedder.computed_images,
        "lean_by_config": per_config,
        "blind_labels": {str(k): int(v) for k, v in blind["value"].value_counts().items()},
        "margin": params.margin,
        "margin_calibration": calibration,
        "text_template": params.text_template,
    }
    if params.clip_score:
        metrics["clip_score"] = clip_score_summary(
            pd.concat(quality, ignore_index=True)
            if quality
            else pd.DataFrame(columns=["config", "unit_id", "variant", "seed", "cos"])
        )
    if others:
        metrics["backbone_sensitivity"] = {
            name: {
                "primary": params.model.model,
                "other": params.compare_models[name].model,
                **(
                    backbone_comparison(
                        *(
                            pd.concat(parts[k], ignore_index=True)
                            for k in ("sims", "other_sims", "blind", "other_blind")
                        )
                    )
                    if parts
                    else {}
                ),
            }
            for name, parts in compared.items()
        }
    return rows, metrics
