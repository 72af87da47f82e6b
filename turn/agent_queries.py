"""SQL of agents as the CLI manages them: persona, name and model (the turn reads them in
conversation.queries)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class Agent:
    id: uuid.UUID
    organization_id: uuid.UUID
    name: str
    system_prompt: str
    model_provider: str | None  # None: the worker's default model (SKILLET_MODEL)
    model_name: str | None
    created_at: datetime
    # What it tells a customer who asked for a person, and one left waiting (None: the
    # pt-BR defaults of conversation.handoff.texts).
    handoff_ack: str | None = None
    handoff_wait_notice: str | None = None
    vision: bool = False  # its model takes images: a customer's photo goes to it as one

    def as_json(self) -> dict[str, str | bool | None]:
        return {
            "id": str(self.id),
            "organization_id": str(self.organization_id),
            "name": self.name,
            "system_prompt": self.system_prompt,
            "model_provider": self.model_provider,
            "model_name": self.model_name,
            "created_at": self.created_at.isoformat(),
            "handoff_ack": self.handoff_ack,
            "handoff_wait_notice": self.handoff_wait_notice,
            "vision": self.vision,
        }


_COLUMNS = """id, organization_id, name, system_prompt, model_provider, model_name, created_at,
    handoff_ack, handoff_wait_notice, vision"""

INSERT_AGENT = f"""
insert into agents (organization_id, name, system_prompt, model_provider, model_name)
values ($1, $2, $3, $4, $5)
returning {_COLUMNS}
"""


async def create_agent(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    name: str,
    system_prompt: str,
    model_provider: str | None = None,
    model_name: str | None = None,
) -> Agent:
    row = await conn.fetchrow(
        INSERT_AGENT, organization_id, name, system_prompt, model_provider, model_name
    )
    return Agent(**dict(row))


LIST_AGENTS = f"""
select {_COLUMNS} from agents where organization_id = $1 order by created_at, id
"""


async def list_agents(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[Agent]:
    """The org's agents; the first answers numbers that name no agent."""
    return [Agent(**dict(r)) for r in await conn.fetch(LIST_AGENTS, organization_id)]


FETCH_AGENT = f"select {_COLUMNS} from agents where id = $1"


async def fetch_agent(conn: asyncpg.Connection, agent_id: uuid.UUID) -> Agent | None:
    row = await conn.fetchrow(FETCH_AGENT, agent_id)
    return None if row is None else Agent(**dict(row))


UPDATE_AGENT = f"""
update agents set name = $2, system_prompt = $3, model_provider = $4, model_name = $5,
    handoff_ack = $6, handoff_wait_notice = $7, vision = $8
where id = $1
returning {_COLUMNS}
"""


async def update_agent(conn: asyncpg.Connection, agent: Agent) -> Agent:
    """Write `agent`'s name, prompt, model, handoff texts and vision over the stored row."""
    row = await conn.fetchrow(
        UPDATE_AGENT,
        agent.id,
        agent.name,
        agent.system_prompt,
        agent.model_provider,
        agent.model_name,
        agent.handoff_ack,
        agent.handoff_wait_notice,
        agent.vision,
    )
    return Agent(**dict(row))


@dataclass(frozen=True)
class OrgAgent:
    organization_id: uuid.UUID
    system_prompt: str | None


FETCH_ORG_AGENT = """
select o.id, a.system_prompt
from organizations o
left join lateral (
    select system_prompt from agents
    where organization_id = o.id order by created_at, id limit 1
) a on true
where o.id = $1
"""


async def fetch_org_agent(conn: asyncpg.Connection, organization_id: uuid.UUID) -> OrgAgent | None:
    """The org and its agent's system prompt (None when the org has no agent yet)."""
    row = await conn.fetchrow(FETCH_ORG_AGENT, organization_id)
    if row is None:
        return None
    return OrgAgent(organization_id=row["id"], system_prompt=row["system_prompt"])


async def insert_agent(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, system_prompt: str
) -> uuid.UUID:
    """An agent on the worker's default model; its id (see create_agent)."""
    agent = await create_agent(conn, organization_id, name=name, system_prompt=system_prompt)
    return agent.id


FETCH_HANDOFF_ACK = "select handoff_ack from agents where id = $1"


async def fetch_handoff_ack(conn: asyncpg.Connection, agent_id: uuid.UUID | None) -> str | None:
    """The agent's acknowledgement of a customer's request for a person (None: the default)."""
    if agent_id is None:
        return None
    value: str | None = await conn.fetchval(FETCH_HANDOFF_ACK, agent_id)
    return value
