"""Rendering a debiasing configuration through the render machinery.

Every configuration renders the neutral prompts of the units subset on all seeds into its own
image store ``data/images/<config>/`` with the generator named by ``debias.generator`` (a
``render.configs`` entry), planned and batched exactly as the render stage plans a plain run:

- unmodified: the neutral prompt;
- rewrite: the rewritten prompt (a unit whose rewrite is invalid is not rendered; counted);
- steer: the neutral prompt, encoded with the generator's own encoder and shifted by
  ``alpha * d`` (``implicit_bench.debias.steering``) before generation.

Image keys keep the variant ``neutral``: the images answer the neutral prompt.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.debias.configs import ConfigSpec
from implicit_bench.debias.stage import unit_for
from implicit_bench.debias.steering import direction, split_batch, steer, steering_texts
from implicit_bench.errors import ConfigError
from implicit_bench.hashing import stable_hash


def _neutral_frame(units: pd.DataFrame, prompts: dict[str, str]) -> pd.DataFrame:
    keep = units[units["unit_id"].isin(prompts)]
    return keep.assign(prompt_neutral=keep["unit_id"].map(prompts))


def plan_inputs(
    name: str,
    spec: ConfigSpec,
    subset: pd.DataFrame,
    kg: pd.DataFrame,
    rewrites: pd.DataFrame | None,
    pairs: pd.DataFrame | None,
    retrieval: pd.DataFrame | None,
) -> tuple[pd.DataFrame, dict[str, tuple[str, str]], Counter]:
    """The units frame to plan from (``prompt_neutral`` = the prompt to render), the steering
    texts per unit, and the units left out with the reason."""
    skipped: Counter = Counter()
    prompts = dict(zip(subset["unit_id"], subset["prompt_neutral"], strict=True))
    texts: dict[str, tuple[str, str]] = {}
    if spec.method == "rewrite":
        rows = rewrites[rewrites["info"] == spec.info] if rewrites is not None else pd.DataFrame()
        valid = {r.unit_id: r.prompt for r in rows.itertuples() if bool(r.valid)}
        for unit in list(prompts):
            if unit in valid:
                prompts[unit] = valid[unit]
            else:
                skipped["rewrite invalid or missing"] += 1
                del prompts[unit]
    elif spec.method == "steer":
        by_id = {r["unit_id"]: r for r in kg.to_dict("records")}
        pair_of: dict[str, tuple[str, str]] = {}
        if pairs is not None:
            pair_of = {
                r.unit_id: (r.stereotype_prompt, r.anti_stereotype_prompt)
                for r in pairs.itertuples()
                if bool(r.valid)
            }
        for unit in list(prompts):
            source = unit_for(spec.info, unit, retrieval)
            if spec.signal == "llm_pair" and source not in pair_of:
                skipped["LLM pair invalid or missing"] += 1
                del prompts[unit]
                continue
            texts[unit] = steering_texts(by_id[source], spec.signal or "", pair_of.get(source))
    return _neutral_frame(subset, prompts), texts, skipped


def steering_settings(base: str, spec: ConfigSpec, alpha: float, texts: dict[str, tuple[str, str]]) -> str:
    """The settings hash of a steering configuration: a changed alpha, signal or steering text
    re-renders its images on resume."""
    return stable_hash(
        {"generator": base, "signal": spec.signal, "info": spec.info, "alpha": float(alpha),
         "texts": sorted(texts.items())},
        length=16,
    )


def _steer_worker(config: dict[str, Any], signal: str, alpha: float) -> Callable[[list[Any]], list[Any]]:
    """Executor worker factory: load the generator once; each batch is encoded with the
    generator's own encoder, steered, and generated from the edited encodings."""
    import torch

    from implicit_bench.generators import RenderResult, create_generator

    generator = create_generator(config)

    def run(requests: Sequence[Any]) -> list[Any]:
        neutral = generator.encode([r.prompt for r in requests])
        stereo = split_batch(*_tensors(generator.encode([r.payload[0] for r in requests])))
        anti = split_batch(*_tensors(generator.encode([r.payload[1] for r in requests])))
        steered = [
            steer(n, direction(signal, n, s, a), alpha)
            for n, s, a in zip(split_batch(*_tensors(neutral)), stereo, anti, strict=True)
        ]
        neutral.embeds = torch.stack([e.embeds for e in steered])
        if hasattr(neutral, "item_ids"):  # simulated generators draw per image (docs/world.md)
            neutral.item_ids = [r.item_id for r in requests]
        images = generator.generate_encoded(neutral, [r.seed for r in requests])
        return [
            RenderResult.from_image(image) if image is not None else RenderResult.refused("refused by the generator")
            for image in images
        ]

    return run


def _tensors(encoding: Any) -> tuple[Any, Any]:
    return encoding.embeds, encoding.mask


def render_debias_config(
    name: str,
    spec: ConfigSpec,
    units: pd.DataFrame,
    texts: dict[str, tuple[str, str]],
    seeds: Sequence[int],
    alpha: float,
    generator_config: dict[str, Any],
    render_params: Any,
    generator_name: str,
    store_dir: str | Path,
) -> dict[str, Any]:
    """Render one configuration into ``store_dir`` with the render stage's planner, batching,
    executor and resume rules; return its summary."""
    from implicit_bench.generators import GENERATORS, settings_hash, validate_config
    from implicit_bench.images import ImageKey, ImageStore
    from implicit_bench.render.stage import _generate_worker, plan_items, render_plan, summarize

    cfg = validate_config(generator_config, where=f"render.configs.{generator_name}")
    if spec.method == "steer" and not hasattr(GENERATORS.resolve(cfg.backend), "encode"):
        raise ConfigError(
            f"debias config '{name}' steers prompt embeddings, but generator '{generator_name}' "
            f"(backend {cfg.backend}) has no prompt-encoder hook; use a diffusers pipeline"
        )
    planned = plan_items(units, name, seeds, ["neutral"])
    base = settings_hash(cfg)
    if spec.method == "steer":
        settings = steering_settings(base, spec, alpha, texts)
        worker = functools.partial(_steer_worker, cfg.model_dump(), spec.signal, float(alpha))
        payloads = {i.key: texts[i.key.unit_id] for i in planned}
    else:
        settings = base
        worker = functools.partial(_generate_worker, cfg.model_dump())
        payloads = None
    with ImageStore(store_dir) as store:
        store.acquire_writer()  # one writer per store (docs/errors.md)
        run = render_plan(
            store,
            planned,
            worker,
            generator=f"{cfg.backend}:{getattr(cfg, 'model', '')}",
            settings=settings,
            batch_size=cfg.batch_size,
            executor=render_params.executor_for(generator_name),
            verify=render_params.verify,
            retry_failed=render_params.retry_failed,
            payloads=payloads,
            desc=f"debias_render {name}",
        )
        keys: list[ImageKey] = [i.key for i in planned]
        index = store.finalize(keys=keys)
    return {
        "config": name,
        "method": spec.method,
        "info": spec.info,
        "signal": spec.signal,
        "alpha": float(alpha) if spec.method == "steer" else None,
        "generator": generator_name,
        "settings_hash": settings,
        **summarize(index, planned),
        "run": run,
    }
