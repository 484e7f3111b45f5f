"""Model numbers feeding metrics are the same bits whatever the batch size, cache state or
thread count: the clip stage's work (tiny transformers CLIP) and the retrieve
stage's (real all-MiniLM-L6-v2) hashed in subprocesses (tests/helpers/invariance_probe.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import units_frame

HEADS = ["nurse", "neighbour", "family at dinner", "engineer", "pilot", "cook", "doctor"]


def _workspace(root: Path) -> Path:
    """Units, one image store of random pictures (3 variants x 2 seeds), a tiny CLIP, a KG."""
    from implicit_bench.backends.tiny.stage import build

    base = units_frame()
    units = pd.concat(
        [base.assign(unit_id=base["unit_id"] + f"_{k}") for k in range(3)], ignore_index=True
    )
    units.to_parquet(root / "units.parquet", index=False)
    rng = np.random.default_rng(7)
    keys = []
    with ImageStore(root / "images" / "tiny") as store:
        for uid in units["unit_id"]:
            for variant in ("neutral", "stereotype", "anti_stereotype"):
                for seed in (1, 2):
                    pixels = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
                    path = root / "png.png"
                    Image.fromarray(pixels).save(path)
                    key = ImageKey("tiny", uid, variant, seed)
                    store.put(ImageRecord(key, "random", "p", "ok"), path.read_bytes())
                    keys.append(key)
        store.finalize(keys)
    build("clip", root / "clip", seed=0)
    kg = pd.DataFrame(
        {
            "unit_id": [f"k{i}" for i in range(14)],
            "head": [HEADS[i % 7] for i in range(14)],
            "relation": ["is", None] * 7,
            "stereotype": ["woman", "man", "poor", "rich", "old", "young", "strong"] * 2,
            "anti_stereotype": ["man", "woman", "rich", "poor", "young", "old", "weak"] * 2,
            "prompt_neutral": [f"A photo of a {HEADS[i % 7]}" for i in range(14)],
        }
    )
    kg.to_parquet(root / "kg.parquet", index=False)
    return root


def _probe(work: Path, batch: int, threads: int, cache: Path, warm_half: bool = False) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)]),
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }
    cmd = [sys.executable, str(REPO_ROOT / "tests" / "helpers" / "invariance_probe.py"), str(work)]
    cmd += ["--batch", str(batch), "--cache-dir", str(cache)]
    done = subprocess.run(
        cmd + (["--warm-half"] if warm_half else []),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_batch_cache_and_threads_leave_the_numbers_alone(tmp_path):
    work = _workspace(tmp_path)
    cold_one = _probe(work, batch=1, threads=1, cache=tmp_path / "c1")
    cold_seven = _probe(work, batch=7, threads=2, cache=tmp_path / "c7")
    half_warm = _probe(work, batch=7, threads=2, cache=tmp_path / "half", warm_half=True)
    warm = _probe(work, batch=7, threads=1, cache=tmp_path / "c1")  # every answer from cache
    assert cold_one == cold_seven == half_warm == warm
