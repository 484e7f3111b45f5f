"""A stage whose model calls fail too often exits non-zero, so DVC does not record the run.

``max_failure_rate`` (a param of the judge, rewrite and LLM negation-writer stages; default
``DEFAULT_MAX_FAILURE_RATE``) is the share of calls that may fail; all calls failing is
always an error (docs/errors.md).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# the share of a stage's model calls that may fail before the stage exits non-zero (a param)
FailureRate = Annotated[float, Field(ge=0.0, le=1.0, strict=True, allow_inf_nan=False)]
DEFAULT_MAX_FAILURE_RATE = 0.5


class LLMUnavailableError(RuntimeError):
    """Every call of a stage to its model failed, or more than its failure threshold did."""


def check_failure_rate(
    stage: str,
    failed: int,
    total: int,
    max_rate: float,
    example: str | None,
    kind: str = "LLM",
) -> None:
    """Raise ``LLMUnavailableError`` when all of ``total`` calls failed
    or more than ``max_rate``."""
    if total <= 0 or failed <= 0:
        return
    if failed == total or failed / total > max_rate:
        share = "all" if failed == total else f"{failed} of"
        raise LLMUnavailableError(
            f"{stage}: {share} {total} {kind} calls failed (max_failure_rate {max_rate}), nothing "
            "written, exit 1 so that DVC does not record the run; "
            f"first error: {example or 'unknown'}"
        )
