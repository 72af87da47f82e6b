"""Routes of an org's WhatsApp numbers (channels): list, connect, change. Each change is
audited in its own transaction.

Connecting a number, or giving it a new token or WAHA server, proves ownership first
(channels.connect): nothing is looked up or stored before the provider confirms that the
credentials given control the number. A number of another org answers as one the token
cannot see (`channel_not_verified`) unless the token proves it (`channel_claimed_elsewhere`).
Secrets are stored through skillet_store_channel_secrets and never answered: listings show
their last four characters.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime

import asyncpg
import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.bodies import read_json
from api.errors import invalid, not_found
from api.pagination import page_sorted, time_id_keyset
from api.routing import Principal, Reply, deps_of, org_db
from channels.connect import (
    Credentials,
    NewChannel,
    Prover,
    check_credentials,
    insert_proven_channel,
)
from channels.credential_queries import (
    MAX_TOKEN_CHARS,
    MAX_WAHA_KEY_CHARS,
    store_channel_secrets,
    update_channel_credentials,
)
from channels.models import Channel
from channels.ownership import ChannelNotVerified, Verified
from channels.queries import UNCHANGED, fetch_channel_by_address, list_channels, update_channel
from core.audit import AuditEntry, insert_audit
from core.channel_kind import ChannelKind
from jobs.channel_resume import wake_waiting_replies
from turn.agent_queries import fetch_agent

log = structlog.get_logger(__name__)

# Same rule as the `channels.address` check constraint (channels_address_check).
_ADDRESS_RE = re.compile(r"^[0-9A-Za-z._:-]{1,128}$")


def _audit(principal: Principal, action: str, **detail: object) -> AuditEntry:
    return AuditEntry(principal.organization_id, principal.prefix, action, detail=dict(detail))


def _created(channel: Channel) -> tuple[datetime, uuid.UUID]:
    return channel.created_at, channel.id


async def list_channels_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        channels = await list_channels(conn, principal.organization_id)
    page = page_sorted(channels, request.query, "channels", _created, time_id_keyset)
    return {"items": [c.as_json() for c in page.items], "next": page.next}


class _CredentialFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    access_token: str | None = Field(default=None, max_length=MAX_TOKEN_CHARS)
    waba_id: str | None = Field(default=None, max_length=32)
    waha_base_url: str | None = Field(default=None, max_length=500)
    waha_api_key: str | None = Field(default=None, max_length=MAX_WAHA_KEY_CHARS)

    def credentials(self, kind: ChannelKind) -> Credentials:
        given = Credentials(
            access_token=None if self.access_token is None else self.access_token.strip(),
            waba_id=self.waba_id,
            waha_base_url=self.waha_base_url,
            waha_api_key=None if self.waha_api_key is None else self.waha_api_key.strip(),
        )
        return check_credentials(kind, given)


class ChannelRequest(_CredentialFields):
    kind: ChannelKind
    address: str
    agent_id: uuid.UUID | None = None
    display_phone: str | None = Field(default=None, max_length=32)
    reply_to_non_text: bool = False


async def _check_agent(conn: asyncpg.Connection, agent_id: uuid.UUID, org: uuid.UUID) -> None:
    agent = await fetch_agent(conn, agent_id)
    if agent is None or agent.organization_id != org:
        raise not_found("agent_not_found", "Esse agente não existe nesta organização.")


async def _prove(
    request: web.Request, kind: ChannelKind, address: str, given: Credentials
) -> Verified:
    prover: Prover | None = deps_of(request).prover
    if prover is None:
        raise ChannelNotVerified(
            "Este servidor não verifica números (sem acesso à Graph API ou ao WAHA); peça ao "
            "operador para conectá-lo."
        )
    return await prover.prove(kind, address, given, operator=False)


async def add_channel(request: web.Request, principal: Principal) -> Reply:
    wanted = await read_json(request, ChannelRequest)
    if not _ADDRESS_RE.match(wanted.address):
        raise invalid(
            "invalid_address",
            f"{wanted.address!r} não é um phone_number_id nem um nome de sessão "
            "(letras, números, . _ : -; até 128).",
        )
    given = wanted.credentials(wanted.kind)
    proven = await _prove(request, wanted.kind, wanted.address, given)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        if wanted.agent_id is not None:
            await _check_agent(conn, wanted.agent_id, org)
        new = NewChannel(
            organization_id=org,
            kind=wanted.kind,
            address=wanted.address,
            agent_id=wanted.agent_id,
            display_phone=wanted.display_phone,
            reply_to_non_text=wanted.reply_to_non_text,
        )
        channel = await insert_proven_channel(conn, new, given, proven)
        await _store_secrets(conn, channel, given)
        await insert_audit(
            conn,
            _audit(principal, "channel.add", kind=wanted.kind.value, address=wanted.address),
        )
    return channel.as_json()


async def _store_secrets(conn: asyncpg.Connection, channel: Channel, given: Credentials) -> None:
    if given.access_token is None and given.waha_api_key is None:
        return
    stored = await store_channel_secrets(
        conn, channel.id, access_token=given.access_token, waha_api_key=given.waha_api_key
    )
    assert stored  # the channel is the bound org's: written or read in this transaction


class ChannelChange(_CredentialFields):
    agent_id: uuid.UUID | None = None  # null: answered by the org's first agent
    reply_to_non_text: bool | None = None


def _kind(request: web.Request) -> ChannelKind:
    try:
        return ChannelKind(request.match_info["kind"])
    except ValueError:
        raise _channel_not_found() from None


def _channel_not_found() -> Exception:
    return not_found("channel_not_found", "Esse número não está conectado a esta organização.")


_CREDENTIAL_FIELDS = frozenset({"access_token", "waba_id", "waha_base_url", "waha_api_key"})


async def update_channel_route(request: web.Request, principal: Principal) -> Reply:
    kind, address = _kind(request), request.match_info["address"]
    change = await read_json(request, ChannelChange)
    given_fields = {f for f in change.model_fields_set if getattr(change, f) is not None}
    given_fields |= change.model_fields_set & {"agent_id"}
    if not given_fields:
        raise invalid(
            "nothing_to_change",
            "Nada a mudar: envie `agent_id`, `reply_to_non_text`, `access_token`, `waba_id` "
            "ou `waha_base_url` com `waha_api_key`.",
        )
    given = change.credentials(kind)
    secrets = given.access_token is not None or given.waha_api_key is not None
    if secrets or given.waha_base_url is not None:
        if kind is ChannelKind.WAHA and given.waha_base_url is None:
            raise invalid(
                "invalid_waha_base_url",
                "Uma chave de API do WAHA vale no servidor dela: envie waha_base_url também.",
            )
        await _prove(request, kind, address, given)  # before anything is looked up
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        channel = await fetch_channel_by_address(conn, kind, address)
        if channel is None or channel.organization_id != org:
            raise _channel_not_found()
        if change.agent_id is not None:
            await _check_agent(conn, change.agent_id, org)
        updated = await update_channel(
            conn,
            kind,
            address,
            agent_id=change.agent_id if "agent_id" in given_fields else UNCHANGED,
            reply_to_non_text=UNCHANGED
            if change.reply_to_non_text is None
            else change.reply_to_non_text,
        )
        assert updated is not None  # same transaction as the lookup
        if given_fields & _CREDENTIAL_FIELDS:
            updated = await update_channel_credentials(
                conn,
                channel.id,
                waba_id=UNCHANGED if given.waba_id is None else given.waba_id,
                waha_base_url=UNCHANGED if given.waha_base_url is None else given.waha_base_url,
                access_token=given.access_token,
                waha_api_key=given.waha_api_key,
            )
            assert updated is not None
            await _store_secrets(conn, updated, given)
        await insert_audit(
            conn,
            _audit(
                principal,
                "channel.update",
                kind=kind.value,
                address=address,
                fields=sorted(given_fields),
            ),
        )
    answer: Reply = updated.as_json()
    if secrets:
        answer["resumed_conversations"] = await _wake(request, principal)
    return answer


async def _wake(request: web.Request, principal: Principal) -> int:
    """A new token resumes the replies that waited for it (0 when the queue failed: logged;
    the customer's next message wakes its conversation anyway)."""
    try:
        async with org_db(request, principal) as conn:
            return await wake_waiting_replies(
                conn, deps_of(request).queue, principal.organization_id
            )
    except Exception as exc:  # the change is committed: say so, and log what was not woken
        log.error("channel.resume_failed", error=repr(exc)[:300])
        return 0
