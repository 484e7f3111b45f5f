"""The tiny models are the same bytes on every CPU: built under ``portable_init`` in two
processes, one on torch's native (AVX-512 / AVX2) kernels and one forced onto the generic ones
(``ATEN_CPU_CAPABILITY=default``), every saved file is identical."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import torch

from implicit_bench.backends.tiny.stage import PORTABLE_FILLS, portable_init

SCRIPT = (
    "import sys\n"
    "from implicit_bench.backends.tiny.stage import build\n"
    "for kind in ('generator', 'clip', 'openclip'):\n"
    "    build(kind, f'{sys.argv[1]}/{kind}', 0)\n"
)
GENERIC = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def _digests(root) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_models_are_the_same_bytes_on_native_and_generic_kernels(tmp_path):
    for name, env in (("native", {}), ("generic", GENERIC)):
        subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path / name)],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
    native, generic = _digests(tmp_path / "native"), _digests(tmp_path / "generic")
    assert any(k.endswith(".safetensors") for k in native)
    assert native == generic


def test_fills_are_float64_draws_rounded_and_the_methods_come_back():
    originals = {name: getattr(torch.Tensor, name) for name in PORTABLE_FILLS}
    with portable_init():
        torch.manual_seed(3)
        narrow = torch.empty(40).uniform_(-0.5, 0.5)
        wide64 = torch.empty(40, dtype=torch.float64)
        torch.manual_seed(3)
        wide64.uniform_(-0.5, 0.5)  # a float64 tensor is filled as before
    torch.manual_seed(3)
    reference = torch.empty(40, dtype=torch.float64).uniform_(-0.5, 0.5)
    assert torch.equal(wide64, reference)
    assert narrow.dtype == torch.float32 and torch.equal(narrow, reference.float())
    assert {name: getattr(torch.Tensor, name) for name in PORTABLE_FILLS} == originals
