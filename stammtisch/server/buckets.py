"""Token buckets: the rate limits of a seat's messages, chat lines and hints, and of the
tables an address makes."""

from __future__ import annotations

import time


class Bucket:
    """Token bucket: ``burst`` messages at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.strikes = 0

    def ready(self) -> bool:
        """Whether ``allow`` would let a message through now (it takes nothing)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens >= 1.0

    def allow(self) -> bool:
        if self.ready():
            self.tokens -= 1.0
            self.strikes = 0
            return True
        self.strikes += 1
        return False


class AddressBuckets:
    """A token bucket per client address (table creation), pruned so it cannot grow."""

    def __init__(self, per_minute: float, burst: int, max_addresses: int = 10_000):
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.max_addresses = max_addresses
        self.buckets: dict[str, Bucket] = {}

    def allow(self, address: str) -> bool:
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) >= self.max_addresses:
                self.buckets.clear()  # forgetting is safe: a forgotten address starts full
            bucket = self.buckets[address] = Bucket(self.rate, self.burst)
        return bucket.allow()
