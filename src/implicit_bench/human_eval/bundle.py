"""Rating bundles of the human study (paper Appendix D.1-D.3): sample units, write the form.

A bundle is a directory with ``form.html`` (self-contained: images inlined as data URIs, no
network), ``manifest.json`` (which unit, seed and variant is behind every case and image
position; never shown to raters) and ``README.txt``.
"""

from __future__ import annotations

import base64
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from implicit_bench._util.dirswap import check_owned, staged_dir
from implicit_bench._util.files import read_table, write_json
from implicit_bench._util.hashing import derive_seed, stable_hash
from implicit_bench.errors import ConfigError, InputError
from implicit_bench.human_eval.form import (
    ANSWER_COLUMNS,
    KG_ANSWERS,
    KG_QUESTION,
    SCALE_ANCHORS,
    render_form,
)
from implicit_bench.params import NonNegInt, PositiveInt, Seed, StrictModel
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    IMAGES_DIR,
    JUDGEMENTS_DIR,
    SELECTED_UNITS,
    SELECTED_UNITS_PATH,
    UNITS,
    UNITS_PATH,
)
from implicit_bench.render.images import ImageStore, published_stores, read_index


class HumanEvalParams(StrictModel):
    """``human_eval`` section of params.yaml."""

    units: str = UNITS_PATH
    selected_units: str = SELECTED_UNITS_PATH  # sample from these if present
    image_roots: list[str] = [IMAGES_DIR]
    # generator configuration whose images are rated; None = the only one with all variants
    config: str | None = None
    judgements: list[str] = [f"{JUDGEMENTS_DIR}/*.parquet"]
    sample_size: PositiveInt = 100
    seed: Seed = 42
    stratify_by: str | None = "bias_type"  # null: a uniform random sample (the paper's, D.1)
    min_per_stratum: NonNegInt = 1  # at most sample_size (and x strata, checked when sampling)
    image_seed: int | None = None  # None: one complete seed drawn per unit
    image_size: PositiveInt = 512
    exclude: list[str] = []  # manifests / answer CSVs / unit-id lists of units already rated
    screen_threshold: Annotated[float, Field(ge=-1.0, le=1.0, allow_inf_nan=False)] = (
        0.40  # a correlation
    )
    screen_rule: Literal["loo_mean", "mean_pairwise", "none"] = (
        "loo_mean"  # mean_pairwise: the paper's, Appendix D.4
    )
    min_pairs: PositiveInt = 3
    directional_below: NonNegInt = 4  # bias types with fewer cases are flagged directional only
    groups: dict[str, list[str]] = {"visually-legible": ["race", "gender", "profession", "age"]}
    out_metrics: str = "metrics/human_eval.json"

    @model_validator(mode="after")
    def _stratum_minimum(self) -> HumanEvalParams:
        if self.min_per_stratum > self.sample_size:
            raise ValueError(
                f"min_per_stratum {self.min_per_stratum} exceeds sample_size {self.sample_size}"
            )
        return self


def allocate(counts: dict[str, int], size: int, minimum: int) -> dict[str, int]:
    """Proportional allocation by largest remainder, at least ``minimum`` per stratum (capped
    by the stratum's size), total ``size`` (capped by the population)."""
    total = sum(counts.values())
    size = min(size, total)
    alloc = {k: min(minimum, n) for k, n in counts.items()}
    if sum(alloc.values()) > size:  # fewer slots than strata: largest strata first
        alloc = dict.fromkeys(counts, 0)
        for k in sorted(counts, key=lambda k: (-counts[k], k))[:size]:
            alloc[k] = 1
        return alloc
    remaining = size - sum(alloc.values())
    room = {k: counts[k] - alloc[k] for k in counts}
    room_total = sum(room.values())
    if remaining and room_total:
        quotas = {k: remaining * room[k] / room_total for k in counts}
        extra = {k: min(room[k], int(np.floor(q))) for k, q in quotas.items()}
        left = remaining - sum(extra.values())
        for k in sorted(counts, key=lambda k: (-(quotas[k] - np.floor(quotas[k])), k)):
            if left <= 0:
                break
            if extra[k] < room[k]:
                extra[k] += 1
                left -= 1
        alloc = {k: alloc[k] + extra[k] for k in counts}
    return alloc


def excluded_unit_ids(paths: list[str | Path]) -> set[str]:
    """Unit ids already rated: from bundle manifests (JSON), answer CSVs or one-id-a-line files."""
    ids: set[str] = set()
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise InputError(path, None, None, "exclusion file not found")
        if path.suffix == ".json":
            ids.update(
                str(c["unit_id"]) for c in json.loads(path.read_text(encoding="utf-8"))["cases"]
            )
        elif path.suffix in (".csv", ".parquet"):
            frame = read_table(path)
            if "unit_id" not in frame.columns:
                raise InputError(path, None, "unit_id", "no unit_id column")
            ids.update(frame["unit_id"].dropna().astype(str))
        else:
            ids.update(
                line.strip()
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()
            )
    return ids


def _open_stores(roots: list[str], base: Path) -> tuple[pd.DataFrame, dict[str, ImageStore]]:
    frames, stores = [], {}
    for root in roots:
        directory = base / root
        if not directory.is_dir():
            continue
        for store_dir in published_stores(directory):
            store = ImageStore(store_dir)
            index = read_index(store_dir)  # the render plan's items only
            for config in index["config"].unique():
                stores[str(config)] = store
            frames.append(index)
    if not frames:
        raise InputError(
            base / roots[0] if roots else base,
            None,
            None,
            "no image store found (run the render stage)",
        )
    index = pd.concat(frames, ignore_index=True)
    index["unit_id"] = index["unit_id"].astype(str)
    return index, stores


def _stratified(
    params: HumanEvalParams,
    units: pd.DataFrame,
    eligible: pd.DataFrame,
    rng: np.random.Generator,
    root: Path,
) -> tuple[dict[str, int], list[str]]:
    """The stratified draw: proportional allocation (``allocate``) within ``stratify_by``."""
    if params.stratify_by not in units.columns:
        raise InputError(
            root / params.units,
            None,
            params.stratify_by,
            "human_eval.stratify_by names a column the units table lacks "
            f"(columns: {', '.join(map(str, units.columns))})",
        )
    strata = eligible.groupby(params.stratify_by)["unit_id"].apply(list).to_dict()
    floor = sum(min(params.min_per_stratum, len(v)) for v in strata.values())
    if (
        params.min_per_stratum > 1 and floor > params.sample_size
    ):  # 1: the largest strata first (allocate)
        raise ConfigError(
            f"human_eval.min_per_stratum {params.min_per_stratum} x {len(strata)} strata of "
            f"'{params.stratify_by}' needs {floor} cases, more than "
            f"sample_size {params.sample_size}; "
            "lower it or raise sample_size"
        )
    alloc = allocate(
        {k: len(v) for k, v in strata.items()}, params.sample_size, params.min_per_stratum
    )
    chosen: list[str] = []
    for stratum in sorted(strata):
        if alloc[stratum]:
            chosen.extend(rng.choice(strata[stratum], size=alloc[stratum], replace=False).tolist())
    chosen = [chosen[i] for i in rng.permutation(len(chosen))]  # case order: random across strata
    return alloc, chosen


def sample_cases(
    params: HumanEvalParams, root: str | Path = "."
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, ImageStore]]:
    """Draw the sample (stratified; uniform with ``stratify_by`` null); return (cases,
    sampling record, stores)."""
    root = Path(root)
    units = UNITS.read(root / params.units)
    population = "all units"
    if (root / params.selected_units).exists():
        selected = set(SELECTED_UNITS.read(root / params.selected_units)["unit_id"])
        units = units[units["unit_id"].isin(selected)]
        population = f"selected units ({params.selected_units})"
    index, stores = _open_stores(params.image_roots, root)
    configs = sorted(index[index["variant"].isin(VARIANTS[1:])]["config"].astype(str).unique())
    config = params.config or (configs[0] if len(configs) == 1 else None)
    if config is None:
        raise InputError(
            root / params.image_roots[0],
            None,
            "config",
            f"several generator configurations {configs}; set human_eval.config",
        )
    ok = index[
        (index["config"] == config) & (index["status"] == "ok") & index["variant"].isin(VARIANTS)
    ]
    complete = ok.groupby(["unit_id", "seed"])["variant"].nunique()
    complete = complete[complete == len(VARIANTS)].reset_index()
    if params.image_seed is not None:
        complete = complete[complete["seed"] == params.image_seed]
    seeds_by_unit = (
        complete.groupby("unit_id")["seed"].apply(lambda s: sorted(int(x) for x in s)).to_dict()
    )
    excluded = excluded_unit_ids(params.exclude)
    eligible = units[units["unit_id"].isin(seeds_by_unit) & ~units["unit_id"].isin(excluded)]
    eligible = eligible.sort_values("unit_id").reset_index(drop=True)
    rng = np.random.default_rng(params.seed)
    if params.stratify_by is None:  # the paper's simple random sample of the eligible units
        alloc: dict[str, int] | None = None
        ids = eligible["unit_id"].astype(str).tolist()
        chosen = rng.choice(ids, size=min(params.sample_size, len(ids)), replace=False).tolist()
    else:
        alloc, chosen = _stratified(params, units, eligible, rng, root)
    by_id = eligible.set_index("unit_id")
    keyed = ok.set_index(["unit_id", "seed", "variant"])["sha256"]
    cases = []
    for n, uid in enumerate(chosen, start=1):
        unit = by_id.loc[uid]
        seeds = seeds_by_unit[uid]
        seed = seeds[derive_seed(params.seed, uid, "seed") % len(seeds)]
        order = [
            VARIANTS[i]
            for i in np.random.default_rng(derive_seed(params.seed, uid, "order")).permutation(3)
        ]
        cases.append(
            {
                "case": f"c{n:03d}",
                "unit_id": uid,
                "bias_type": unit["bias_type"],
                "head": unit["head"],
                "relation": None if pd.isna(unit["relation"]) else unit["relation"],
                "stereotype": unit["stereotype"],
                "anti_stereotype": unit["anti_stereotype"],
                "seed": int(seed),
                "order": order,
                "images": [
                    {"position": i + 1, "variant": v, "sha256": keyed[(uid, seed, v)]}
                    for i, v in enumerate(order)
                ],
            }
        )
    record = {
        "size_requested": params.sample_size,
        "size": len(cases),
        "seed": params.seed,
        "stratify_by": params.stratify_by,
        "min_per_stratum": params.min_per_stratum,
        "design": "uniform" if alloc is None else "stratified",
        "allocation": None if alloc is None else {k: int(v) for k, v in sorted(alloc.items())},
        "population": population,
        "eligible_units": len(eligible),
        "excluded_units": len(excluded),
        "image_seed": params.image_seed,
        "config": config,
    }
    return cases, record, stores


def _data_uri(store: ImageStore, sha256: str, size: int) -> str:
    from PIL import Image

    image = Image.open(io.BytesIO(store.read_bytes(sha256))).convert("RGB")
    image.thumbnail((size, size))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def export_bundle(
    params: HumanEvalParams,
    out_dir: str | Path,
    root: str | Path = ".",
    bundle_id: str | None = None,
) -> dict[str, Any]:
    """Sample, then write ``form.html``, ``manifest.json`` and ``README.txt`` into ``out_dir``."""

    cases, record, stores = sample_cases(params, root)
    if not cases:
        raise InputError(
            Path(root) / params.units,
            None,
            None,
            "no eligible unit to sample (images missing or all excluded)",
        )
    bundle_id = bundle_id or "b-" + stable_hash([record, [c["unit_id"] for c in cases]], 10)
    store = stores[record["config"]]
    form_cases = [
        {
            "case": c["case"],
            "unit_id": c["unit_id"],
            "head": c["head"],
            "relation": c["relation"],
            "stereotype": c["stereotype"],
            "anti_stereotype": c["anti_stereotype"],
            "images": [_data_uri(store, img["sha256"], params.image_size) for img in c["images"]],
        }
        for c in cases
    ]
    out = Path(out_dir)
    manifest = {
        "bundle_id": bundle_id,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "sampling": record,
        "question_kg": KG_QUESTION,
        "kg_answers": list(KG_ANSWERS),
        "scale": {str(k): v for k, v in SCALE_ANCHORS.items()},
        "answer_columns": list(ANSWER_COLUMNS),
        "cases": cases,
    }
    write_bundle(
        out,
        manifest,
        render_form(bundle_id, form_cases),
        f"Rating bundle {bundle_id}: {len(cases)} cases.\n"
        "Send form.html to each rater (it works offline in any browser; answers are saved in the\n"
        "browser as they go). Each rater downloads their answers as "
        "a CSV with the button at the end.\n"
        "Keep manifest.json private: it says which image is which variant.\n"
        "Import: implicit-bench human-eval import --manifest manifest.json ANSWERS.csv ...\n",
    )
    return {"bundle_id": bundle_id, "n_cases": len(cases), "out": str(out), **record}


BUNDLE_FILES = ("manifest.json", "form.html", "README.txt")


def write_bundle(out: Path, manifest: dict[str, Any], form_html: str, readme: str) -> None:
    """A bundle folder's three files, swapped in at once (a killed export leaves the previous
    bundle or none); a folder holding other files is refused, not emptied."""
    check_owned(out, [re.escape(name) for name in BUNDLE_FILES], "human-eval export")
    with staged_dir(out) as tmp:
        write_json(tmp / "manifest.json", manifest)
        (tmp / "form.html").write_text(form_html, encoding="utf-8")
        (tmp / "README.txt").write_text(readme, encoding="utf-8")
