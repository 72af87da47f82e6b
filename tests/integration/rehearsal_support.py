"""Seeding an org's customer history for rehearsal tests and the bench: conversations and
inbound messages written as the webhook and the turn leave them (owner connection)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

import asyncpg

from skills.models import SkillMatcher


async def conversation(db: asyncpg.Connection, org: uuid.UUID, contact: str) -> uuid.UUID:
    row = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        contact,
    )
    return uuid.UUID(str(row))


async def customer_messages(
    db: asyncpg.Connection,
    org: uuid.UUID,
    conversation_id: uuid.UUID,
    texts: Sequence[str],
    at: datetime,
    *,
    answered: bool = True,
) -> list[uuid.UUID]:
    """`texts` as one burst received at `at`; `answered`: one agent reply marks them all."""
    ids = []
    for i, text in enumerate(texts):
        ids.append(
            await db.fetchval(
                "insert into messages (organization_id, conversation_id, direction, channel, "
                "external_id, body, created_at, received_at) "
                "values ($1, $2, 'inbound', 'whatsapp', $3, $4, $5, $5) returning id",
                org,
                conversation_id,
                uuid.uuid4().hex,
                text,
                at + timedelta(seconds=i),
            )
        )
    if answered:
        reply = await db.fetchval(
            "insert into messages (organization_id, conversation_id, direction, channel, body, "
            "created_at) values ($1, $2, 'outbound', 'whatsapp', 'ok', $3) returning id",
            org,
            conversation_id,
            at + timedelta(seconds=len(texts)),
        )
        await db.execute("update messages set answered_by = $1 where id = any($2)", reply, ids)
    return ids


async def bulk_messages(
    db: asyncpg.Connection, org: uuid.UUID, texts: Sequence[str], newest: datetime
) -> None:
    """Each text its own burst (a conversation of its own), one second apart (COPY)."""
    conversations = [uuid.uuid4() for _ in texts]
    await db.copy_records_to_table(
        "conversations",
        records=[(c, org, "whatsapp", f"c{i}") for i, c in enumerate(conversations)],
        columns=["id", "organization_id", "channel", "contact_id"],
    )
    records = [
        (
            uuid.uuid4(),
            org,
            conversations[i],
            "inbound",
            "whatsapp",
            uuid.uuid4().hex,
            text,
            newest - timedelta(seconds=i),
            newest - timedelta(seconds=i),
        )
        for i, text in enumerate(texts)
    ]
    await db.copy_records_to_table(
        "messages",
        records=records,
        columns=[
            "id",
            "organization_id",
            "conversation_id",
            "direction",
            "channel",
            "external_id",
            "body",
            "created_at",
            "received_at",
        ],
    )


async def pending_draft(
    db: asyncpg.Connection, org: uuid.UUID, name: str, keywords: Sequence[str]
) -> uuid.UUID:
    """A pending draft of `name` (a new version of the installed one) with `keywords`."""
    version = uuid.uuid4()
    base = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2", org, name
    )
    await db.execute(
        "insert into skill_versions (id, organization_id, name, description, body, matcher, "
        "created_by) values ($1, $2, $3, $4, 'Novo corpo.', $5, 'agent')",
        version,
        org,
        name,
        f"Skill {name}",
        SkillMatcher(keywords).to_json(),
    )
    await db.execute(
        "insert into skill_drafts (id, organization_id, name, version_id, base_version_id) "
        "values ($1, $2, $3, $4, $5)",
        uuid.uuid4(),
        org,
        name,
        version,
        base,
    )
    return version


async def pending_proposal(
    db: asyncpg.Connection,
    org: uuid.UUID,
    umbrella: str,
    absorbed: str,
    keywords: Sequence[str],
) -> uuid.UUID:
    """A pending proposal: `umbrella` gets a version with `keywords`, `absorbed` archived."""
    version = uuid.uuid4()
    proposal = uuid.uuid4()
    await db.execute(
        "insert into skill_versions (id, organization_id, name, description, body, matcher, "
        "created_by) values ($1, $2, $3, 'Guarda-chuva', 'Corpo.', $4, 'agent')",
        version,
        org,
        umbrella,
        SkillMatcher(keywords).to_json(),
    )
    await db.execute(
        "insert into skill_proposals (id, organization_id, umbrella, version_id, backend, "
        "index_bytes_before, index_bytes_after) values ($1, $2, $3, $4, 'lexical', 0, 0)",
        proposal,
        org,
        umbrella,
        version,
    )
    for name, role in ((umbrella, "umbrella"), (absorbed, "absorbed")):
        await db.execute(
            "insert into skill_proposal_members (proposal_id, organization_id, name, role, "
            "version_id) select $1, $2, $3, $4, version_id from skill_pointers "
            "where organization_id = $2 and name = $3",
            proposal,
            org,
            name,
            role,
        )
    return proposal
