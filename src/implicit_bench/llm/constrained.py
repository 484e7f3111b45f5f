"""JSON-schema-constrained decoding for local transformers models, with ``lm-format-enforcer``.

At every step a logits processor masks the tokens that cannot continue a JSON document valid
under the answer's schema, so a greedy model can only write such a document (or run out of
``max_tokens`` mid-way: that answer stays invalid and is counted). lm-format-enforcer's own
transformers integration does not import under transformers 5 (it imports
``transformers.tokenization_utils.PreTrainedTokenizerBase``), so the tokenizer table is built
here with the same recipe and handed to transformers' ``PrefixConstrainedLogitsProcessor``.
"""

from __future__ import annotations

from typing import Any


def tokenizer_data(tokenizer: Any) -> Any:
    """lm-format-enforcer's table of the vocabulary: (id, text, starts-a-word) per regular token.

    A token starts a word when decoding it after the token of ``"0"`` adds a leading space
    (the recipe of lm-format-enforcer's transformers integration)."""
    from lmformatenforcer import TokenEnforcerTokenizerData

    vocab_size = len(tokenizer)
    special = set(tokenizer.all_special_ids)
    zero = tokenizer.encode("0", add_special_tokens=False)[-1]
    ids = [i for i in range(vocab_size) if i not in special]
    after_zero = tokenizer.batch_decode([[zero, i] for i in ids])
    alone = tokenizer.batch_decode([[i] for i in ids])
    regular = [
        (i, pair[1:], len(pair) - 1 > len(single))
        for i, pair, single in zip(ids, after_zero, alone, strict=True)
    ]

    def decode(tokens: list[int]) -> str:
        return tokenizer.decode(tokens).rstrip(
            "\ufffd"
        )  # a partial multi-byte character is not text yet

    return TokenEnforcerTokenizerData(regular, decode, tokenizer.eos_token_id, False, vocab_size)


def json_schema_processor(data: Any, schema: dict[str, Any]) -> Any:
    """A logits processor that keeps greedy decoding inside ``schema`` (a JSON schema, or the
    ``{"name", "schema"}`` wrapper of :func:`implicit_bench.llm.structured.answer_schema`).

    One enforcer per ``generate`` call: it keys its states by the whole token sequence, so the
    rows of a left-padded batch are followed independently."""
    from lmformatenforcer import JsonSchemaParser, TokenEnforcer
    from transformers import PrefixConstrainedLogitsProcessor

    body = schema.get("schema", schema) if "name" in schema else schema
    enforcer = TokenEnforcer(data, JsonSchemaParser(body))

    def allowed(batch_id: int, sequence: Any) -> list[int]:
        return enforcer.get_allowed_tokens(sequence.tolist()).allowed_tokens

    return PrefixConstrainedLogitsProcessor(allowed, num_beams=1)
