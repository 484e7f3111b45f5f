"""The agreement statistics of ``_util/agreement.py``, by hand and against sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from implicit_bench._util.agreement import cohen_kappa, kappa_from_counts


def test_kappa_by_hand():
    # first: s s a neither, second: s a a neither -> rows first, columns second (s, a, neither)
    table = np.array([[1, 1, 0], [0, 1, 0], [0, 0, 1]])
    # p_o = 3/4; p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16; kappa = (3/4 - 5/16) / (11/16) = 7/11
    assert cohen_kappa(table) == pytest.approx(7 / 11)
    assert cohen_kappa(np.zeros((3, 3))) is None  # no image
    assert cohen_kappa(np.array([[4, 0], [0, 0]])) is None  # one label only: p_e = 1


def test_kappa_matches_sklearn_and_is_vectorised_over_replicates():
    rng = np.random.default_rng(0)
    labels = ["s", "a", "neither"]
    reps = []
    for _ in range(5):
        a, b = rng.choice(labels, 60), rng.choice(labels, 60)
        table = confusion_matrix(a, b, labels=labels)
        assert cohen_kappa(table) == pytest.approx(cohen_kappa_score(a, b, labels=labels))
        reps.append(table.reshape(-1))
    stacked = kappa_from_counts(np.array(reps, dtype=float), 3)
    assert stacked.shape == (5,)
    assert stacked == pytest.approx([cohen_kappa(r.reshape(3, 3)) for r in reps])
