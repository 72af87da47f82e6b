"""Read marks and the typing indicator on the Cloud API and WAHA (delivery.presence).

Per burst the model answers, no statement: the take (or the continue) that read the burst
returned the number its last message came to, with its own credentials (the reply's commit
moves the conversation's read mark), and then
- Cloud API: one POST /{phone-number-id}/messages `status: read` + `typing_indicator`
  (the indicator goes with the reply, or after 25 s);
- WAHA: POST /api/sendSeen, then /api/startTyping, and /api/stopTyping when the turn stops it.
A person opening a conversation: the read of its new messages only (claimed once each, and the
number, in two statements), no indicator.

All of it runs in background tasks with a short timeout and one attempt each: nothing here
delays, fails or retries a turn. A failure is a metric (`on_failure(kind, call)`) and a log
line. A number waiting for a new token is left alone.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from channels.cloud_api import CloudApiSender
from channels.models import ChannelStatus
from channels.presence_queries import (
    PresenceTarget,
    ReadNumber,
    claim_unread,
    fetch_presence_target,
)
from channels.waha import WahaSender
from core.channel_kind import ChannelKind
from core.errors import SkilletError
from core.tenancy import org_connection
from delivery.contract import Recipient
from delivery.presence import Reading, Typing

log = structlog.get_logger(__name__)

OnFailure = Callable[[str, str], None]  # (channel kind, call): counted by the worker


def _uncounted(kind: str, call: str) -> None:
    return None


@dataclass(frozen=True)
class PresenceConfig:
    read_receipts: bool = True  # SKILLET_READ_RECEIPTS
    typing_indicator: bool = True  # SKILLET_TYPING_INDICATOR
    timeout_s: float = 3.0  # each background call, statement and HTTP together


class ChannelPresence:
    """delivery.presence.Presence over the Cloud API and WAHA senders' HTTP clients."""

    def __init__(
        self,
        pool: object,
        cloud_api: CloudApiSender,
        waha: WahaSender,
        config: PresenceConfig,
        *,
        on_failure: OnFailure = _uncounted,
    ) -> None:
        self._pool = pool
        self._cloud_api = cloud_api
        self._waha = waha
        self._config = config
        self._on_failure = on_failure
        self._tasks: set[asyncio.Task[object]] = set()

    @property
    def marks_read(self) -> bool:
        return self._config.read_receipts

    def reading(self, burst: Reading) -> Typing:
        if not (self._config.read_receipts or self._config.typing_indicator):
            return _Stopped()
        started = self._spawn("reading", self._start(burst))
        return _Typing(self, started)

    def mark_read(self, organization_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
        if self._config.read_receipts:
            self._spawn("read", self._read_new(organization_id, conversation_id))

    async def aclose(self) -> None:
        """Let what is in flight finish (each call is bounded by its timeout)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, call: str, work: Awaitable[PresenceTarget | None]) -> asyncio.Task[object]:
        task: asyncio.Task[object] = asyncio.ensure_future(self._bounded(call, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _bounded(
        self, call: str, work: Awaitable[PresenceTarget | None]
    ) -> PresenceTarget | None:
        """`work` within the timeout; any failure logged and counted, never raised."""
        try:
            async with asyncio.timeout(self._config.timeout_s):
                return await work
        except (SkilletError, OSError, TimeoutError) as exc:
            code = exc.code if isinstance(exc, SkilletError) else type(exc).__name__
            log.warning("presence.failed", call=call, code=code)
            self._on_failure(_kind_of(exc), call)
        except Exception as exc:  # a bug here must never reach a turn
            log.error("presence.failed", call=call, code=type(exc).__name__)
            self._on_failure("unknown", call)
        return None

    async def _start(self, burst: Reading) -> PresenceTarget | None:
        number = burst.number
        if not isinstance(number, ReadNumber):
            return None  # no connected number (e.g. `skillet enqueue`)
        if number.credentials.status is ChannelStatus.NEEDS_TOKEN:
            return None
        target = PresenceTarget(number, burst.contact_id)
        await self._show(target, burst.external_id, typing=self._config.typing_indicator)
        return target

    async def _read_new(
        self, organization_id: uuid.UUID, conversation_id: uuid.UUID
    ) -> PresenceTarget | None:
        async with org_connection(self._pool, organization_id) as conn:
            external_id = await claim_unread(conn, organization_id, conversation_id)
            if external_id is None:
                return None
            target = await fetch_presence_target(
                conn, organization_id, conversation_id, external_id
            )
        if target is None or target.credentials.status is ChannelStatus.NEEDS_TOKEN:
            return None
        await self._show(target, external_id, typing=False)
        return None

    async def _show(self, target: PresenceTarget, external_id: str, *, typing: bool) -> None:
        recipient = Recipient("whatsapp", target.contact_id, route=target.route)
        read = self._config.read_receipts
        try:
            if target.route.kind == ChannelKind.CLOUD_API.value:
                # Meta shows the indicator only with the read mark: without it, nothing.
                if read:
                    await self._cloud_api.mark_read(
                        recipient, target.credentials, external_id, typing=typing
                    )
            elif target.route.kind == ChannelKind.WAHA.value:
                if read:
                    await self._waha.presence(
                        recipient, target.credentials, "sendSeen", {"messageIds": [external_id]}
                    )
                if typing:
                    await self._waha.presence(recipient, target.credentials, "startTyping")
        except SkilletError as exc:
            raise _PresenceFailed(target.route.kind, exc) from exc
        log.info("presence.shown", kind=target.route.kind, read=read, typing=typing)

    async def _stop(self, started: asyncio.Task[object]) -> PresenceTarget | None:
        target = await started
        if not isinstance(target, PresenceTarget) or target.route.kind != ChannelKind.WAHA.value:
            return None
        if self._config.typing_indicator:
            recipient = Recipient("whatsapp", target.contact_id, route=target.route)
            try:
                await self._waha.presence(recipient, target.credentials, "stopTyping")
            except SkilletError as exc:
                raise _PresenceFailed(target.route.kind, exc) from exc
        return None


class _PresenceFailed(SkilletError):
    """A read mark or indicator call the channel refused or did not answer."""

    code = "presence_failed"

    def __init__(self, kind: str, cause: SkilletError) -> None:
        super().__init__(f"{kind}: {cause.message}"[:300], code=cause.code)
        self.kind = kind


def _kind_of(exc: BaseException) -> str:
    return exc.kind if isinstance(exc, _PresenceFailed) else "unknown"


class _Stopped:
    def stop(self) -> None:
        return None


class _Typing:
    """Stops the indicator once its start has gone out (WAHA only: a Cloud API one goes by
    itself with the reply)."""

    def __init__(self, presence: ChannelPresence, started: asyncio.Task[object]) -> None:
        self._presence = presence
        self._started = started
        self._stopped = False

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._presence._spawn("stop_typing", self._presence._stop(self._started))
