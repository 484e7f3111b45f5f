"""A slow fake generator and a runner for the concurrent-writers test of the image store.

``python tests/store_writers.py WORKDIR`` registers the ``slow_fake`` backend and runs the
real ``render`` stage script (params, units and images under WORKDIR).
"""

from __future__ import annotations

import hashlib
import io
import runpy
import sys
import time
from pathlib import Path

from PIL import Image

from implicit_bench.generators.base import GeneratorConfig, RenderResult


class SlowFakeConfig(GeneratorConfig):
    backend: str = "slow_fake"
    model: str = "fake"
    delay_s: float = 0.05


class SlowFake:
    """Deterministic 8x8 images, one colour per (prompt, seed), a little slow per batch."""

    Config = SlowFakeConfig
    BATCH_INVARIANT = True

    def __init__(self, config: SlowFakeConfig):
        self.config = config

    @property
    def name(self) -> str:
        return "slow_fake:fake"

    def generate(self, requests):
        time.sleep(self.config.delay_s)
        out = []
        for r in requests:
            rgb = hashlib.sha256(f"{r.prompt}|{r.seed}".encode()).digest()[:3]
            buf = io.BytesIO()
            Image.new("RGB", (8, 8), tuple(rgb)).save(buf, format="PNG")
            out.append(RenderResult("ok", buf.getvalue(), None, 8, 8))
        return out

    def close(self) -> None:
        pass


def main(workdir: str) -> None:
    from implicit_bench.generators import GENERATORS

    GENERATORS.register("slow_fake", "store_writers:SlowFake")
    root = Path(workdir)
    repo = Path(__file__).resolve().parents[1]
    sys.argv = [
        "render",
        "--params",
        str(root / "params.yaml"),
        "--units",
        str(root / "units.parquet"),
        "--images",
        str(root / "images"),
        "--metrics",
        str(root / f"render-{sys.argv[2]}.json"),
    ]
    runpy.run_path(str(repo / "stages" / "render.py"), run_name="__main__")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main(sys.argv[1])
