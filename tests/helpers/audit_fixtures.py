"""Tables shared by the audit tests (negation units, the option-order table)."""

from __future__ import annotations

import pandas as pd

IMAGES = [
    ("u1", "neutral"),
    ("u1", "stereotype"),
    ("u1", "anti_stereotype"),
    ("u2", "neutral"),
    ("u2", "stereotype"),
    ("u2", "anti_stereotype"),
]

J1 = [("s", "s"), ("s", "a"), ("a", "a"), ("s", "neither"), ("s", "s"), ("neither", None)]

J2 = ["s", "a", "a", "neither", None, "neither"]


def primary() -> pd.DataFrame:
    labels = {
        ("u1", "neutral"): ["s", "s", "s"],
        ("u2", "neutral"): ["s", "a", "neither"],
        ("u3", "neutral"): ["a", "a", "neither"],
        ("u1", "anti_stereotype"): ["a", "s", "a"],
        ("u2", "anti_stereotype"): ["a", "a", "a"],
        ("u3", "anti_stereotype"): ["neither"],
        ("u1", "negated_0_1"): ["s", "s", "neither"],
        ("u2", "negated_0_1"): ["a", "neither", None],
        ("u3", "negated_0_1"): ["a"],
        ("u1", "negated_1_1"): ["a", "a", "s"],
        ("u2", "negated_1_1"): ["a", "s", "a"],
        ("u3", "negated_1_1"): ["a"],
    }
    rows = [
        dict(config="c", unit_id=u, variant=v, seed=42 + 1000 * i, judge="J", label=lab)
        for (u, v), labs in labels.items()
        for i, lab in enumerate(labs)
    ]
    return pd.DataFrame(rows)


NEGATION_UNITS = pd.DataFrame(
    {"unit_id": ["u1", "u2", "u3"], "bias_type": ["gender", "race", "gender"]}
)


def order_table() -> pd.DataFrame:
    rows = []
    for (unit, variant), (sa, as_), j2 in zip(IMAGES, J1, J2, strict=True):
        for order, value in (("sa", sa), ("as", as_)):
            rows.append(
                dict(
                    unit_id=unit,
                    variant=variant,
                    seed=42,
                    config="c",
                    judge="J1",
                    task="blind",
                    value=value,
                    valid=value is not None,
                    order=order,
                    raw="x",
                )
            )
        rows.append(
            dict(
                unit_id=unit,
                variant=variant,
                seed=42,
                config="c",
                judge="J2",
                task="blind",
                value=j2,
                valid=j2 is not None,
                order="as",
                raw="x",
            )
        )
    rows.append(
        dict(
            unit_id="u1",
            variant="neutral",
            seed=42,
            config="c",
            judge="J1",
            task="rubric",
            value="3",
            valid=True,
            order=None,
            raw="3",
        )
    )
    return pd.DataFrame(rows)
