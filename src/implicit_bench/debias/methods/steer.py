"""Method ``steer``: embedding steering of the neutral prompt (Table 27, exp 4-11).

The neutral prompt is encoded with the generator's own encoder and shifted by ``alpha * d``
(``implicit_bench.debias.steering``), where ``d`` comes from two texts of a unit (the own unit
or the one retrieved with the own unit removed): its full unit, its attributes, the LLM
sentence pair (rewrite stage) or its explicit prompts. Needs a generator with a
prompt-encoder hook (``encode`` / ``generate_encoded``). The strength ``alpha`` is this method's
own key: a configuration may set it, else it is ``debias.alpha`` (filled in when the ``debias``
section is validated), and the configuration's DVC entry tracks that key (``reads: debias.alpha``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from implicit_bench._util.hashing import stable_hash
from implicit_bench.debias.methods import ALPHA_KEY, DebiasMethod, LlmWork, MethodInputs, Prepared
from implicit_bench.errors import ConfigError
from implicit_bench.params import StrictModel

if TYPE_CHECKING:
    from implicit_bench.backends.generators import GeneratorParams

Signal = Literal["full_unit", "attributes", "llm_pair", "explicit"]
SIGNALS: tuple[str, ...] = ("full_unit", "attributes", "llm_pair", "explicit")
SIGNAL_LABELS: dict[str, str] = {
    "full_unit": "SV full unit",
    "attributes": "SV attributes",
    "llm_pair": "SV LLM pair",
    "explicit": "SV explicit prompts",
}


class SteerParams(StrictModel):
    info: Literal["removed", "own"]  # the unit whose texts give the direction
    signal: Signal
    # steering strength; None: ``debias.alpha`` (``DebiasParams`` fills it in)
    alpha: Annotated[float, Field(allow_inf_nan=False)] | None = None

    def strength(self) -> float:
        if self.alpha is None:
            raise ConfigError("steering configuration without alpha (validate the debias section)")
        return float(self.alpha)


class Steer(DebiasMethod):
    name = "steer"
    Params = SteerParams
    reads = ALPHA_KEY
    section_defaults = ("alpha",)

    def label(self, params: SteerParams) -> str:
        return SIGNAL_LABELS[params.signal]

    def llm_work(self, params: SteerParams) -> LlmWork:
        return LlmWork(pairs=params.info if params.signal == "llm_pair" else None)

    def prepare(self, params: SteerParams, inputs: MethodInputs) -> Prepared:
        from implicit_bench.debias.steering import steering_texts  # torch: imported on use
        from implicit_bench.debias.units import unit_for

        out = super().prepare(params, inputs)
        by_id = {r["unit_id"]: r for r in inputs.kg.to_dict("records")}
        pair_of: dict[str, tuple[str, str]] = {}
        if inputs.pairs is not None:
            pair_of = {
                r.unit_id: (r.stereotype_prompt, r.anti_stereotype_prompt)
                for r in inputs.pairs.itertuples()
                if bool(r.valid)
            }
        for unit in list(out.prompts):
            source = unit_for(params.info, unit, inputs.retrieval)
            if params.signal == "llm_pair" and source not in pair_of:
                out.skipped["LLM pair invalid or missing"] += 1
                del out.prompts[unit]
                continue
            out.payloads[unit] = steering_texts(by_id[source], params.signal, pair_of.get(source))
        return out

    def check_generator(
        self, config_name: str, generator_cls: type, generator_name: str, backend: str
    ) -> None:
        if not hasattr(generator_cls, "encode"):
            raise ConfigError(
                f"debias config '{config_name}' steers prompt embeddings, "
                f"but generator '{generator_name}' "
                f"(backend {backend}) has no prompt-encoder hook; use a diffusers pipeline"
            )

    def settings(self, params: SteerParams, base: str, payloads: dict[str, Any]) -> str:
        return steering_settings(base, params, payloads)

    def worker(self, params: SteerParams, generator_config: GeneratorParams) -> Callable[[], Any]:
        return functools.partial(_steer_worker, generator_config, params.signal, params.strength())

    def describe(self, params: SteerParams) -> dict[str, Any]:
        return {**super().describe(params), "alpha": params.strength()}


def steering_settings(base: str, params: SteerParams, texts: dict[str, tuple[str, str]]) -> str:
    """The settings hash of a steering configuration: a changed alpha, signal or steering text
    re-renders its images on resume."""
    return stable_hash(
        {
            "generator": base,
            "signal": params.signal,
            "info": params.info,
            "alpha": params.strength(),
            "texts": sorted(texts.items()),
        },
        length=16,
    )


def _steer_worker(
    config: GeneratorParams, signal: str, alpha: float
) -> Callable[[list[Any]], list[Any]]:
    """Executor worker factory: load the generator once; each batch is encoded with the
    generator's own encoder, steered, and generated from the edited encodings."""
    import torch

    from implicit_bench.backends.generators import RenderResult, create_generator
    from implicit_bench.debias.steering import direction, split_batch, steer

    generator = create_generator(config)

    def run(requests: Sequence[Any]) -> list[Any]:
        neutral = generator.encode([r.prompt for r in requests])
        stereo = split_batch(*_tensors(generator.encode([r.payload[0] for r in requests])))
        anti = split_batch(*_tensors(generator.encode([r.payload[1] for r in requests])))
        steered = [
            steer(n, direction(signal, n, s, a), alpha)
            for n, s, a in zip(split_batch(*_tensors(neutral)), stereo, anti, strict=True)
        ]
        neutral.embeds = torch.stack([e.embeds for e in steered])
        if hasattr(neutral, "item_ids"):  # simulated generators draw per image (docs/world.md)
            neutral.item_ids = [r.item_id for r in requests]
        images = generator.generate_encoded(neutral, [r.seed for r in requests])
        return [
            RenderResult.from_image(image)
            if image is not None
            else RenderResult.refused("refused by the generator")
            for image in images
        ]

    return run


def _tensors(encoding: Any) -> tuple[Any, Any]:
    return encoding.embeds, encoding.mask


METHOD = Steer
