"""The `report` section of params.yaml."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from implicit_bench.params import NonNegInt, PositiveInt, StrictModel
from implicit_bench.protocol.tables import (
    DEBIAS_IMAGES_DIR,
    DEBIAS_JUDGEMENTS_DIR,
    IMAGES_DIR,
    JUDGEMENTS_DIR,
    SELECTED_UNITS_PATH,
    UNITS_PATH,
)


class ReportParams(StrictModel):
    """``report`` section of params.yaml."""

    units: str = UNITS_PATH
    selected_units: str = SELECTED_UNITS_PATH
    judgements: list[str] = [f"{JUDGEMENTS_DIR}/*.parquet", f"{DEBIAS_JUDGEMENTS_DIR}/*.parquet"]
    image_roots: list[str] = [IMAGES_DIR, DEBIAS_IMAGES_DIR]
    metrics_dir: str = "metrics"
    plots_dir: str = "plots"
    dvc_file: str = "dvc.yaml"
    out: str = "report"
    # configurations whose three variants form the benchmark images; empty = every store that
    # holds stereotype or anti-stereotype images. Other stores are shown as debiasing configs.
    base_configs: list[str] = []
    thumb_size: PositiveInt = 192
    thumb_quality: Annotated[int, Field(ge=1, le=100)] = 80
    units_per_page: PositiveInt = 20
    chunk_size: PositiveInt = 50
    rubric_gap: NonNegInt = 3  # two rubric scores of one image this far apart = judges disagree
