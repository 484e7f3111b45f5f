"""JSON-schema-constrained decoding for local transformers models.

At every step a logits processor masks the tokens that cannot continue a JSON document valid
under the answer's schema, so a greedy model can only write such a document (or run out of
``max_tokens`` mid-way: that answer stays invalid and is counted). Two engines:

- ``lm-format-enforcer`` (the default): lm-format-enforcer's own transformers integration does
  not import under transformers 5 (it imports
  ``transformers.tokenization_utils.PreTrainedTokenizerBase``), so the tokenizer table is built
  here with the same recipe and handed to transformers' ``PrefixConstrainedLogitsProcessor``.
  Once the document is complete only the end-of-sequence token is allowed (the library would
  otherwise let a model pad the answer with up to 12 newlines, each a decoding step).
- ``xgrammar``: the schema compiled to a grammar in C++ (xgrammar's transformers processor);
  compact JSON (no whitespace between tokens), so the same answer takes fewer steps.

:func:`bound_schema` adds ``maxLength`` / ``minLength`` / ``maxItems`` to a schema for decoding
only (a small model fills a free string with whole source sentences until ``max_tokens`` runs
out, or leaves it empty); the answer is still parsed against the unbounded pydantic model.
"""

from __future__ import annotations

import copy
import json
from typing import Any


def schema_body(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema itself, unwrapped from ``{"name", "schema"}`` (``answer_schema``)."""
    return schema.get("schema", schema) if "name" in schema else schema


def bound_schema(
    schema: dict[str, Any],
    max_chars: int | None = None,
    max_items: int | None = None,
    min_chars: int | None = None,
) -> dict[str, Any]:
    """A copy of ``schema`` in which every string without ``maxLength`` / ``minLength`` gets
    ``max_chars`` / ``min_chars`` and every array without ``maxItems`` gets ``max_items``
    (None: left unbounded)."""
    body = copy.deepcopy(schema_body(schema))

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and max_chars:
                node.setdefault("maxLength", max_chars)
            if node.get("type") == "string" and min_chars:
                node.setdefault("minLength", min_chars)
            if node.get("type") == "array" and max_items:
                node.setdefault("maxItems", max_items)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body)
    return body


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
        # a partial multi-byte character is not text yet
        return tokenizer.decode(tokens).rstrip("\ufffd")

    return TokenEnforcerTokenizerData(regular, decode, tokenizer.eos_token_id, False, vocab_size)


def json_schema_processor(data: Any, schema: dict[str, Any]) -> Any:
    """A logits processor that keeps greedy decoding inside ``schema`` (a JSON schema, or the
    ``{"name", "schema"}`` wrapper of :func:`implicit_bench.backends.llm.structured.answer_schema`).

    One enforcer per ``generate`` call: it keys its states by the whole token sequence, so the
    rows of a left-padded batch are followed independently. When the end of sequence is
    allowed the document is complete, and only the end of sequence is."""
    from lmformatenforcer import JsonSchemaParser, TokenEnforcer
    from transformers import PrefixConstrainedLogitsProcessor

    enforcer = TokenEnforcer(data, JsonSchemaParser(schema_body(schema)))
    eos = data.eos_token_id

    def allowed(batch_id: int, sequence: Any) -> list[int]:
        tokens = enforcer.get_allowed_tokens(sequence.tolist()).allowed_tokens
        return [eos] if eos in tokens else tokens

    return PrefixConstrainedLogitsProcessor(allowed, num_beams=1)


def xgrammar_info(tokenizer: Any, vocab_size: int) -> Any:
    """xgrammar's table of the vocabulary (``vocab_size``: the model's, padding included)."""
    import xgrammar

    return xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)


def xgrammar_processor(info: Any, schema: dict[str, Any]) -> Any:
    """xgrammar's logits processor for ``schema``, compact JSON (one per ``generate`` call)."""
    import xgrammar
    from xgrammar.contrib.hf import LogitsProcessor

    compiled = xgrammar.GrammarCompiler(info).compile_json_schema(
        json.dumps(schema_body(schema)), any_whitespace=False
    )
    return LogitsProcessor(compiled)
