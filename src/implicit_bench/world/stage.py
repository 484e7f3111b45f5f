"""Entry of the ``world`` stage: plant the simulated world's truth for the planned units."""

from __future__ import annotations

from implicit_bench.world.model import TRUTH_FILE, WORLD_FILE
from implicit_bench.world.params import WorldParams
from implicit_bench.world.truth import plant, world_json

__all__ = ["TRUTH_FILE", "WORLD_FILE", "WorldParams", "plant", "world_json"]
