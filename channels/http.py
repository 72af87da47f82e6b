"""POSTing JSON to a WhatsApp API with bounded retries that honour Retry-After.

Retried: 429 and 5xx answers, answers a classifier marks retryable, and connections that
never reached the server. Not retried: a request that may have reached the server but whose
answer was lost (read timeout, dropped connection): it may have been delivered, and one row
is never sent twice, so that is a `delivery_unknown` failure.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

import aiohttp
import structlog

from channels.errors import SendFailure, send_failed
from core.retry_after import parse_retry_after
from delivery.errors import SendError

log = structlog.get_logger(__name__)

# What one answer means: delivered, try again, or a permanent failure to raise.
Verdict = Literal["ok", "retry"] | SendError
Classifier = Callable[[int, Any], Verdict]
Sleep = Callable[[float], Awaitable[None]]

ConfigT = TypeVar("ConfigT")

# A Graph API or WAHA answer is a small JSON (an id, an error); a WAHA server is the
# business's own, so what it answers is read up to this and no further.
MAX_ANSWER_BYTES = 65_536
_CHUNK_BYTES = 16_384

_NOT_REACHED = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_base_s: float = 0.5  # 0.5, 1, 2, ... capped at backoff_max_s
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 10.0  # a longer Retry-After ends the retries at once

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float | None:
        """How long to wait after failed attempt number `attempt`; None = give up."""
        if attempt >= self.max_attempts:
            return None
        backoff_s = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (attempt - 1))
        if retry_after_s is None:
            return backoff_s
        if retry_after_s > self.retry_after_max_s:
            return None
        return max(backoff_s, retry_after_s)


# What is never worth a second try (a read mark, the typing indicator).
ONE_ATTEMPT = RetryPolicy(max_attempts=1)


@dataclass(frozen=True)
class _Answer:
    status: int
    body: Any
    retry_after_s: float | None


async def post_json(
    http: aiohttp.ClientSession,
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    classify: Classifier,
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
    form: Callable[[], aiohttp.FormData] | None = None,
) -> Any:
    """The parsed JSON body of the first accepted answer; raises SendError (never retryable).
    With `form`, each attempt posts a fresh multipart body from it instead of `payload`."""
    attempt = 0
    while True:
        attempt += 1
        try:
            answer = await _post_once(http, url, payload, headers, form)
        except _NOT_REACHED as exc:
            verdict: Verdict = "retry"
            problem, retry_after_s = f"unreachable: {exc}", None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise send_failed(
                SendFailure.DELIVERY_UNKNOWN, f"no answer after sending ({exc!r}); not re-sent"
            ) from exc
        else:
            verdict = classify(answer.status, answer.body)
            problem = f"HTTP {answer.status}: {_snippet(answer.body)}"
            retry_after_s = answer.retry_after_s
        if verdict == "ok":
            return answer.body
        if isinstance(verdict, SendError):
            raise verdict
        delay_s = policy.delay_s(attempt, retry_after_s)
        if delay_s is None:
            raise send_failed(
                SendFailure.RETRIES_EXHAUSTED, f"gave up after {attempt} attempt(s); {problem}"
            )
        log.warning("outbox.send_retry", attempt=attempt, delay_s=delay_s, problem=problem[:200])
        await sleep(delay_s)


async def post_parts(
    http: aiohttp.ClientSession,
    url: str,
    payloads: Sequence[Mapping[str, Any]],
    *,
    headers: Mapping[str, str],
    classify: Classifier,
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
) -> list[Any]:
    """post_json for each part in order; a failure after a part went out says how many did."""
    bodies: list[Any] = []
    for index, payload in enumerate(payloads):
        try:
            body = await post_json(
                http, url, payload, headers=headers, classify=classify, policy=policy, sleep=sleep
            )
        except SendError as exc:
            if not index:
                raise
            raise SendError(
                f"{index}/{len(payloads)} part(s) sent, then: {exc.message}",
                code=exc.code,
                retryable=False,
            ) from exc
        bodies.append(body)
    return bodies


async def _post_once(
    http: aiohttp.ClientSession,
    url: str,
    payload: Mapping[str, Any],
    headers: Mapping[str, str],
    form: Callable[[], aiohttp.FormData] | None = None,
) -> _Answer:
    body: dict[str, Any] = {"json": payload} if form is None else {"data": form()}
    async with http.post(url, headers=headers, **body) as response:
        raw = await _read_at_most(response, MAX_ANSWER_BYTES)
        retry_after_s = parse_retry_after(response.headers, datetime.now(UTC))
        return _Answer(response.status, _json_or_text(raw), retry_after_s)


async def _read_at_most(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The answer's first `max_bytes` (a server that streams more is not buffered: its
    status has said what happened; a cut body just has no message id to read)."""
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.content.iter_chunked(_CHUNK_BYTES):
        chunks.append(chunk[: max_bytes - total])
        total += len(chunks[-1])
        if total >= max_bytes:
            break
    return b"".join(chunks)


def _json_or_text(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _snippet(body: Any) -> str:
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return text[:300]


class PartsSender(Generic[ConfigT]):
    """What the Cloud API and WAHA senders share: their config, HTTP session, retry policy
    and sleep (tests pass a fake one), and posting a reply's parts in order."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        config: ConfigT,
        policy: RetryPolicy,
        *,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._http = http
        self._config = config
        self._policy = policy
        self._sleep = sleep

    async def _post_parts(
        self,
        url: str,
        payloads: Sequence[Mapping[str, Any]],
        *,
        headers: Mapping[str, str],
        classify: Classifier,
        http: aiohttp.ClientSession | None = None,
    ) -> list[Any]:
        """`http`: a session of the call's own (pinned to checked addresses), else ours."""
        return await post_parts(
            http or self._http,
            url,
            payloads,
            headers=headers,
            classify=classify,
            policy=self._policy,
            sleep=self._sleep,
        )

    async def _post_form(
        self,
        url: str,
        form: Callable[[], aiohttp.FormData],
        *,
        headers: Mapping[str, str],
        classify: Classifier,
    ) -> Any:
        """One multipart POST (a media upload), retried like a message."""
        return await post_json(
            self._http,
            url,
            {},
            headers=headers,
            classify=classify,
            policy=self._policy,
            sleep=self._sleep,
            form=form,
        )
