"""POSTing a JSON request to a model provider: timeouts, retries with jittered backoff that
honour the server's wait, and provider failures translated into turn.errors.

Retried within one call: connection failures, timeouts, 408, 409, 429 and 5xx (529 too),
unless the answer says `x-should-retry: false`; `x-should-retry: true` retries any status.
A 2xx answer whose stream is cut (network, a silence longer than the read timeout, an
error event, its end before the provider's last event) is retried the same way, from the
start. The wait is the server's (`retry-after-ms`, then `retry-after` in seconds or as an
HTTP date) when it gives one, else an exponential backoff with jitter. A model call is safe
to repeat (nothing is delivered to anyone), unlike a WhatsApp send.

Headers are never logged; any secret passed in `secrets` is masked in error messages.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import aiohttp
import structlog

from core.retry_after import parse_retry_after
from turn.errors import ModelError, ModelRequestRejected, ModelResponseInvalid
from turn.providers.streaming import StreamInterrupted, snippet

log = structlog.get_logger(__name__)

Sleep = Callable[[float], Awaitable[None]]
Jitter = Callable[[], float]  # uniform in [0, 1)

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429})
ERROR_BODY_MAX_BYTES = 64 * 1024

_RETRYABLE_EXCEPTIONS = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError)
_STALE_CONNECTION_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 3
    backoff_base_s: float = 0.5  # about 0.5, 1, 2, ... (jittered), capped at backoff_max_s
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 20.0  # a server asking for a longer wait ends the call at once

    def delay_s(self, attempt: int, retry_after_s: float | None, jitter: float) -> float | None:
        """The wait after failed attempt `attempt` (1-based); None = give up.

        `jitter` in [0, 1) spreads the backoff over its upper half, so workers that failed
        together do not come back together.
        """
        if attempt >= self.max_attempts:
            return None
        if retry_after_s is not None:
            return None if retry_after_s > self.retry_after_max_s else retry_after_s
        ceiling_s = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (attempt - 1))
        return ceiling_s * (0.5 + jitter / 2)


def model_http_session(*, connect_timeout_s: float, read_timeout_s: float) -> aiohttp.ClientSession:
    """The HTTP client of the model adapters: no total cap (answers stream in for as long as
    the server keeps sending; the turn has its own deadline), but a bounded connect and a
    bounded silence between bytes (`sock_read` restarts with every chunk received)."""
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(
            total=None,
            connect=connect_timeout_s,
            sock_connect=connect_timeout_s,
            sock_read=read_timeout_s,
        ),
        raise_for_status=False,
    )


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    retry_after_s: float | None
    should_retry: bool | None  # the server's x-should-retry, when it sent one


@dataclass(frozen=True)
class JsonEndpoint:
    """One provider endpoint: where, with which headers, and how to talk about failures."""

    provider: str
    url: str
    headers: Mapping[str, str] = field(repr=False)  # carry the key: never printed
    policy: RetryPolicy
    secrets: Sequence[str] = field(default=(), repr=False)  # masked wherever echoed
    auth_hint: str = ""  # what to check on 401/403, e.g. "check SKILLET_ANTHROPIC_API_KEY"


ReadOk = Callable[[aiohttp.ClientResponse], Awaitable[T]]


async def post_model(
    http: aiohttp.ClientSession,
    endpoint: JsonEndpoint,
    payload: Mapping[str, Any],
    read_ok: ReadOk[T],
    *,
    sleep: Sleep = asyncio.sleep,
    jitter: Jitter = random.random,
) -> T:
    """What `read_ok` makes of the first 2xx answer (it reads the body as it streams in),
    or a ModelError subclass. A stream cut by the network, a timeout or an error event is
    retried like a 5xx."""
    attempt = 0
    while True:
        attempt += 1
        outcome = await _attempt(http, endpoint, payload, read_ok)
        if not isinstance(outcome, _Retry):
            return outcome
        delay_s = endpoint.policy.delay_s(attempt, outcome.retry_after_s, jitter())
        if delay_s is None:
            raise ModelError(
                _mask(
                    f"{endpoint.provider} failed after {attempt} attempt(s): {outcome.problem}",
                    endpoint.secrets,
                )
            )
        log.warning(
            "model.retry",
            provider=endpoint.provider,
            attempt=attempt,
            status=outcome.status,
            delay_s=round(delay_s, 3),
        )
        await sleep(delay_s)


@dataclass(frozen=True)
class _Retry:
    problem: str
    status: int | None  # None: no answer (network, timeout)
    retry_after_s: float | None


async def _attempt(
    http: aiohttp.ClientSession,
    endpoint: JsonEndpoint,
    payload: Mapping[str, Any],
    read_ok: ReadOk[T],
) -> T | _Retry:
    """One POST: the read answer, a reason to try again, or a raised ModelError."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = {"content-type": "application/json", **endpoint.headers}
    try:
        async with await _send(http, endpoint.url, data, headers) as response:
            if 200 <= response.status < 300:
                return await read_ok(response)
            answer = await _error_answer(response)
    except _RETRYABLE_EXCEPTIONS as exc:
        problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return _Retry(problem, None, None)
    except StreamInterrupted as exc:
        if exc.rejected:
            raise ModelRequestRejected(_mask(exc.problem, endpoint.secrets)) from exc
        return _Retry(exc.problem, None, None)
    if not _retryable(answer):
        raise _rejected(endpoint, answer)
    problem = f"HTTP {answer.status}: {_error_message(answer.body)}"
    return _Retry(problem, answer.status, answer.retry_after_s)


async def _send(
    http: aiohttp.ClientSession, url: str, data: bytes, headers: Mapping[str, str]
) -> aiohttp.ClientResponse:
    """The POST's response (status and headers read). A pooled keep-alive connection the
    server closed after its last answer (llama.cpp's server closes after every stream, and
    the next call may take the connection before its close is seen) fails before any answer:
    that is sent once more at once, on a new connection, without using up an attempt."""
    try:
        return await http.post(url, data=data, headers=headers)
    except _STALE_CONNECTION_ERRORS as exc:
        if isinstance(exc, aiohttp.ClientConnectorError):  # never connected: not stale
            raise
        log.debug("model.stale_connection", error=type(exc).__name__)
        return await http.post(url, data=data, headers=headers)


async def _error_answer(response: aiohttp.ClientResponse) -> _Answer:
    # Only the start of an error body is read: it is shown in a message, never kept whole.
    body = bytearray()
    async for chunk in response.content.iter_any():
        body += chunk
        if len(body) >= ERROR_BODY_MAX_BYTES:
            break
    should_retry = response.headers.get("x-should-retry", "").strip().lower()
    return _Answer(
        status=response.status,
        body=bytes(body[:ERROR_BODY_MAX_BYTES]),
        retry_after_s=parse_retry_after(response.headers, datetime.now(UTC)),
        should_retry={"true": True, "false": False}.get(should_retry),
    )


def _retryable(answer: _Answer) -> bool:
    if answer.should_retry is not None:
        return answer.should_retry
    return answer.status in RETRYABLE_STATUSES or answer.status >= 500


def _rejected(endpoint: JsonEndpoint, answer: _Answer) -> ModelError:
    message = f"{endpoint.provider} answered HTTP {answer.status}: {_error_message(answer.body)}"
    if answer.status in (401, 403):
        hint = f" ({endpoint.auth_hint})" if endpoint.auth_hint else ""
        return ModelRequestRejected(
            _mask(message + hint, endpoint.secrets), code="model_unauthorized"
        )
    if answer.status >= 500 or answer.status in RETRYABLE_STATUSES:
        # Retryable in general, but the server said not to retry (x-should-retry: false).
        return ModelError(_mask(message, endpoint.secrets))
    return ModelRequestRejected(_mask(message, endpoint.secrets))


def _error_message(body: bytes) -> str:
    """The provider's own error message (both wire formats nest it in `error.message`)."""
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return snippet(text) or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            prefix = f"{kind}: " if isinstance(kind, str) and kind else ""
            return snippet(prefix + error["message"])
    return snippet(text)


def _mask(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def token_count(provider: str, value: object, name: str) -> int | None:
    """A usage field as a token count: absent or null is None (not reported), anything but a
    count is refused."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ModelResponseInvalid(f"{provider} usage.{name} is not a token count")
    return value
