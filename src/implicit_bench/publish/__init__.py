"""Results in the formats the field's hubs read: Every Eval Ever records (out and in) and
Hugging Face ``.eval_results`` entries (docs/publishing.md)."""
