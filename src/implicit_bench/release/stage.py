"""Entry module of the release's part of the ``evaluate`` stage: the leaderboard beside the
paper (``evaluate.beside_release``; release/beside.py, docs/import.md "Beside the paper")."""

from __future__ import annotations

from implicit_bench.release.benchmark import BenchmarkParams  # noqa: F401 - for stages/select_units.py
from implicit_bench.release.beside import add_beside

__all__ = ["add_beside"]
