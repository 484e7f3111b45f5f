"""Checks before a run: endpoints, parallelism, dialects, stage inputs."""
