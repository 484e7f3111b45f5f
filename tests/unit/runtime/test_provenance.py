from __future__ import annotations

import pandas as pd

from implicit_bench.analysis.paper_tables import write_tables
from implicit_bench.runtime.provenance import mark_random_init, markdown_banner, provenance


def test_random_models_are_flagged_everywhere(tmp_path):
    model = tmp_path / "tiny"
    mark_random_init(model, "tiny test model")
    block = provenance(
        [("judge", str(model)), ("embedder", "sentence-transformers/all-MiniLM-L6-v2")]
    )
    assert block["random_init"] is True and block["random_init_models"] == [str(model)]
    assert "warning" in block
    assert markdown_banner(block).startswith("> **RANDOM-INIT WARNING**")
    write_tables(tmp_path / "out", {"t": pd.DataFrame({"a": [1]})}, prov=block)
    assert (
        (tmp_path / "out" / "tables" / "t.md").read_text().startswith("> **RANDOM-INIT WARNING**")
    )


def test_real_models_carry_no_banner(tmp_path):
    block = provenance([("embedder", "sentence-transformers/all-MiniLM-L6-v2")])
    assert block["random_init"] is False and markdown_banner(block) == ""
    write_tables(tmp_path / "out", {"t": pd.DataFrame({"a": [1]})}, prov=block)
    assert (tmp_path / "out" / "tables" / "t.md").read_text().startswith("|")
