"""A slow fake generator and a runner for the concurrent-writers test of the image store.

``python tests/helpers/store_writers.py WORKDIR`` registers the ``slow_fake`` backend and runs the
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

from implicit_bench.backends.generators.base import GeneratorParams, RenderResult
from implicit_bench.render.images import ImageKey, ImageRecord
from tests.helpers.paths import REPO_ROOT


class SlowFakeParams(GeneratorParams):
    backend: str = "slow_fake"
    model: str = "fake"
    delay_s: float = 0.05


class SlowFake:
    """Deterministic 8x8 images, one colour per (prompt, seed), a little slow per batch."""

    Params = SlowFakeParams
    BATCH_INVARIANT = True

    def __init__(self, config: SlowFakeParams):
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
    from implicit_bench.backends.generators import GENERATORS

    GENERATORS.register("slow_fake", "tests.helpers.store_writers:SlowFake")
    root = Path(workdir)
    repo = REPO_ROOT
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


def png_bytes(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def image_record(unit: str, seed: int, status: str = "ok") -> ImageRecord:
    return ImageRecord(ImageKey("cfg", unit, "neutral", seed), "tiny", f"a photo of {unit}", status)


if __name__ == "__main__":
    main(sys.argv[1])
