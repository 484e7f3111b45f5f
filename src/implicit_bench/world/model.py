"""Loading the planted world (``data/world``) for the simulated backends."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import sha256_file, stable_hash
from implicit_bench.errors import ConfigError
from implicit_bench.world.params import WorldParams

TRUTH_FILE = "truth.parquet"
WORLD_FILE = "world.json"
SIM_PREFIX = "sim:"


def sim_name(model: str) -> str:
    """``sim:NAME`` -> NAME (the world's generator / judge entry)."""
    if not model.startswith(SIM_PREFIX):
        raise ConfigError(f"simulated model references look like 'sim:NAME', got '{model}'")
    return model[len(SIM_PREFIX) :]


def fingerprint(world_dir: str | Path) -> str | None:
    """Hash of the planted world's params (``world.json``; None before the world stage ran).

    A unit's truth is a function of these params and the unit's own fields only (drawn from
    ``derive_seed(seed, unit_id)``), so the hash deliberately leaves out ``truth.parquet``:
    planning more or fewer units never invalidates another unit's images or answers."""
    path = Path(world_dir) / WORLD_FILE
    if not path.exists():
        return None
    return stable_hash({WORLD_FILE: sha256_file(path)}, length=16)


@dataclass(frozen=True)
class World:
    params: WorldParams
    truth: pd.DataFrame
    fingerprint: str

    def rows(self, generator: str) -> pd.DataFrame:
        rows = self.truth[self.truth["generator"] == generator]
        if rows.empty:
            raise ConfigError(
                f"the planted world has no generator '{generator}'; known: "
                f"{', '.join(sorted(self.truth['generator'].unique()))}"
            )
        return rows.set_index("unit_id", drop=False)

    def embedder(self):
        """The text embedder the simulated generators and CLIP condition on, computed in float64
        and stored as float32: the same bits on every CPU (a float32 forward pass differs in
        the last bits between AVX-512 and AVX2 kernels, which moved the committed outputs'
        last digits from one machine to another; docs/world.md)."""
        from implicit_bench.backends.embedders import EmbedderParams, build_embedder

        config = EmbedderParams(
            model=self.params.embedder, cache=self.params.embedding_cache, dtype="float64"
        )
        return build_embedder(config)


@cache
def load_world(world_dir: str) -> World:
    root = Path(world_dir)
    if not (root / WORLD_FILE).exists():
        raise ConfigError(f"{root}: no planted world (run the `world` stage first)")
    data = json.loads((root / WORLD_FILE).read_text(encoding="utf-8"))
    params = WorldParams.model_validate(data["params"])
    truth = pd.read_parquet(root / TRUTH_FILE)
    return World(params, truth, fingerprint(root) or "")


def unit_direction(stereo: np.ndarray, anti: np.ndarray) -> np.ndarray:
    """The unit's stereotype-minus-anti direction (unit length; zero when the texts embed alike)."""
    d = np.asarray(stereo, dtype=np.float64) - np.asarray(anti, dtype=np.float64)
    norm = np.linalg.norm(d, axis=-1, keepdims=True)
    return np.where(norm > 1e-9, d / np.maximum(norm, 1e-9), 0.0)
