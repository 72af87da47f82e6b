"""What becomes of an event after an attempt: delivered, due again after a backoff, or failed.

Pure: the attempt's result, how many attempts it has had (this one included) and its age in,
a settlement out. The delay doubles from `base_s` per attempt, capped at `max_s`, with no
jitter (the cron's ticks spread retries already); an event fails, and is kept, after
`max_attempts` attempts or when its next attempt would come past `max_age_s`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    DELIVERED = "delivered"
    RETRY = "retry"
    FAILED = "failed"


@dataclass(frozen=True)
class RetryPolicy:
    base_s: float = 10.0
    max_s: float = 3600.0
    max_attempts: int = 12
    max_age_s: float = 86_400.0


@dataclass(frozen=True)
class Settlement:
    outcome: Outcome
    retry_in_s: float = 0.0
    error: str | None = None


def backoff_s(attempts: int, policy: RetryPolicy) -> float:
    """The wait after the `attempts`-th failed attempt (1-based): base, 2 base, 4 base, ..."""
    exponent = min(max(attempts - 1, 0), 62)  # 2**62 * base is past any cap already
    return float(min(policy.base_s * 2**exponent, policy.max_s))


def settle(
    *,
    delivered: bool,
    permanent: bool,
    error: str | None,
    attempts: int,
    age_s: float,
    policy: RetryPolicy,
) -> Settlement:
    """`permanent`: no retry can mend it (a refused URL, a cleared one)."""
    if delivered:
        return Settlement(Outcome.DELIVERED)
    reason = error or "delivery_failed"
    if permanent:
        return Settlement(Outcome.FAILED, error=reason)
    if attempts >= policy.max_attempts:
        return Settlement(Outcome.FAILED, error=f"{reason} (after {attempts} attempts)")
    delay_s = backoff_s(attempts, policy)
    if age_s + delay_s > policy.max_age_s:
        return Settlement(Outcome.FAILED, error=f"{reason} (older than {policy.max_age_s:g} s)")
    return Settlement(Outcome.RETRY, retry_in_s=delay_s, error=reason)
