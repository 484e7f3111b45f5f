"""params.base_params: the `base` block read through BaseParams (strict, defaults when absent)."""

from __future__ import annotations

import pytest

from implicit_bench.errors import ConfigError
from implicit_bench.params import BaseParams, base_params


def test_absent_or_null_base_reads_the_defaults():
    for raw in ({}, {"base": None}, {"base": {}}):
        assert base_params(raw) == BaseParams(profile=None, cache_dir=None, preflight=True)


def test_the_keys_are_read():
    got = base_params({"base": {"profile": "tiny", "cache_dir": "c", "preflight": False}})
    assert (got.profile, got.cache_dir, got.preflight) == ("tiny", "c", False)


@pytest.mark.parametrize(
    ("base", "where"),
    [
        ({"profil": "tiny"}, "base.profil"),  # a typo is refused, not read as no profile
        ({"cache_dir": "  "}, "base.cache_dir"),
        ("tiny", "base"),
    ],
)
def test_a_bad_base_is_one_line_naming_the_key(base, where):
    with pytest.raises(ConfigError, match=where):
        base_params({"base": base}, "p.yaml")
