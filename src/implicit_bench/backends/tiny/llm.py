"""A tiny random causal LM (Llama architecture) with a locally built word-level tokenizer.

Saved with ``save_pretrained`` so it loads through the ``transformers`` LLM backend exactly as
a hub model does. Its answers are noise: use it to exercise the code path, never for results.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.runtime.provenance import mark_random_init

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
WORDS = [
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    '"',
    "head",
    "relation",
    "tail",
    "stereotype",
    "anti",
    "person",
    "a",
    "the",
    "of",
    "is",
    "and",
    "to",
    "in",
    "photo",
    "neutral",
    "json",
    "yes",
    "no",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "true",
    "false",
    "null",
]


def build(out_dir: str | Path, seed: int = 0) -> None:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    specials = [
        "<pad>",
        "<unk>",
        "<s>",
        "</s>",
        "<|user|>",
        "<|system|>",
        "<|assistant|>",
        "<|end|>",
    ]
    vocab = {tok: i for i, tok in enumerate(specials + WORDS)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        additional_special_tokens=specials[4:],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
        tie_word_embeddings=False,
        initializer_range=0.5,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    mark_random_init(out, f"tiny random Llama causal LM (seed {seed}), word-level tokenizer")
