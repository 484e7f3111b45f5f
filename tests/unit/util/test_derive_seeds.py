"""``hashing.derive_seeds`` gives ``derive_seed``'s seeds, id by id, for any string id."""

from __future__ import annotations

import pytest

from implicit_bench._util.hashing import derive_seed, derive_seeds

IDS = ["u00001", "", 'quote " and \\ backslash', "naïve ☃ 🙂", "line\nbreak", "a" * 500, "0"]


@pytest.mark.parametrize("prefix", [42, 0, -7, 2**62, "stream/a", "ü"])
def test_derive_seeds_equal_derive_seed(prefix):
    assert derive_seeds(prefix, IDS) == [derive_seed(prefix, i) for i in IDS]
    assert derive_seeds(prefix, IDS, bits=31) == [derive_seed(prefix, i, bits=31) for i in IDS]
