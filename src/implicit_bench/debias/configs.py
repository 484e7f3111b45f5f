"""The debiasing configurations of Table 27 and the params section ``debias``.

A configuration names a registered method (``debias/methods/``: none, rewrite, steer, suffix,
...) and carries the method's own keys, validated by the method's ``Params`` model: for
rewrite and steer the stereotype information it gets (none, the retrieved unit with the own
unit removed from the KG, the own unit) and, for steering, the signal. The "retrieved unit
(full KG)" rows of Table 7 have no run of their own: they are assembled from the own-unit and
own-removed runs (``FULL_KG``, Appendix C.5).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError, model_serializer, model_validator

from implicit_bench.debias.methods import DEFAULT_READS, DebiasMethod, get_method
from implicit_bench.errors import ConfigError
from implicit_bench.params import BootstrapParams, StrictModel, format_validation_errors

_OWN_KEYS = ("exp", "method", "reads", "options")


class ConfigSpec(StrictModel):
    """One debiasing configuration (an entry of ``debias.configs``): ``exp``, ``method``,
    ``reads`` and the method's own keys, written flat in params.yaml
    (``{exp: 5, method: steer, info: removed, signal: attributes, reads: debias.alpha}``)."""

    exp: int | None = None  # experiment id of Table 27
    method: str
    # The one extra params key this configuration's DVC entry tracks: the method's ``reads``
    # (``debias.alpha`` for steering, so changing alpha re-renders exactly the steering
    # configurations; otherwise ``debias.seeds``). Checked against the method, so DVC tracking
    # cannot drift.
    reads: str = DEFAULT_READS
    options: Any = None  # the method's Params (validated from the entry's other keys)

    @model_validator(mode="before")
    @classmethod
    def _method_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "method" not in data:
            return data
        method = get_method(str(data["method"]))
        own = dict(data.get("options") or {})  # raw: the entry before validation
        own.update({k: v for k, v in data.items() if k not in _OWN_KEYS})
        try:
            options = method.Params.model_validate(own)
        except ValidationError as exc:
            raise ValueError(f"method {method.name}: {format_validation_errors(exc)}") from None
        return {**{k: v for k, v in data.items() if k in _OWN_KEYS}, "options": options}

    @model_validator(mode="after")
    def _reads(self) -> ConfigSpec:
        if self.reads != self.impl.reads:
            raise ValueError(
                f"a '{self.method}' configuration must read '{self.impl.reads}' (reads)"
            )
        return self

    @model_serializer(mode="wrap")
    def _flat(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        options = data.pop("options", None) or {}
        # an unset section default (a steering configuration's alpha) is left out
        unset = set(self.impl.section_defaults)
        return {**data, **{k: v for k, v in options.items() if not (k in unset and v is None)}}

    @property
    def impl(self) -> DebiasMethod:
        return get_method(self.method)

    @property
    def info(self) -> str:
        """The stereotype information the configuration gets (``none`` for most methods)."""
        return getattr(self.options, "info", "none")

    @property
    def signal(self) -> str | None:
        return getattr(self.options, "signal", None)

    @property
    def label(self) -> str:
        return self.impl.label(self.options)


def bind_defaults(spec: ConfigSpec, **section: Any) -> ConfigSpec:
    """``spec`` with its method's unset ``section_defaults`` keys taken from ``section`` (the
    ``debias`` section's values: a steering configuration without ``alpha`` gets
    ``debias.alpha``); other methods are returned unchanged, so they never see those keys."""
    keys = spec.impl.section_defaults
    fill = {k: section[k] for k in keys if k in section and getattr(spec.options, k) is None}
    if not fill:
        return spec
    return spec.model_copy(update={"options": spec.options.model_copy(update=fill)})


def spec(exp: int | None, method: str, **keys: Any) -> ConfigSpec:
    """A configuration in code (``reads`` follows the method)."""
    return ConfigSpec.model_validate(
        {"exp": exp, "method": method, "reads": get_method(method).reads, **keys}
    )


# All configurations of Table 27, under the names used for data/images/<config>/.
TABLE_27: dict[str, ConfigSpec] = {
    "unmodified": spec(0, "none"),
    "rewrite_no_unit": spec(1, "rewrite", info="none"),
    "rewrite_removed": spec(2, "rewrite", info="removed"),
    "rewrite_own": spec(3, "rewrite", info="own"),
    "sv_full_unit_removed": spec(4, "steer", info="removed", signal="full_unit"),
    "sv_attributes_removed": spec(5, "steer", info="removed", signal="attributes"),
    "sv_full_unit_own": spec(6, "steer", info="own", signal="full_unit"),
    "sv_attributes_own": spec(7, "steer", info="own", signal="attributes"),
    "sv_llm_pair_removed": spec(8, "steer", info="removed", signal="llm_pair"),
    "sv_llm_pair_own": spec(9, "steer", info="own", signal="llm_pair"),
    "sv_explicit_removed": spec(10, "steer", info="removed", signal="explicit"),
    "sv_explicit_own": spec(11, "steer", info="own", signal="explicit"),
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
