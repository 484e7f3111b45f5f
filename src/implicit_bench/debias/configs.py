"""The debiasing configurations of Table 27 and the params section ``debias``.

A configuration is a method (none, rewrite, steer), the stereotype information it gets
(none, the retrieved unit with the own unit removed from the KG, the own unit) and, for
steering, the signal. The "retrieved unit (full KG)" rows of Table 7 have no run of their own:
they are assembled from the own-unit and own-removed runs (``FULL_KG``, Appendix C.5).
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from implicit_bench.errors import ConfigError
from implicit_bench.params import BootstrapParams, StrictModel

Method = Literal["none", "rewrite", "steer"]
Info = Literal["none", "removed", "own"]
Signal = Literal["full_unit", "attributes", "llm_pair", "explicit"]

SIGNALS: tuple[str, ...] = ("full_unit", "attributes", "llm_pair", "explicit")
SIGNAL_LABELS: dict[str, str] = {
    "full_unit": "SV full unit",
    "attributes": "SV attributes",
    "llm_pair": "SV LLM pair",
    "explicit": "SV explicit prompts",
}
# The params key a steering configuration's render reads (tracked by its DVC foreach entry).
ALPHA_KEY = "debias.alpha"
DEFAULT_READS = "debias.seeds"


class ConfigSpec(StrictModel):
    """One debiasing configuration (an entry of ``debias.configs``)."""

    exp: int | None = None  # experiment id of Table 27
    method: Method
    info: Info = "none"
    signal: Signal | None = None
    # The one extra params key this configuration's DVC entry tracks: ``debias.alpha`` for
    # steering (so changing alpha re-renders exactly the steering configurations), otherwise
    # ``debias.seeds``. Checked against the method, so DVC tracking cannot drift.
    reads: str = DEFAULT_READS

    @model_validator(mode="after")
    def _consistent(self) -> ConfigSpec:
        if self.method == "steer":
            if self.signal is None:
                raise ValueError("a steering configuration needs a signal")
            if self.info == "none":
                raise ValueError("steering needs a unit: info must be 'removed' or 'own'")
            if self.reads != ALPHA_KEY:
                raise ValueError(f"a steering configuration must read '{ALPHA_KEY}' (reads)")
        else:
            if self.signal is not None:
                raise ValueError(f"method '{self.method}' takes no signal")
            if self.reads == ALPHA_KEY:
                raise ValueError(f"only steering configurations read '{ALPHA_KEY}'")
        if self.method == "none" and self.info != "none":
            raise ValueError("the unmodified configuration takes no unit")
        return self

    @property
    def label(self) -> str:
        return {"none": "Unmodified", "rewrite": "Rewrite"}.get(self.method) or SIGNAL_LABELS[
            self.signal or ""
        ]


def _steer(exp: int, info: Info, signal: Signal) -> ConfigSpec:
    return ConfigSpec(exp=exp, method="steer", info=info, signal=signal, reads=ALPHA_KEY)


# All configurations of Table 27, under the names used for data/images/<config>/.
TABLE_27: dict[str, ConfigSpec] = {
    "unmodified": ConfigSpec(exp=0, method="none"),
    "rewrite_no_unit": ConfigSpec(exp=1, method="rewrite", info="none"),
    "rewrite_removed": ConfigSpec(exp=2, method="rewrite", info="removed"),
    "rewrite_own": ConfigSpec(exp=3, method="rewrite", info="own"),
    "sv_full_unit_removed": _steer(4, "removed", "full_unit"),
    "sv_attributes_removed": _steer(5, "removed", "attributes"),
    "sv_full_unit_own": _steer(6, "own", "full_unit"),
    "sv_attributes_own": _steer(7, "own", "attributes"),
    "sv_llm_pair_removed": _steer(8, "removed", "llm_pair"),
    "sv_llm_pair_own": _steer(9, "own", "llm_pair"),
    "sv_explicit_removed": _steer(10, "removed", "explicit"),
    "sv_explicit_own": _steer(11, "own", "explicit"),
}

FULL_KG_SUFFIX = "_full_kg"


def full_kg_pairs(configs: dict[str, ConfigSpec]) -> dict[str, tuple[str, str]]:
    """Derived full-KG rows: name -> (own-unit config, own-removed config), for every
    (method, signal) whose own and removed configurations are both declared."""
    by_key: dict[tuple[str, str | None, str], str] = {
        (c.method, c.signal, c.info): name for name, c in configs.items()
    }
    pairs: dict[str, tuple[str, str]] = {}
    for (method, signal, info), own in sorted(by_key.items(), key=lambda kv: kv[1]):
        if info != "own":
            continue
        removed = by_key.get((method, signal, "removed"))
        if removed is None:
            continue
        stem = own[: -len("_own")] if own.endswith("_own") else own
        pairs[stem + FULL_KG_SUFFIX] = (own, removed)
    return pairs


class ScoringParams(StrictModel):
    """Which judgements the composite score uses."""

    unmodified: str = "unmodified"  # the configuration delta S is taken against
    rubric_judge: str | None = None  # None: the only judge with rubric rows
    alignment_judge: str | None = None  # None: the only judge with alignment rows
    # the top-level bootstrap block with n 2,000 (the paired bootstrap of dS; params.yaml sets it)
    bootstrap: BootstrapParams = BootstrapParams(n=2000)
    # `implicit-bench analyze` only: a retrieval table (unit_id, own_hit) for the full-KG rows
    retrieval: str | None = None


def check_configs(configs: dict[str, ConfigSpec], unmodified: str) -> None:
    if unmodified not in configs:
        raise ConfigError(
            f"debias.unmodified '{unmodified}' is not one of debias.configs: {', '.join(configs)}"
        )
    clashes = set(configs) & set(full_kg_pairs(configs))
    if clashes:
        raise ConfigError(f"configuration names clash with derived full-KG rows: {sorted(clashes)}")
