"""Answer strings that tiny random judges and writers sometimes emit.

A random language model repeats junk; the stages after it then have nothing to count. As in
the default profile's tiny judge, each tiny chat model gets these answer strings as whole
tokens of its vocabulary with scaled-up output rows, so its noise is a mix of readable answers
(to the right or the wrong question) and junk: both the valid and the invalid-answer paths of
every stage run. The answers mean nothing about any image or prompt.
"""

from __future__ import annotations

ANSWER_TOKENS: tuple[str, ...] = (
    *(f'{{"score": {i}}}' for i in range(6)),
    *(f'{{"choice": "{c}"}}' for c in "ABC"),
    '{"aligned": true}',
    '{"aligned": false}',
)
ANSWER_SCALE = 3.0


def boost_answers(model, tokenizer, scale: float = ANSWER_SCALE) -> None:
    """Scale the output-layer rows (and input embeddings) of the answer tokens in place."""
    import torch

    ids = tokenizer.convert_tokens_to_ids(list(ANSWER_TOKENS))
    with torch.no_grad():
        model.get_input_embeddings().weight[ids] *= scale
        out = model.get_output_embeddings()
        if (
            out is not None
            and out.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr()
        ):
            out.weight[ids] *= scale
