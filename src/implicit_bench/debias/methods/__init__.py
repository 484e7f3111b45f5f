"""Debiasing methods: one module each under ``debias/methods/``, found by its name.

A configuration of ``debias.configs`` names its method (``method: steer``) next to the method's
own keys (``info``, ``signal``, ...), which the method's ``Params`` model validates. The
registry maps every module of this package to ``"implicit_bench.debias.methods.<name>:METHOD"``
without importing it (a lazy :class:`implicit_bench.runtime.registry.Registry`), so adding a method
is one module (and a ``debias.configs`` entry that uses it): docs/extending.md, "Extending".

A method turns the units subset into the prompts to render (``prepare``) and may change how
they are rendered (``worker``, ``settings``: embedding steering); everything else (planning,
batching, the executor, resume, judging, scoring) is the render and judge machinery.
"""

from __future__ import annotations

import pkgutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from implicit_bench.errors import ConfigError
from implicit_bench.params import StrictModel
from implicit_bench.runtime.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from implicit_bench.backends.generators import GeneratorParams

DEFAULT_READS = "debias.seeds"
# The params key a steering configuration's render reads (tracked by its DVC foreach entry).
ALPHA_KEY = "debias.alpha"


class NoParams(StrictModel):
    """A method without keys of its own."""


@dataclass(frozen=True)
class MethodInputs:
    """What a method may read: the units subset it renders, the whole KG, and the outputs of
    the retrieve and rewrite stages (None when absent)."""

    subset: pd.DataFrame
    kg: pd.DataFrame
    rewrites: pd.DataFrame | None = None
    pairs: pd.DataFrame | None = None
    retrieval: pd.DataFrame | None = None


@dataclass
class Prepared:
    """The prompt to render per unit, an optional payload per unit handed to the method's
    worker (steering texts), and the units left out with the reason."""

    prompts: dict[str, str]
    payloads: dict[str, Any] = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class LlmWork:
    """What the rewrite stage must write for a configuration: rewrites with this stereotype
    information, LLM sentence pairs for this information (None: nothing)."""

    rewrite: str | None = None
    pairs: str | None = None


class DebiasMethod:
    """One debiasing method. Subclasses set ``name``, ``Params`` and ``label``, and override
    ``prepare`` (and, to change the rendering itself, ``worker`` / ``settings``)."""

    name: ClassVar[str]
    Params: ClassVar[type[StrictModel]] = NoParams
    reads: ClassVar[str] = DEFAULT_READS  # the one extra params key its DVC entry tracks
    # Keys of its ``Params`` that a configuration may leave unset (None) and that the ``debias``
    # section then fills in from its key of the same name (steer: ``alpha`` <- ``debias.alpha``).
    section_defaults: ClassVar[tuple[str, ...]] = ()

    def label(self, params: Any) -> str:
        """The row label in Table 7."""
        return self.name

    def prepare(self, params: Any, inputs: MethodInputs) -> Prepared:
        """The prompt to render for each unit of the subset (default: its neutral prompt)."""
        return Prepared(
            dict(zip(inputs.subset["unit_id"], inputs.subset["prompt_neutral"], strict=True))
        )

    def llm_work(self, params: Any) -> LlmWork:
        return LlmWork()

    def check_generator(
        self, config_name: str, generator_cls: type, generator_name: str, backend: str
    ) -> None:
        """Raise ConfigError when the generator cannot render this method."""
        return None

    def settings(self, params: Any, base: str, payloads: dict[str, Any]) -> str:
        """The image settings hash (default: the generator's): a change re-renders on resume."""
        return base

    def worker(self, params: Any, generator_config: GeneratorParams) -> Callable[[], Any] | None:
        """An executor worker factory, or None for the render stage's own worker."""
        return None

    def describe(self, params: Any) -> dict[str, Any]:
        """The configuration's keys in the render summary and metrics/debias.json."""
        return {"info": getattr(params, "info", "none"), "signal": getattr(params, "signal", None)}


METHODS: Registry[DebiasMethod] = Registry("debias method")
for _module in pkgutil.iter_modules(__path__):
    METHODS.register(_module.name, f"{__name__}.{_module.name}:METHOD")

_INSTANCES: dict[str, DebiasMethod] = {}


def get_method(name: str) -> DebiasMethod:
    """The method ``name`` (its module imported on first use)."""
    if name not in _INSTANCES:
        if name not in METHODS.names():
            raise ConfigError(
                f"unknown debias method '{name}'; known: {', '.join(METHODS.names())}"
            )
        cls = METHODS.resolve(name)
        if not (isinstance(cls, type) and issubclass(cls, DebiasMethod)):
            raise ConfigError(f"debias method '{name}': METHOD is not a DebiasMethod class")
        _INSTANCES[name] = cls()
    return _INSTANCES[name]


__all__ = [
    "ALPHA_KEY",
    "DEFAULT_READS",
    "METHODS",
    "DebiasMethod",
    "LlmWork",
    "MethodInputs",
    "NoParams",
    "Prepared",
    "get_method",
]
