"""The `clip` section of params.yaml."""

from __future__ import annotations

from pydantic import Field

from implicit_bench.backends.clip import ClipParams
from implicit_bench.backends.clip.margin import MarginCalibration
from implicit_bench.params import StrictModel
from implicit_bench.protocol.tables import IMAGES_DIR


class ClipStageParams(StrictModel):
    model: ClipParams = ClipParams()
    judge: str = "clip"
    text_template: str = "a photo of {attribute}"
    margin: float = 0.0
    image_stores: list[
        str
    ] = []  # data/images/<config> directories; empty: every store under images_root
    images_root: str = IMAGES_DIR
    cache: str = "cache/clip.sqlite"
    # CLIP-Score (HoloFair E.1): cos(image, its own prompt) per config and variant
    clip_score: bool = True
    # second CLIP models set beside `model` (When the Judge Acts T15: ViT-B/32 vs L/14):
    # name -> ClipParams; their leans and blind labels are compared, never written as judgements
    compare_models: dict[str, ClipParams] = {}
    # the blind judge's margin calibrated on a labelled set (clip/margin.py; null labels: off)
    margin_calibration: MarginCalibration = Field(default_factory=MarginCalibration)
