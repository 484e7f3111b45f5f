"""The debias_judge stage's params: the judge stage's, narrowed to one configuration's store
and the rubric and alignment judges of ``debias.scoring`` (docs/debiasing.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from implicit_bench.errors import ConfigError
from implicit_bench.params import check_refs

if TYPE_CHECKING:
    from implicit_bench.debias.params import DebiasParams


def judge_stage_params(
    name: str, params: DebiasParams, judge: Any, images_dir: str, out_dir: str
) -> Any:
    """The judge stage's params for one configuration: the rubric and alignment judges named in
    ``debias.scoring`` (entries of the top-level ``judges`` catalogue), that configuration's
    image store only."""
    rubric, alignment = params.scoring.rubric_judge, params.scoring.alignment_judge
    if rubric is None or alignment is None:
        raise ConfigError("debias.scoring.rubric_judge and alignment_judge must name judges to run")
    check_refs(rubric, judge.judges, "debias.scoring.rubric_judge", "judges")
    check_refs(alignment, judge.judges, "debias.scoring.alignment_judge", "judges")
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
