"""Packed image storage."""

from implicit_bench.images.store import ImageKey, ImageRecord, ImageStore, StoreLockedError

__all__ = ["ImageKey", "ImageRecord", "ImageStore", "StoreLockedError"]
