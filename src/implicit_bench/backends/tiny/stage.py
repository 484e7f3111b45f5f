"""Tiny randomly initialised models, built locally from configs (nothing is downloaded).

Each kind is one module ``implicit_bench.backends.tiny.<kind>`` with ``build(out_dir, seed) ->
None``
that saves a model loadable through the same code path users use for hub ids or local
directories, and marks it with ``provenance.mark_random_init``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# generator / vlm / clip / llm: the default profile's tiny models; the rest: the `tiny`
# profile's (profiles/tiny.yaml), one per paper model, each of the paper model's architecture.
KINDS: tuple[str, ...] = (
    "generator", "vlm", "clip", "llm",
    "qwen_image", "sd3", "qwen3vl", "gemma3", "openclip", "qwen3_embedding",
)  # fmt: skip


#: the in-place random fills whose float32 kernels differ between CPUs (the vectorised AVX-512,
#: AVX2 and generic variants draw or scale the same seed's values into other last bits)
PORTABLE_FILLS = ("normal_", "uniform_", "erfinv_")
#: the random factories of the same kernels (open_clip draws its embeddings with torch.randn)
PORTABLE_FACTORIES = ("randn", "rand")


@contextmanager
def portable_init() -> Iterator[None]:
    """Random initialisation with the same bits on every CPU: a float32 ``normal_``, ``uniform_``
    (``kaiming_uniform_``), ``erfinv_`` (``trunc_normal_``), ``torch.randn`` or ``torch.rand``
    is computed in float64, whose
    results agree on every CPU to far below float32's precision, and rounded to float32.
    Without it the models of a clean ``dvc repro`` hash differently on an AVX2 machine than on
    an AVX-512 one (measured with ``ATEN_CPU_CAPABILITY=default``;
    tests/unit/backends/tiny/test_portable_init.py)."""
    import torch

    originals = {name: getattr(torch.Tensor, name) for name in PORTABLE_FILLS}

    def portable(name: str):
        original = originals[name]

        def fill(self, *args, **kwargs):
            if self.dtype != torch.float32:
                return original(self, *args, **kwargs)
            with torch.no_grad():
                wide = self.detach().to(torch.float64)
                original(wide, *args, **kwargs)
                self.copy_(wide)
            return self

        return fill

    factories = {name: getattr(torch, name) for name in PORTABLE_FACTORIES}

    def portable_factory(name: str):
        original = factories[name]

        def draw(*size, dtype=None, requires_grad=False, **kwargs):
            narrow = (dtype or torch.get_default_dtype()) == torch.float32
            if not narrow or "out" in kwargs:
                return original(*size, dtype=dtype, requires_grad=requires_grad, **kwargs)
            wide = original(*size, dtype=torch.float64, **kwargs)
            return wide.to(torch.float32).requires_grad_(requires_grad)

        return draw

    try:
        for name in PORTABLE_FILLS:
            setattr(torch.Tensor, name, portable(name))
        for name in PORTABLE_FACTORIES:
            setattr(torch, name, portable_factory(name))
        yield
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)
        for name, original in factories.items():
            setattr(torch, name, original)


def build(kind: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Build the tiny model of ``kind`` into ``out_dir`` (under :func:`portable_init`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown tiny model kind '{kind}'; known: {', '.join(KINDS)}")
    module = importlib.import_module(f"implicit_bench.backends.tiny.{kind}")
    out = Path(out_dir)
    with portable_init():
        module.build(out, seed)
    return out
