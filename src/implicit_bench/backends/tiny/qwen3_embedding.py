"""A tiny randomly initialised Qwen3 embedder (the paper's Qwen3-Embedding-8B), built locally.

A sentence-transformers directory in Qwen3-Embedding's layout: a 2-layer ``Qwen3Model`` with a
``Qwen2Tokenizer`` trained here (left padding, ``<|endoftext|>`` appended as the last token),
last-token pooling and L2 normalisation, and the ``query`` prompt
"Instruct: ...\\nQuery:" in ``config_sentence_transformers.json``. The retrieve stage builds the
instruct-style query itself (``debias.retrieval.query_template``), so it encodes queries and
documents with no prompt, exactly as with the hub model.
"""

from __future__ import annotations

from pathlib import Path

from implicit_bench.backends.tiny.qwen_tokenizer import qwen_tokenizer
from implicit_bench.runtime.provenance import mark_random_init

QUERY_PROMPT = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)


def build(out_dir: str | Path, seed: int = 0) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from tokenizers import processors
    from transformers import Qwen3Config, Qwen3Model

    out = Path(out_dir)
    tokenizer = qwen_tokenizer(padding_side="left")
    eos = "<|endoftext|>"
    eos_id = tokenizer.convert_tokens_to_ids(eos)
    # Qwen3-Embedding's tokenizer appends <|endoftext|>: last-token pooling reads its state
    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single=f"$A:0 {eos}:0", pair=f"$A:0 {eos}:0 $B:1 {eos}:1", special_tokens=[(eos, eos_id)]
    )
    torch.manual_seed(seed)
    model = Qwen3Model(
        Qwen3Config(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            max_position_embeddings=4096,
            pad_token_id=eos_id,
            eos_token_id=eos_id,
            bos_token_id=eos_id,
        )
    )
    hf_dir = out / "_hf"
    model.save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)
    transformer = Transformer(str(hf_dir), max_seq_length=512)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="lasttoken")
    st = SentenceTransformer(
        modules=[transformer, pooling, Normalize()],
        prompts={"query": QUERY_PROMPT, "document": ""},
        device="cpu",
    )
    st.save(str(out))
    import shutil

    shutil.rmtree(hf_dir)
    mark_random_init(
        out, f"tiny random Qwen3 embedder, last-token pooling (seed {seed}); embeddings are noise"
    )
    return out
