"""The cache's errors: each names the file (and the entry's key) and says what to do."""
from __future__ import annotations


class CacheError(RuntimeError):
    """Base class for cache problems."""


class CacheCorrupted(CacheError):
    """A cache file, or one entry in it, is not what the cache wrote; it is left untouched."""


class CacheMiss(CacheError):
    """Offline replay asked for a call that was never recorded."""


class CacheLocked(CacheError):
    """Another process held the store's lock for longer than the wait allows."""


class CacheReadOnly(CacheError):
    """A cache file that must be written has no write permission; it is refused, never replaced."""


class HoldsSecret(CacheError):
    """An entry to record holds a secret's value; nothing of it is recorded."""
