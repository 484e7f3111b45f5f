from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from implicit_bench.construction.sources.params import SourcesParams
from implicit_bench.construction.sources.stage import build_pairs, load_crows_pairs, load_stereoset
from implicit_bench.errors import InputError

# Paper Table 9, "Raw upstream" column.
TABLE9_RAW = {
    "profession": 1637,
    "race": 1938,
    "gender": 759,
    "socioeconomic": 172,
    "religion": 262,
    "race-color": 516,
    "age": 87,
    "nationality": 159,
    "sexual-orientation": 84,
    "disability": 60,
    "physical-appearance": 63,
}


def test_vendored_sources_match_table9(repo_root, monkeypatch):
    monkeypatch.chdir(repo_root)
    pairs, rejects = build_pairs(
        SourcesParams(
            stereoset_sha256="f50c48efca8739c5c8478485f3e15a43a2093185084858063fec3cecf1768563",
            crows_pairs_sha256="9c0d18ec54ac61e1cb850e79dd83cbad53d2bc3874d4892e614df7fdf6bf6dc8",
        )
    )
    assert len(pairs) == 5737
    assert rejects.empty
    assert pairs["bias_type"].value_counts().to_dict() == TABLE9_RAW
    assert pairs["pair_id"].is_unique
    crows = pairs[pairs["source"] == "crows_pairs"]
    assert crows["target"].isna().all() and len(crows) == 1508


def test_checksum_mismatch_names_file(repo_root):
    with pytest.raises(InputError, match="sha256 mismatch"):
        load_stereoset(repo_root / "data/raw/stereoset/dev.json.gz", "0" * 64)


def test_bad_crows_rows_are_rejected_with_row_and_field(tmp_path):
    path = tmp_path / "crows.csv"
    pd.DataFrame(
        {
            "": [0, 1, 2],
            "sent_more": ["Poor people are lazy.", "", "Old people are slow."],
            "sent_less": ["Rich people are lazy.", "Men cry.", "Young people are slow."],
            "stereo_antistereo": ["stereo", "stereo", "sideways"],
            "bias_type": ["socioeconomic", "gender", "age"],
        }
    ).to_csv(path, index=False)
    pairs, rejects = load_crows_pairs(path)
    assert [p.pair_id for p in pairs] == ["cp-0"]
    assert [(r.row, r.field) for r in rejects] == [(2, "sent_more"), (3, "stereo_antistereo")]
    assert "crows.csv" in rejects[0].path


def test_unknown_bias_type_rejected(tmp_path):
    path = tmp_path / "crows.csv"
    pd.DataFrame(
        {
            "sent_more": ["a b"],
            "sent_less": ["a c"],
            "stereo_antistereo": ["stereo"],
            "bias_type": ["astrology"],
        }
    ).to_csv(path, index=False)
    pairs, rejects = load_crows_pairs(path)
    assert (
        not pairs and rejects[0].field == "bias_type" and "unknown bias type" in rejects[0].reason
    )


def test_stereoset_example_without_anti_sentence_is_rejected(tmp_path):
    doc = {
        "version": "1.0-dev",
        "data": {
            "intrasentence": [
                {
                    "id": "x1",
                    "target": "chess player",
                    "bias_type": "profession",
                    "context": "The chess player was BLANK.",
                    "sentences": [
                        {"sentence": "The chess player was asian.", "gold_label": "stereotype"},
                        {"sentence": "The chess player was fox.", "gold_label": "unrelated"},
                    ],
                }
            ],
            "intersentence": [],
        },
    }
    path = tmp_path / "dev.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    pairs, rejects = load_stereoset(path)
    assert not pairs
    assert rejects[0].row == "intrasentence[1]"
    assert "anti-stereotype" in rejects[0].field


def test_on_bad_row_error_raises_with_location(tmp_path, repo_root):
    path = tmp_path / "crows.csv"
    pd.DataFrame(
        {"sent_more": ["x"], "sent_less": ["y"], "stereo_antistereo": ["?"], "bias_type": ["age"]}
    ).to_csv(path, index=False)
    params = SourcesParams(
        stereoset=str(repo_root / "data/raw/stereoset/dev.json.gz"),
        crows_pairs=str(path),
        on_bad_row="error",
    )
    with pytest.raises(InputError, match=r"crows.csv, row 1, field 'stereo_antistereo'"):
        build_pairs(params)
