"""The worker's Sender: picks the reply's channel sender and keeps WhatsApp's 24-hour rule."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import structlog

from channels.credential_queries import (
    NO_SEND_CREDENTIALS,
    SendCredentials,
    fetch_send_credentials,
    mark_needs_token,
)
from channels.errors import SendFailure, send_failed, send_parked
from channels.models import ChannelStatus
from core.errors import StorageError
from core.object_store import ObjectNotFound, StoredObject
from core.tenancy import org_connection
from delivery.contract import Recipient, Route, Sender
from delivery.errors import SendError
from delivery.outbound_file import MAX_BYTES, OutboundFile
from delivery.outbox_queries import OutboxRow

log = structlog.get_logger(__name__)

CUSTOMER_SERVICE_WINDOW = timedelta(hours=24)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def outside_window(last_inbound_at: datetime | None, now: datetime, window: timedelta) -> bool:
    """True when a free-form reply may no longer be sent (unknown last message: attempt it)."""
    return last_inbound_at is not None and now - last_inbound_at >= window


class KindSender(Protocol):
    """A channel kind's sender (channels.cloud_api, channels.waha)."""

    async def send(
        self, row: OutboxRow, recipient: Recipient, credentials: SendCredentials = ...
    ) -> Sequence[str] | None: ...

    async def send_file(
        self, row: OutboxRow, recipient: Recipient, credentials: SendCredentials, data: bytes
    ) -> Sequence[str] | None:
        """A file part (`row.file`) with its bytes."""
        ...

    async def send_choices(
        self, row: OutboxRow, recipient: Recipient, credentials: SendCredentials
    ) -> Sequence[str] | None:
        """A choices part (`row.choices`): buttons, a list or a numbered text."""
        ...


class FileSource(Protocol):
    """Where a file part's bytes are read at send time (the skills' object store)."""

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject: ...


async def file_bytes(
    files: FileSource | None, organization_id: uuid.UUID, file: OutboundFile
) -> bytes:
    """A file part's bytes, no more than its manifest size and Meta's for its kind (read
    once here for every channel); a SendError when they are gone
    (failed) or the store does not answer (retryable: nothing went out). Only a key of the
    row's own org and the part's own skill and path is read, whatever the stored row says."""
    if files is None:
        raise send_failed(SendFailure.NOT_CONFIGURED, "this sender has no file store")
    if not (
        file.key.startswith(f"{organization_id}/{file.skill}/")
        and file.key.endswith(f"/{file.path}")
    ):
        raise send_failed(SendFailure.REJECTED, f"{file.path} is not a file of this org's skill")
    if file.size > MAX_BYTES[file.kind]:  # checked by send_skill_file too; Meta's, per kind
        raise send_failed(
            SendFailure.REJECTED,
            f"{file.filename}: {file.size} bytes, over Meta's {MAX_BYTES[file.kind]} for "
            f"{file.kind.value}",
        )
    try:
        stored = await files.get(file.key, max_bytes=file.size)
    except ObjectNotFound as exc:
        raise send_failed(SendFailure.REJECTED, f"{file.path} is no longer stored") from exc
    except StorageError as exc:
        raise SendError(f"could not read {file.path}: {exc.message}", code=exc.code) from exc
    if stored.truncated or len(stored.data) != file.size:
        raise send_failed(SendFailure.REJECTED, f"{file.path} is not the size its manifest says")
    return stored.data


class Credentials(Protocol):
    """Where the send path reads a number's own credentials and marks a refused token."""

    async def lookup(self, organization_id: uuid.UUID, route: Route) -> SendCredentials: ...

    async def needs_token(self, organization_id: uuid.UUID, route: Route) -> None: ...


class PoolCredentials:
    """Credentials read on a connection bound to the reply's org (skillet_channel_secrets)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def lookup(self, organization_id: uuid.UUID, route: Route) -> SendCredentials:
        async with org_connection(self._pool, organization_id) as conn:
            found = await fetch_send_credentials(conn, route.kind, route.address)
        return found or NO_SEND_CREDENTIALS

    async def needs_token(self, organization_id: uuid.UUID, route: Route) -> None:
        async with org_connection(self._pool, organization_id) as conn:
            if await mark_needs_token(conn, route.kind, route.address):
                log.warning(
                    "channel.needs_token",
                    organization_id=str(organization_id),
                    kind=route.kind,
                    address=route.address,
                )


class ChannelSender:
    """Routes each reply to the sender of its channel kind (`Recipient.route.kind`).

    A reply without a route (its message did not come through the webhook and the org has no
    single channel to fall back on) goes to `unrouted`, or fails with `no_channel` when that
    is None. A routed reply whose customer last wrote `window` ago or more is not attempted:
    outside the customer-service window WhatsApp only takes template messages.
    A routed reply leaves with its number's own credentials (`credentials`; None: the global
    ones only). A number whose own token Meta refused (190) is marked `needs_token`, and its
    replies wait (SendParked) until a new token resumes them (jobs.channel_resume); a refused
    global token fails the reply as `channel_unauthorized`, as before.
    A file part's bytes are read from `files` (the skills' store) at send time; a choices
    part goes through its kind's send_choices.
    """

    def __init__(
        self,
        senders: Mapping[str, KindSender],
        *,
        unrouted: Sender | None,
        window: timedelta = CUSTOMER_SERVICE_WINDOW,
        clock: Callable[[], datetime] = _utc_now,
        credentials: Credentials | None = None,
        files: FileSource | None = None,
    ) -> None:
        self._files = files
        self._senders = dict(senders)
        self._unrouted = unrouted
        self._window = window
        self._clock = clock
        self._credentials = credentials

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        route = recipient.route
        if route is None:
            if self._unrouted is None:
                raise send_failed(SendFailure.NO_CHANNEL, "the organization has no channel")
            log.info("outbox.unrouted", outbox_id=str(row.id))
            return await self._unrouted.send(row, recipient)
        sender = self._senders.get(route.kind)
        if sender is None:
            raise send_failed(
                SendFailure.NOT_CONFIGURED, f"no sender for channel kind {route.kind}"
            )
        last = recipient.last_inbound_at
        # A template is what WhatsApp takes outside the window: the only row sent past it.
        if (
            row.template is None
            and last is not None
            and outside_window(last, self._clock(), self._window)
        ):
            hours = self._window.total_seconds() / 3600
            raise send_failed(
                SendFailure.OUTSIDE_WINDOW,
                f"the customer last wrote at {last.isoformat()}, {hours:g} h or more ago: "
                "outside the customer-service window only template messages are allowed",
            )
        credentials = self._credentials
        found = (
            NO_SEND_CREDENTIALS
            if credentials is None
            else await credentials.lookup(row.organization_id, route)
        )
        if found.status is ChannelStatus.NEEDS_TOKEN:
            raise send_parked(f"{route.kind} {route.address} waits for a new access token")
        try:
            return await self._send_part(sender, row, recipient, found)
        except SendError as exc:
            if exc.code != SendFailure.NEEDS_TOKEN.value:
                raise
            if credentials is None or found.access_token is None:
                # The global token: the operator's to replace for every number (alerted as
                # any failure), not this number's to wait for.
                raise send_failed(SendFailure.UNAUTHORIZED, exc.message) from exc
            await credentials.needs_token(row.organization_id, route)
            raise  # parked, or failed when a first part had already gone out

    async def _send_part(
        self, sender: KindSender, row: OutboxRow, recipient: Recipient, found: SendCredentials
    ) -> Sequence[str] | None:
        """The row as what it is: a file part, a choices part, or text (or a template)."""
        if row.file is not None:
            data = await file_bytes(self._files, row.organization_id, row.file)
            return await sender.send_file(row, recipient, found, data)
        if row.choices is not None:
            return await sender.send_choices(row, recipient, found)
        return await sender.send(row, recipient, found)
