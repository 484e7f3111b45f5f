"""The simulated world's embedder gives the same float32 vectors on every CPU: computed in
float64, its bits do not depend on which kernels torch picks (AVX-512 or AVX2); forced onto
the AVX2 / generic kernels here with ``ATEN_CPU_CAPABILITY=default`` (docs/world.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from implicit_bench.backends.embedders import CachedEmbedder
from implicit_bench.backends.embedders.base import EmbedderParams

TEXTS = [f"a photo of {w}" for w in ("a nurse", "an engineer", "an old man", "a young girl")]
SCRIPT = (
    "import sys, numpy as np\n"
    "from implicit_bench.backends.embedders.base import EmbedderParams\n"
    "from implicit_bench.backends.embedders.st import SentenceTransformerEmbedder\n"
    "dtype = None if sys.argv[1] == 'none' else sys.argv[1]\n"
    "e = SentenceTransformerEmbedder(EmbedderParams(dtype=dtype))\n"
    f"np.save(sys.argv[2], e.embed({TEXTS!r}))\n"
)
GENERIC = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def _vectors(tmp_path, dtype: str, env: dict[str, str]) -> np.ndarray:
    out = tmp_path / f"{dtype}-{len(env)}.npy"
    subprocess.run(
        [sys.executable, "-c", SCRIPT, dtype, str(out)],
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2" if env else "ALL", **env},
        check=True,
        capture_output=True,
    )
    return np.load(out)


def test_float64_vectors_are_the_same_bits_on_the_generic_kernels(tmp_path):
    native = _vectors(tmp_path, "float64", {})
    generic = _vectors(tmp_path, "float64", GENERIC)
    assert native.dtype == np.float32 and native.shape == (4, 384)
    assert np.array_equal(native, generic)


def test_the_precision_is_part_of_the_cache_key_only_when_set(tmp_path):
    cache = str(tmp_path / "e.sqlite")
    plain = CachedEmbedder(EmbedderParams(cache=cache)).key("x")
    again = CachedEmbedder(EmbedderParams(cache=cache, dtype=None)).key("x")
    wide = CachedEmbedder(EmbedderParams(cache=cache, dtype="float64")).key("x")
    assert plain == again  # caches written before the option keep their keys
    assert wide != plain
