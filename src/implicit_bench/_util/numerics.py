"""Model numbers that do not depend on batch, cache history or thread count.

- ``exact_threads``: a CPU forward pass of an exact embedder runs on one torch thread (the
  split of a reduction over threads changes its last bits), restored afterwards.
- ``similarity`` / ``similarities``: cosine similarities of float32 vectors as float64 dot
  products (each product of two float32 values is exact in float64), rounded to
  ``SIM_DECIMALS`` decimals, so the remaining summation-order noise (~1e-16) does not show;
  retrieval ranks and picks on these rounded scores (a tie goes to the earlier KG unit).

docs/contracts.md ("Batch- and history-invariant numbers") names the choices.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

SIM_DECIMALS = 9  # similarities kept to 1e-9: far above float64 summation noise (~1e-16)


@contextmanager
def exact_threads(device: str | None) -> Iterator[None]:
    """One torch intra-op thread while the block runs on the CPU (any other device: as is)."""
    if device not in (None, "cpu") and not str(device).startswith("cpu"):
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def similarities(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """``queries @ documents.T`` of float32 rows in float64, rounded to ``SIM_DECIMALS``."""
    q = np.asarray(queries, np.float32).astype(np.float64)
    d = np.asarray(documents, np.float32).astype(np.float64)
    return np.round(q @ d.T, SIM_DECIMALS)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """One similarity as ``similarities`` computes it."""
    return float(similarities(np.asarray(a)[None, :], np.asarray(b)[None, :])[0, 0])
