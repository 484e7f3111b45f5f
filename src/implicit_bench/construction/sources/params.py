"""The `sources` section of params.yaml."""

from __future__ import annotations

from implicit_bench.params import StrictModel


class SourcesParams(StrictModel):
    stereoset: str = "data/raw/stereoset/dev.json.gz"
    stereoset_sha256: str | None = None
    crows_pairs: str = "data/raw/crows_pairs/crows_pairs_anonymized.csv.gz"
    crows_pairs_sha256: str | None = None
    on_bad_row: str = "reject"  # reject: write to the rejects file and go on | error: stop
