"""The authors' released judgements (GitHub ydai94/IMPLICIT-Bench) as analysis tables:
``implicit-bench import`` (docs/import.md)."""
