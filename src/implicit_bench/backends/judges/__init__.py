"""VLM judges behind one registry: ``transformers`` (a local vision-language model) and
``openai`` (any OpenAI-compatible chat endpoint that accepts images: vLLM, vendor APIs).
See docs/judging.md.

    judge = build_judge({"backend": "transformers", "model": "models/tiny/vlm"})
    judge.answer([JudgeRequest(prompt, png_bytes)])
"""

from __future__ import annotations

from typing import Any

from implicit_bench.backends.judges.base import JudgeBackend, JudgeParams, JudgeRequest
from implicit_bench.runtime.registry import Registry

JUDGE_BACKENDS: Registry[JudgeBackend] = Registry("judge", places=("judges",))
JUDGE_BACKENDS.register(
    "transformers", "implicit_bench.backends.judges.transformers_vlm:TransformersJudge", "local"
)
JUDGE_BACKENDS.register("openai", "implicit_bench.backends.judges.openai_vlm:OpenAIJudge", "http")
JUDGE_BACKENDS.register(
    "sim", "implicit_bench.backends.judges.sim:SimJudge", "none"
)  # simulated world (docs/world.md)


def judge_params(config: dict[str, Any], where: str = "judge") -> JudgeParams:
    """Validate a backend block with the backend's own Params model (unknown keys rejected)."""
    return JUDGE_BACKENDS.validate(config, where)[1]


def build_judge(config: dict[str, Any], where: str = "judge") -> JudgeBackend:
    return judge_from_params(judge_params(config, where))


def judge_from_params(params: JudgeParams) -> JudgeBackend:
    """The backend of an already validated block (no second validation)."""
    return JUDGE_BACKENDS.resolve(params.backend)(params)


__all__ = [
    "JUDGE_BACKENDS",
    "JudgeBackend",
    "JudgeParams",
    "JudgeRequest",
    "build_judge",
    "judge_from_params",
    "judge_params",
]
