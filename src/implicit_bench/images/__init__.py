"""Packed image storage."""

from implicit_bench.images.store import ImageKey, ImageRecord, ImageStore

__all__ = ["ImageKey", "ImageRecord", "ImageStore"]
