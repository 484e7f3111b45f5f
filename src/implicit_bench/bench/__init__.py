"""The benchmark phase: generators and judges on a fixed unit set (docs/experiments.md)."""
