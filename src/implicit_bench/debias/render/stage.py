"""Rendering a debiasing configuration through the render machinery.

Every configuration renders the prompts of the units subset on all seeds into its own image
store ``data/debias/images/<config>/`` with the generator named by ``debias.generator`` (a
``generators`` catalogue entry), planned and batched exactly as the render stage plans a plain run.
What is rendered is the configuration's method's (``debias/methods/``): its prompts
(``prepare``: the neutral prompt, a rewrite, the prompt with a suffix ...), and for methods
that change the rendering itself (steering) its worker and settings hash.

Image keys keep the variant ``neutral``: the images answer the neutral prompt.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from implicit_bench.debias.configs import ConfigSpec
from implicit_bench.debias.methods import MethodInputs
from implicit_bench.debias.params import DebiasParams  # noqa: F401 (the stage script's params model)
from implicit_bench.debias.units import KG_COLUMNS, subset_units  # noqa: F401 (the stage script's units subset)

if TYPE_CHECKING:
    from implicit_bench.backends.generators import GeneratorParams


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
) -> tuple[pd.DataFrame, dict[str, Any], Counter]:
    """The units frame to plan from (``prompt_neutral`` = the prompt to render), the method's
    payload per unit (steering texts), and the units left out with the reason."""
    prepared = spec.impl.prepare(spec.options, MethodInputs(subset, kg, rewrites, pairs, retrieval))
    return _neutral_frame(subset, prepared.prompts), prepared.payloads, prepared.skipped


def render_debias_config(
    name: str,
    spec: ConfigSpec,
    *,
    units: pd.DataFrame,
    texts: dict[str, Any],
    seeds: Sequence[int],
    cfg: GeneratorParams,
    render_params: Any,
    generator_name: str,
    store_dir: str | Path,
) -> dict[str, Any]:
    """Render one configuration into ``store_dir`` with the render stage's planner, batching,
    executor and resume rules; return its summary."""
    from implicit_bench.backends.generators import GENERATORS, settings_hash
    from implicit_bench.render.images import ImageKey, ImageStore
    from implicit_bench.render.stage import (
        check_render_failures,
        generate_worker,
        plan_items,
        pool_dir,
        render_plan,
        summarize,
    )

    method = spec.impl
    method.check_generator(name, GENERATORS.resolve(cfg.backend), generator_name, cfg.backend)
    planned = plan_items(units, name, seeds, ["neutral"])
    settings = method.settings(spec.options, settings_hash(cfg), texts)
    worker = method.worker(spec.options, cfg) or functools.partial(generate_worker, cfg)
    payloads = {i.key: texts[i.key.unit_id] for i in planned} if texts else None
    pool = pool_dir(store_dir)
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
            pool=pool,
        )
        keys: list[ImageKey] = [i.key for i in planned]
        index = store.finalize(keys=keys, pool=pool)
    check_render_failures(f"debias_render {name}", index, render_params.max_failure_rate)
    return {
        "config": name,
        "method": spec.method,
        "alpha": None,  # the steering strength, for the methods that have one (describe)
        **method.describe(spec.options),
        "generator": generator_name,
        "settings_hash": settings,
        **summarize(index, planned),
        "run": run,
    }
