"""Stage 1 of the paper: source pairs -> bias knowledge-graph units (see docs/kg.md)."""
