"""Entry module of the debiasing stages: what the four stage scripts other than
``debias_render`` call, each from its purpose-named module (the params section ``debias``:
``debias.params``).

Stages (see docs/debiasing.md): ``retrieve`` (``debias.retrieve``) -> ``rewrite``
(``debias.rewriting``) -> ``debias_render@<config>`` (``debias.render.stage`` through the
configuration's method, ``debias.methods``; a sub-package with its own entry module, so the other
stages do not depend on the render machinery) -> ``debias_judge@<config>`` (``debias.judging``) ->
``debias_score`` (``debias.scoring``); the units and the subset: ``debias.units``; paths: the table
catalogue (``implicit_bench.protocol.tables``).
"""

from __future__ import annotations

from implicit_bench.backends.llm import build_llm
from implicit_bench.debias.judging import judge_stage_params
from implicit_bench.debias.params import DebiasParams
from implicit_bench.debias.retrieval import own_hits, read_retrieval
from implicit_bench.debias.retrieve import run_retrieval
from implicit_bench.debias.rewriting import (
    needed_llm_work,
    resolve_llm_block,
    rewriter_block,
    run_rewriting,
)
from implicit_bench.debias.scoring import score_judgements
from implicit_bench.debias.units import KG_COLUMNS, subset_units, unit_for
from implicit_bench.protocol.tables import DEBIAS_IMAGES_DIR as IMAGES_DIR
from implicit_bench.protocol.tables import DEBIAS_JUDGEMENTS_DIR as JUDGEMENTS_DIR
from implicit_bench.protocol.tables import LLM_PAIRS_PATH as PAIRS_PATH
from implicit_bench.protocol.tables import RETRIEVAL_PATH, REWRITES_PATH

__all__ = [
    "IMAGES_DIR",
    "KG_COLUMNS",
    "JUDGEMENTS_DIR",
    "PAIRS_PATH",
    "RETRIEVAL_PATH",
    "REWRITES_PATH",
    "DebiasParams",
    "build_llm",
    "judge_stage_params",
    "needed_llm_work",
    "own_hits",
    "read_retrieval",
    "resolve_llm_block",
    "rewriter_block",
    "run_retrieval",
    "run_rewriting",
    "score_judgements",
    "subset_units",
    "unit_for",
]
