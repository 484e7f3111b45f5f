"""Running model calls: cache, executor, HTTP retries, throttle, dialects, registry."""
