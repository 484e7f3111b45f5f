"""Synthetic pipeline outputs for tests and benchmarks of the report and the human evaluation.

``build_synthetic_project(root, n_units)`` writes, under ``root``, what the pipeline's stages
write (docs/contracts.md): a units table, an ``ImageStore`` per configuration with tiny
PNGs, a JUDGEMENTS table, metrics JSON and plot CSVs. The values are random but
deterministic (``seed``), and marked as coming from randomly initialised models. The image
stores are written through ``ImageStore.put`` with ``os.fsync`` disabled (throw-away fixture
data needs no durability; 27,000 fsyncs would dominate a paper-scale benchmark).
"""

from __future__ import annotations

import io
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
from PIL import Image

from implicit_bench._util.files import write_json, write_table
from implicit_bench._util.hashing import derive_seed
from implicit_bench.protocol.schema import BIAS_TYPES, VARIANTS
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from implicit_bench.runtime.provenance import RANDOM_INIT_WARNING

SEEDS = (42, 1042, 2042)
BASE_CONFIG = "tiny-gen"
DEBIAS_CONFIGS = ("exp03_rewrite_own", "exp06_steer_full_own")
JUDGES = ("judge-a", "judge-b")
_COLOURS = {
    "neutral": (128, 128, 128),
    "stereotype": (200, 40, 40),
    "anti_stereotype": (40, 40, 200),
}


def _png(colour: tuple[int, int, int], shade: int, size: int) -> bytes:
    image = Image.new("RGB", (size, size), colour)
    # a stripe coloured from (unit, seed, config) makes every image distinct (distinct sha256)
    image.paste(
        (shade % 256, (shade >> 8) % 256, (shade >> 16) % 256), (0, 0, size, max(1, size // 4))
    )
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def synthetic_units(n_units: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    bias = rng.choice(BIAS_TYPES, size=n_units)
    rows = []
    for i in range(n_units):
        head = f"person {i:04d}"
        rows.append(
            {
                "unit_id": f"u{i:05d}",
                "source": "stereoset" if i % 3 else "crows_pairs",
                "bias_type": str(bias[i]),
                "head": head,
                "relation": None if i % 3 == 0 else "has_trait",
                "stereotype": f"trait s{i}",
                "anti_stereotype": f"trait a{i}",
                "prompt_neutral": f"A photo of {head} at work",
                "prompt_stereotype": f"A photo of {head} at work, trait s{i}",
                "prompt_anti_stereotype": f"A photo of {head} at work, trait a{i}",
                "axis": "trait",
                "construction_mode": "attribute_substitution",
            }
        )
    return pd.DataFrame(rows)


def build_synthetic_project(
    root: str | Path,
    n_units: int = 12,
    seed: int = 0,
    image_size: int = 16,
    debias_configs: tuple[str, ...] = DEBIAS_CONFIGS,
    with_metrics: bool = True,
) -> dict[str, Path]:
    """Write a small synthetic project under ``root``; return the paths written."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    units = synthetic_units(n_units, seed)
    units_path = root / "data/interim/units.parquet"
    write_table(units, units_path)

    with mock.patch("os.fsync", lambda fd: None):
        judgements, debias_judgements, stores = _build_stores(
            root, units, rng, image_size, debias_configs
        )
    frame = pd.DataFrame(judgements)
    judgements_path = root / "data/judgements/judgements.parquet"
    write_table(frame, judgements_path)
    for config, rows in debias_judgements.items():
        write_table(pd.DataFrame(rows), root / "data/debias/judgements" / f"{config}.parquet")
    paths = {
        "units": units_path,
        "judgements": judgements_path,
        **{f"store:{k}": v for k, v in stores.items()},
    }
    if with_metrics:
        paths.update(_write_metrics(root, units, rng, debias_configs))
    return paths


def _build_stores(
    root: Path,
    units: pd.DataFrame,
    rng: np.random.Generator,
    image_size: int,
    debias_configs: tuple[str, ...],
):
    judgements: list[dict] = []
    stores = {}
    debias_judgements: dict[str, list[dict]] = {}
    for config in (BASE_CONFIG, *debias_configs):
        # layout of docs/contracts.md: debiasing stores and judgements under data/debias/
        store_dir = (
            root / ("data/images" if config == BASE_CONFIG else "data/debias/images") / config
        )
        store = ImageStore(store_dir)
        rows = judgements if config == BASE_CONFIG else debias_judgements.setdefault(config, [])
        variants = VARIANTS if config == BASE_CONFIG else ("neutral",)
        for i, unit_id in enumerate(units["unit_id"]):
            for variant in variants:
                for s in SEEDS:
                    key = ImageKey(config, unit_id, variant, s)
                    prompt = units.at[i, f"prompt_{variant}"]
                    if (
                        config == BASE_CONFIG
                        and i == 1
                        and variant == "stereotype"
                        and s == SEEDS[2]
                    ):
                        store.put(
                            ImageRecord(key, config, prompt, "refused", reason="safety"), None
                        )
                        continue
                    shade = i + ((s + derive_seed(config)) % 256 << 16)
                    png = _png(_COLOURS[variant], shade, image_size)
                    store.put(
                        ImageRecord(key, config, prompt, "ok", width=image_size, height=image_size),
                        png,
                    )
                    rows.extend(_judge_rows(rng, config, unit_id, variant, s))
        store.finalize()
        stores[config] = store_dir
    return judgements, debias_judgements, stores


def _judge_rows(
    rng: np.random.Generator, config: str, unit_id: str, variant: str, seed: int
) -> list[dict]:
    rows = []
    centre = {"neutral": 3.0, "stereotype": 4.0, "anti_stereotype": 1.5}[variant]
    p_s = {"neutral": 0.5, "stereotype": 0.8, "anti_stereotype": 0.25}[variant]
    base = {"unit_id": unit_id, "variant": variant, "seed": seed, "config": config}
    for judge in JUDGES:
        score = int(np.clip(round(rng.normal(centre, 1.2)), 0, 5))
        rows.append(
            {
                **base,
                "judge": judge,
                "task": "rubric",
                "value": str(score),
                "valid": True,
                "raw": f'{{"score": {score}}}',
            }
        )
        if config == BASE_CONFIG:
            u = rng.random()
            label = "s" if u < p_s else ("a" if u < p_s + 0.2 else "neither")
            valid = rng.random() > 0.02
            rows.append(
                {
                    **base,
                    "judge": judge,
                    "task": "blind",
                    "value": label if valid else None,
                    "valid": valid,
                    "raw": label if valid else "I cannot tell",
                    "order": "sa" if rng.random() < 0.5 else "as",
                }
            )
    aligned = bool(rng.random() < 0.8)
    rows.append(
        {
            **base,
            "judge": JUDGES[0],
            "task": "alignment",
            "value": str(aligned).lower(),
            "valid": True,
            "raw": "",
        }
    )
    return rows


def _interval(rng: np.random.Generator, centre: float, n: int = 10) -> dict:
    """An ``Estimate`` in its JSON form (docs/metrics.md)."""
    half = float(rng.uniform(0.01, 0.05))
    return {
        "value": round(centre, 4),
        "ci": [round(centre - half, 4), round(centre + half, 4)],
        "n": n,
        "level": 0.95,
    }


def _write_metrics(
    root: Path, units: pd.DataFrame, rng: np.random.Generator, debias_configs
) -> dict[str, Path]:
    prov = {
        "random_init": True,
        "random_init_models": ["models/tiny/generator"],
        "models": [{"role": "generator", "model": "models/tiny/generator", "random_init": True}],
        "warning": RANDOM_INIT_WARNING,
    }
    by_type = {}
    for bias in sorted(units["bias_type"].unique()):
        by_type[bias] = {
            "n_units": int((units["bias_type"] == bias).sum()),
            "default_rate": _interval(rng, float(rng.uniform(0.2, 0.6))),
            "gap": _interval(rng, float(rng.uniform(0.0, 0.3))),
        }
    # benchmark.json's shape (protocol.benchmark_file): each judge's rates under judges.<j>.all,
    # the primary judge's at the top level
    rates = {"default_rate": 0.5, "success_stereotype": 0.72, "success_anti": 0.48, "gap": 0.24}
    judges = {j: {"all": {k: _interval(rng, v) for k, v in rates.items()}} for j in JUDGES}
    benchmark = {
        "provenance": prov,
        "primary_judge": JUDGES[0],
        "blind_judges": list(JUDGES),
        "judges": judges,
        **judges[JUDGES[0]]["all"],
        "by_default_strength": {
            g: {"success_stereotype": _interval(rng, 0.8), "success_anti": _interval(rng, 0.5)}
            for g in ("0", "1-2", "3")
        },
        "by_bias_type": by_type,
        "bootstrap": {"n": 1000, "seed": 42},
    }
    debias = {"provenance": prov, "configs": {}}
    for cfg in ("exp00_unmodified", *debias_configs):
        debias["configs"][cfg] = {
            "bias": round(float(rng.uniform(2, 3.5)), 3),
            "align": round(float(rng.uniform(0.7, 0.95)), 3),
            "S": round(float(rng.uniform(20, 35)), 2),
            "dS": {
                "value": round(float(rng.uniform(-2, 9)), 2),
                "ci": [-1.0, 3.0],
                "n": int(len(units)),
                "level": 0.95,
            },
            "n_images": int(len(units) * 3),
        }
    out = {
        "metrics:benchmark": root / "metrics/benchmark.json",
        "metrics:debias": root / "metrics/debias.json",
    }
    write_json(out["metrics:benchmark"], benchmark)
    write_json(out["metrics:debias"], debias)
    rows = [
        {
            "bias_type": b,
            "judge": j,
            "default_rate": v["default_rate"]["value"],
            "ci_low": v["default_rate"]["ci"][0],
            "ci_high": v["default_rate"]["ci"][1],
        }
        for b, v in by_type.items()
        for j in JUDGES
    ]
    out["plot:default_rate"] = root / "plots/default_rate_by_bias_type.csv"
    write_table(pd.DataFrame(rows), out["plot:default_rate"])
    rows = [
        {"group": g, "prompt": p, "success": float(rng.uniform(0.3, 0.97))}
        for g in ("0", "1-2", "3")
        for p in ("stereotype", "anti_stereotype")
    ]
    out["plot:success"] = root / "plots/success_by_default_strength.csv"
    write_table(pd.DataFrame(rows), out["plot:success"])
    out["plot:debias"] = root / "plots/debias_delta_s.csv"
    write_table(
        pd.DataFrame(
            [
                {
                    "config": k,
                    "dS": v["dS"]["value"],
                    "ci_low": v["dS"]["ci"][0],
                    "ci_high": v["dS"]["ci"][1],
                }
                for k, v in debias["configs"].items()
            ]
        ),
        out["plot:debias"],
    )
    return out
