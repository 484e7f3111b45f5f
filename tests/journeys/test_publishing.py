"""Journey: publishing results (docs/publishing.md), typed as written into a fresh clone: the
committed default-profile outputs exported as Every Eval Ever records and Hugging Face eval
results, and the records read back into the report's leaderboard beside the run itself."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.helpers.journey_recipes import EXPORT_EEE, EXPORT_HF, REPORT_EEE
from tests.helpers.journeys import Journey, fresh_clone

pytestmark = pytest.mark.journey


def test_publishing(tmp_path):
    from implicit_bench.publish.schema import AGGREGATE, schema

    clone = fresh_clone(tmp_path)
    journey = Journey("publishing", clone)
    exported = journey.type(EXPORT_EEE)
    assert "2 records (schema valid)" in exported.stdout, exported.stdout
    records = sorted((clone / "published/eee/data/implicit-bench").rglob("*.json"))
    assert len(records) == 2
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validate(record, schema(AGGREGATE))  # the published schema itself
        text = path.read_text(encoding="utf-8")
        assert str(tmp_path) not in text and "/root" not in text  # no machine path

    journey.type(EXPORT_HF)
    card = yaml.safe_load(
        (clone / "published/card/.eval_results/implicit-bench.yaml").read_text(encoding="utf-8")
    )
    assert card, "no eval results written"

    shown = journey.type(REPORT_EEE)
    journey.record()
    assert "this run, My Lab (EEE)" in shown.stdout
    html = (clone / "published/site/index.html").read_text(encoding="utf-8")
    assert 'id="leaderboard"' in html and "My Lab (EEE)" in html
