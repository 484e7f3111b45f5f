"""Backend ``sim``: a simulated text-to-image generator of the planted world (docs/world.md).

It conditions on a real text embedding of its prompt (all-MiniLM-L6-v2): on a neutral
prompt the log-odds of showing the stereotype move by ``steer_sensitivity`` times the shift of
the prompt embedding's projection onto the unit's stereotype-minus-anti direction, measured
from the unit's planned neutral prompt. Rewritten prompts (through ``generate``) and steered
embeddings (through ``encode`` / ``generate_encoded``, the debias steering hook) therefore
change what it draws. Explicit and negated variants follow their planted probabilities.

The unit an image belongs to comes from the request's item id (``config/unit/variant/seed``):
the simulated generator knows which unit's attribute pair it draws (a simulation device).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import model_validator

from implicit_bench._util.hashing import derive_seed
from implicit_bench.backends.generators.base import GeneratorParams, RenderRequest, RenderResult
from implicit_bench.errors import InputError
from implicit_bench.params import PositiveInt
from implicit_bench.protocol.tables import WORLD_DIR
from implicit_bench.world.model import World, fingerprint, load_world, sim_name, unit_direction
from implicit_bench.world.params import CLASSES
from implicit_bench.world.picture import Shown, draw
from implicit_bench.world.sampling import AGE_GROUPS, GENDERS, image_uniforms, outcomes, tilt
from implicit_bench.world.scm import is_scm_unit, plant_scm

SHIFTED_VARIANTS = frozenset({"neutral"})
DRAW_VERSION = 2  # bump when the pictures of a planted world change


class SimGeneratorParams(GeneratorParams):
    # the world's folder: its content is in the hash through ``world_fingerprint``
    runtime_keys: ClassVar[frozenset[str]] = GeneratorParams.runtime_keys | {"world"}

    backend: Literal["sim"] = "sim"
    model: str  # sim:<world.generators entry>
    world: str = WORLD_DIR
    batch_size: PositiveInt = 32
    world_fingerprint: str | None = None  # filled from the world's files: new world, new images
    version: int = (
        DRAW_VERSION  # the drawing code's version: a new version re-renders (settings hash)
    )

    @model_validator(mode="before")
    @classmethod
    def _fingerprint(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("world_fingerprint") is None:
            data = {**data, "world_fingerprint": fingerprint(data.get("world", WORLD_DIR))}
        return data


@dataclass
class SimEncoding:
    """The sim generator's prompt encoding: one token per prompt (the sentence embedding),
    ``embeds`` (B, 1, D) float32, ``mask`` (B, 1); ``item_ids`` name the images to draw."""

    embeds: Any
    mask: Any
    prompts: list[str]
    item_ids: list[str] | None = field(default=None)

    def __len__(self) -> int:
        return int(self.embeds.shape[0])


def parse_item_id(item_id: str) -> tuple[str, str, str, int]:
    """``config/unit/variant/seed`` -> its parts (unit ids may contain '/')."""
    parts = item_id.split("/")
    if len(parts) < 4:
        raise InputError("render request", item_id, "item_id", "expected config/unit/variant/seed")
    return parts[0], "/".join(parts[1:-2]), parts[-2], int(parts[-1])


class SimGenerator:
    Params = SimGeneratorParams

    def __init__(self, config: SimGeneratorParams):

        self.config = config
        self.world: World = load_world(config.world)
        self.gen_name = sim_name(config.model)
        self.spec = self.world.params.generators[self.gen_name]
        self.rows = self.world.rows(self.gen_name)
        self.embedder = self.world.embedder()
        self._dirs: dict[str, tuple[np.ndarray, float]] = {}
        self._probs = {
            uid: row for uid, row in zip(self.rows.index, self.rows.to_dict("records"), strict=True)
        }
        self._prepare_directions()

    @property
    def name(self) -> str:
        return f"sim:{self.gen_name}"

    # ----- the unit's direction -----------------------------------------------------------
    def _unit(self, unit_id: str, item_id: str) -> dict[str, Any]:
        if unit_id not in self._probs and is_scm_unit(unit_id):  # planted on demand
            rows = plant_scm([unit_id], self.world.params)
            row = rows[rows["generator"] == self.gen_name].to_dict("records")[0]
            self._probs[unit_id] = row
        if unit_id not in self._probs:
            raise InputError(
                "render request", item_id, "unit_id", "not a unit of the planted world"
            )
        return self._probs[unit_id]

    def _prepare_directions(self) -> None:
        """Every unit's direction in one embedding batch."""
        rows = self.rows
        texts = list(
            dict.fromkeys([*rows["stereotype"], *rows["anti_stereotype"], *rows["prompt_neutral"]])
        )
        vectors = dict(zip(texts, self.embedder.embed(texts), strict=True)) if texts else {}
        for uid, s, a, n in zip(
            rows.index,
            rows["stereotype"],
            rows["anti_stereotype"],
            rows["prompt_neutral"],
            strict=True,
        ):
            d = unit_direction(vectors[s], vectors[a])
            self._dirs[uid] = (d, float(np.dot(vectors[n], d)))

    def direction(self, unit_id: str) -> tuple[np.ndarray, float]:
        """(unit direction, projection of the unit's planned neutral prompt on it)."""
        return self._dirs[unit_id]

    def shift(self, unit_id: str, variant: str, embedding: np.ndarray | None) -> float:
        """Log-odds shift of s vs a for an image drawn from ``embedding`` (None: the unit's
        planned prompt, shift 0)."""
        if variant not in SHIFTED_VARIANTS or embedding is None or is_scm_unit(unit_id):
            return 0.0
        d, ref = self.direction(unit_id)
        return self.world.params.steer_sensitivity * (float(np.dot(embedding, d)) - ref)

    # ----- drawing ------------------------------------------------------------------------
    def draw_one(self, item_id: str, embedding: np.ndarray | None) -> RenderResult:
        _, unit_id, variant, seed = parse_item_id(item_id)
        row = self._unit(unit_id, item_id)
        shift = self.shift(unit_id, variant, embedding)
        probs = tilt(np.array([[row[f"{variant}_{c}"] for c in CLASSES]], dtype=float), shift)
        off = min(0.95, self.spec.off_prompt + self.spec.off_prompt_per_shift * abs(shift))
        ages = np.array([[row["p_young"], row["p_middle"], row["p_elderly"]]], dtype=float)
        u = image_uniforms(self.world.params.seed, self.gen_name, unit_id, variant, seed)
        out = outcomes(
            probs, np.array([row["refusal"]]), np.array([off]), np.array([row["p_female"]]), ages, u
        )
        if bool(out.refused[0]):
            return RenderResult.refused(f"simulated refusal ({row['bias_type']})")
        shown_class = int(out.shown[0])
        attribute = {0: str(row["shown_s"]), 1: str(row["shown_a"])}.get(shown_class, "")
        missing = bool(out.off_prompt[0])
        shown = Shown(
            attribute=attribute,
            head="" if missing else str(row.get("subject") or row["head"]),
            gender="" if missing else GENDERS[int(out.gender[0])],
            age="" if missing else AGE_GROUPS[int(out.age[0])],
            noise=derive_seed(
                "world-noise", self.world.params.seed, self.gen_name, unit_id, variant, seed
            )
            & 0xFFFFFFFF,
        )
        return RenderResult.from_image(draw(shown, tuple(self.spec.background)))

    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        """Only prompts that can shift the draw are embedded: a neutral-variant prompt other than
        the unit's planned neutral prompt (a rewrite); every other prompt has shift 0."""
        todo = [r for r in requests if self._needs_embedding(r)]
        vectors = (
            dict(
                zip(
                    [r.item_id for r in todo],
                    self.embedder.embed([r.prompt for r in todo]),
                    strict=True,
                )
            )
            if todo
            else {}
        )
        return [self.draw_one(r.item_id, vectors.get(r.item_id)) for r in requests]

    def _needs_embedding(self, request: RenderRequest) -> bool:
        _, unit_id, variant, _ = parse_item_id(request.item_id)
        row = self._probs.get(unit_id)
        return (
            variant in SHIFTED_VARIANTS
            and row is not None
            and not is_scm_unit(unit_id)
            and request.prompt != row["prompt_neutral"]
        )

    # ----- the prompt-encoder hook (embedding steering) ---------------------------------
    def encode(self, prompts: Sequence[str]) -> SimEncoding:
        import torch

        prompts = list(prompts)
        vectors = torch.from_numpy(np.asarray(self.embedder.embed(prompts), dtype=np.float32))
        return SimEncoding(
            vectors[:, None, :], torch.ones(len(prompts), 1, dtype=torch.long), prompts
        )

    def generate_encoded(
        self, encoding: SimEncoding, seeds: Sequence[int], item_ids: Sequence[str] | None = None
    ) -> list[Any]:
        """PIL images from (possibly steered) encodings; ``item_ids`` name the images."""
        import io

        from PIL import Image

        ids = list(item_ids or encoding.item_ids or [])
        if len(ids) != len(encoding) or len(seeds) != len(encoding):
            raise ValueError("the sim generator needs one item id and one seed per encoding")
        images = []
        for i, item_id in enumerate(ids):
            if parse_item_id(item_id)[3] != int(seeds[i]):
                raise ValueError(f"{item_id}: seed {seeds[i]} differs from the item id's")
            result = self.draw_one(item_id, encoding.embeds[i, 0].float().numpy())
            if result.status != "ok":
                images.append(None)
            else:
                images.append(Image.open(io.BytesIO(result.png)).convert("RGB"))
        return images

    def close(self) -> None:
        return None
