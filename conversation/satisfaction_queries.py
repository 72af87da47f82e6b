"""SQL of satisfaction: the org's settings, the question asked on a release, the customer's
tap and comment, and the answers listed for the business. The caller owns the transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from conversation.satisfaction import (
    MAX_COMMENT_CHARS,
    QUESTION,
    question_choices,
)
from delivery.outbound_choices import history_note


@dataclass(frozen=True)
class SatisfactionSettings:
    enabled: bool
    buttons: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "satisfaction": "on" if self.enabled else "off",
            "satisfaction_buttons": list(self.buttons),
        }


FETCH_SETTINGS = """
select satisfaction, satisfaction_buttons from organizations where id = $1
"""


async def fetch_satisfaction_settings(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> SatisfactionSettings | None:
    row = await conn.fetchrow(FETCH_SETTINGS, organization_id)
    if row is None:
        return None
    return SatisfactionSettings(row["satisfaction"], tuple(row["satisfaction_buttons"]))


UPDATE_SETTINGS = """
with previous as (
    select satisfaction, satisfaction_buttons from organizations where id = $1 for update
)
update organizations o
set satisfaction = coalesce($2, o.satisfaction),
    satisfaction_buttons = coalesce($3, o.satisfaction_buttons)
from previous where o.id = $1
returning previous.satisfaction, previous.satisfaction_buttons
"""


async def update_satisfaction_settings(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    enabled: bool | None,
    buttons: tuple[str, str, str] | None,
) -> SatisfactionSettings | None:
    """Change what is given; the settings it replaced (None: no such org)."""
    row = await conn.fetchrow(
        UPDATE_SETTINGS, organization_id, enabled, None if buttons is None else list(buttons)
    )
    if row is None:
        return None
    return SatisfactionSettings(row["satisfaction"], tuple(row["satisfaction_buttons"]))


# One statement, under the release's lock of the conversation: the customer last wrote less
# than 24 hours ago (a free-form message may still go) and has not opted out; no question yet
# this org-day (the org's time zone). Then the question (an outbound message that answers no
# one, routed by the customer's last message; its stored body ends with the options, $6), its
# survey row, and its outbox row: the choices part alone ($7), part 0, its text $8.
INSERT_QUESTION = """
with last_in as (
    select m.id, coalesce(m.sent_at, m.received_at, m.created_at) as at
    from messages m
    where m.organization_id = $1 and m.conversation_id = $2 and m.direction = 'inbound'
    order by coalesce(m.received_at, m.created_at) desc, m.id desc
    limit 1
), today as (
    select (now() at time zone coalesce(
        (select h.timezone from org_business_hours h where h.organization_id = $1),
        'America/Sao_Paulo'))::date as d
), eligible as (
    select last_in.id as route_via, today.d
    from last_in, today
    where last_in.at > now() - interval '24 hours'
      and not skillet_contact_opted_out($1, $4)
      and not exists (select 1 from satisfaction_surveys s
                      where s.conversation_id = $2 and s.org_day = today.d)
), question as (
    insert into messages (organization_id, conversation_id, direction, channel, body, author,
                          route_via_id, created_at)
    select $1, $2, 'outbound', $3, $6, 'agent', eligible.route_via, clock_timestamp()
    from eligible
    returning id
), survey as (
    insert into satisfaction_surveys (organization_id, conversation_id, question_id, held_by,
                                      org_day)
    select $1, $2, question.id, $5, eligible.d from question, eligible
    returning id
), queued as (
    insert into outbox (organization_id, conversation_id, message_id, body, choices)
    select $1, $2, question.id, $8, $7::jsonb from question
    returning id
)
select question.id from question, survey, queued
"""


async def insert_question(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    *,
    channel: str,
    contact_id: str,
    held_by: str,
) -> uuid.UUID | None:
    """Ask the customer, when the org asks and every rule allows; the question's message
    id, or None."""
    settings = await fetch_satisfaction_settings(conn, organization_id)
    if settings is None or not settings.enabled:
        return None
    choices = question_choices(settings.buttons)
    found: uuid.UUID | None = await conn.fetchval(
        INSERT_QUESTION,
        organization_id,
        conversation_id,
        channel,
        contact_id,
        held_by[:64],
        QUESTION + history_note(choices),
        choices.as_json(),  # the pool's jsonb codec encodes it
        QUESTION,
    )
    return found


# The latest survey of the tap's conversation asked before it and not answered: the tap is its
# answer. The tap is kept as context either way (the agent never answers it).
RECORD_TAP = """
with tap as (
    select m.id, m.conversation_id, m.created_at from messages m
    where m.id = $1 and m.direction = 'inbound'
), kept as (
    update messages m set context_at = now()
    from tap where m.id = tap.id and m.answered_by is null and m.context_at is null
), open as (
    select s.id from satisfaction_surveys s, tap
    where s.conversation_id = tap.conversation_id and s.answered_at is null
      and s.asked_at <= tap.created_at
    order by s.asked_at desc
    limit 1
    for update of s
)
update satisfaction_surveys s
set score = $2, answer = left($3, 20), answer_message_id = $1, answered_at = now()
from open where s.id = open.id
returning s.id
"""


async def record_tap(
    conn: asyncpg.Connection, message_id: uuid.UUID, score: int, answer: str
) -> bool:
    """Record the tap on its open survey (False: none was open); kept as context either way."""
    return await conn.fetchval(RECORD_TAP, message_id, score, answer) is not None


# A text whose previous message in the conversation (either way) is a survey's tap: its
# comment, once.
RECORD_COMMENT = f"""
update satisfaction_surveys s
set comment = left(m.body, {MAX_COMMENT_CHARS}), comment_message_id = m.id
from messages m
where m.id = $1 and m.direction = 'inbound'
  and s.conversation_id = m.conversation_id and s.comment_message_id is null
  and s.answer_message_id = (
      select p.id from messages p
      where p.conversation_id = m.conversation_id and p.id <> m.id
        and (p.created_at, p.id) < (m.created_at, m.id)
      order by p.created_at desc, p.id desc
      limit 1)
returning s.id
"""


async def record_comment(conn: asyncpg.Connection, message_id: uuid.UUID) -> bool:
    return await conn.fetchval(RECORD_COMMENT, message_id) is not None


@dataclass(frozen=True)
class Answer:
    conversation_id: uuid.UUID
    held_by: str
    person_id: uuid.UUID | None
    person_name: str | None
    score: int
    answer: str
    comment: str | None
    asked_at: datetime
    answered_at: datetime


LIST_ANSWERS = """
select s.conversation_id, s.held_by, p.id as person_id, p.name as person_name, s.score,
       s.answer, s.comment, s.asked_at, s.answered_at
from satisfaction_surveys s
left join people p on s.held_by like 'person:%' and p.organization_id = s.organization_id
    and 'person:' || p.id::text = s.held_by
where s.organization_id = $1 and s.answered_at >= $2 and s.answered_at < $3
order by s.answered_at, s.id
limit $4
"""


async def list_answers(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    start: datetime,
    end: datetime,
    limit: int,
) -> list[Answer]:
    rows = await conn.fetch(LIST_ANSWERS, organization_id, start, end, limit)
    return [Answer(**dict(r)) for r in rows]


@dataclass(frozen=True)
class ScoreGroup:
    """Answers of one person (held_by) or one week: how many, each score's count, the mean."""

    key: str
    person_name: str | None
    answers: int
    good: int
    ok: int
    bad: int
    score: float


_GROUPS = """
select {key} as key, {name} as person_name, count(*) as answers,
       count(*) filter (where s.score = 3) as good, count(*) filter (where s.score = 2) as ok,
       count(*) filter (where s.score = 1) as bad, round(avg(s.score), 2)::float8 as score
from satisfaction_surveys s
left join people p on s.held_by like 'person:%' and p.organization_id = s.organization_id
    and 'person:' || p.id::text = s.held_by
where s.organization_id = $1 and s.answered_at >= $2 and s.answered_at < $3
group by {group}
order by 1
"""
# Per person: held_by; per week: the Monday of the answer's week in the org's time zone ($4).
BY_PERSON = _GROUPS.format(key="s.held_by", name="max(p.name)", group="1")
BY_WEEK = _GROUPS.format(
    key="to_char(date_trunc('week', s.answered_at at time zone $4), 'YYYY-MM-DD')",
    name="null::text",
    group="1, 2",
)


async def list_score_groups(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    start: datetime,
    end: datetime,
    timezone: str,
) -> tuple[list[ScoreGroup], list[ScoreGroup]]:
    """(per person, per week) over the answers of [start, end)."""
    people = await conn.fetch(BY_PERSON, organization_id, start, end)
    weeks = await conn.fetch(BY_WEEK, organization_id, start, end, timezone)
    return [ScoreGroup(**dict(r)) for r in people], [ScoreGroup(**dict(r)) for r in weeks]
