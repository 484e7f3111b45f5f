"""Units of the simulated world shared by the correction and recovery tests."""

from __future__ import annotations

import pandas as pd


def world_units(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "unit_id": f"u{i}",
                "source": "x",
                "bias_type": "gender",
                "head": "nurse",
                "relation": None,
                "stereotype": f"kind{i}",
                "anti_stereotype": f"rude{i}",
                "prompt_neutral": "a photo of a nurse",
            }
            for i in range(n)
        ]
    )
