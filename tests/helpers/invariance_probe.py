"""Run by tests/unit/render/test_invariance.py in a subprocess (its own OMP_NUM_THREADS): the
sha256 of
what the clip stage (``clip.stage.run_clip``, tiny transformers CLIP) and the retrieve stage
(``debias.retrieve.run_retrieval``, real all-MiniLM-L6-v2) compute, with a given batch size
and cache; ``--warm-half`` first fills the cache from half of the items (another batch size)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd


def _digest(frame: pd.DataFrame, metrics: dict) -> str:
    text = frame.to_csv(index=False, float_format="%r") + json.dumps(metrics, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def clip_hash(work: Path, batch: int, cache: Path, warm_half: bool) -> str:
    from implicit_bench.backends.clip import ClipParams
    from implicit_bench.backends.clip.params import ClipStageParams
    from implicit_bench.backends.clip.stage import run_clip

    units = pd.read_parquet(work / "units.parquet")

    def run(use: pd.DataFrame, size: int) -> tuple[pd.DataFrame, dict]:
        model = ClipParams(backend="transformers", model=str(work / "clip"), batch_size=size)
        params = ClipStageParams(model=model, image_stores=[str(work / "images" / "tiny")])
        return run_clip(params.model_copy(update={"cache": str(cache)}), use)

    if warm_half:
        run(units.iloc[::2], 3)
    rows, metrics = run(units, batch)
    metrics = {k: v for k, v in metrics.items() if k != "embedded_now"}
    return _digest(rows.sort_values(["task", "unit_id", "variant", "seed"]), metrics)


def retrieval_hash(work: Path, batch: int, cache: Path, warm_half: bool) -> str:
    from implicit_bench.backends.embedders import EmbedderParams
    from implicit_bench.debias.retrieval import RetrievalTextParams
    from implicit_bench.debias.retrieve import run_retrieval

    kg = pd.read_parquet(work / "kg.parquet")

    def run(use: pd.DataFrame, size: int) -> tuple[pd.DataFrame, dict]:
        embedder = EmbedderParams(batch_size=size, cache=str(cache))
        return run_retrieval(
            use, SimpleNamespace(embedder=embedder, retrieval=RetrievalTextParams())
        )

    if warm_half:
        run(kg.iloc[::2], 3)
    result, metrics = run(kg, batch)
    metrics = {k: v for k, v in metrics.items() if k not in ("embedding_calls", "provenance")}
    return _digest(result, metrics)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", type=Path)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--warm-half", action="store_true")
    args = ap.parse_args()
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    out = {
        "clip": clip_hash(args.work, args.batch, args.cache_dir / "clip.sqlite", args.warm_half),
        "retrieval": retrieval_hash(
            args.work, args.batch, args.cache_dir / "emb.sqlite", args.warm_half
        ),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
