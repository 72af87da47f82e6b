"""The soak scenario at small size: 4 worker processes, duplicates, one SIGKILL, and a person
who takes over conversations through a `skillet api` process, answers them and gives them
back; and the soak's own counter of agent replies committed while a person held one."""

from __future__ import annotations

import asyncpg
import pytest

from conversation.person_actions import Actor, release, take_over
from tests.integration.support import create_org
from tests.soak import mode_audit
from tests.soak.run import SoakPlan, run_soak
from worker.settings import Settings


@pytest.mark.timeout(300)
async def test_small_soak_loses_nothing_and_answers_once_in_order(
    settings: Settings, db: asyncpg.Connection
) -> None:
    plan = SoakPlan(
        messages=400,
        conversations=40,
        workers=4,
        duplicate_share=0.10,
        kill_one_worker=True,
        restart_postgres=None,  # the suite's own connections share that server
        model_latency_ms=20,
        round_gap_s=0.1,
        takeover_share=0.05,
    )
    report = await run_soak(settings, plan)
    assert any(e.startswith("SIGKILL") for e in report.events), report.events
    assert (report.lost, report.duplicate_replies, report.out_of_order) == (0, 0, 0)
    assert report.photo_only_replies == 0
    assert report.agent_replies_while_human == 0
    # 2 of 40 conversations taken over and given back; the person answered what arrived.
    assert (report.takeovers, report.releases) == (2, 2), report.events
    assert report.person_replies >= 2
    assert report.sent >= plan.conversations


async def test_the_soak_counts_an_agent_reply_committed_while_a_person_holds_it(
    settings: Settings, db: asyncpg.Connection
) -> None:
    """The counter is not vacuous: an agent reply written past the fence (as a bug would)
    while a person holds the conversation counts; one before the takeover and one after the
    release do not."""
    org = await create_org(db)
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'local', '5511999990000') returning id",
        org,
    )
    insert_agent_reply = (
        "insert into messages (organization_id, conversation_id, direction, channel, body,"
        " author) values ($1, $2, 'outbound', 'local', 'oi', 'agent')"
    )
    actor = Actor(org, "skt_person", may_force=False)
    await mode_audit.install(db)
    try:
        await db.execute(insert_agent_reply, org, conversation)
        await take_over(db, actor, conversation, force=False)
        await db.execute(insert_agent_reply, org, conversation)
        await release(db, actor, conversation, answer_pending=False)
        await db.execute(insert_agent_reply, org, conversation)
        assert await mode_audit.agent_replies_while_human(db, org) == 1
        assert await mode_audit.mode_changes(db, org) == (1, 1)
    finally:
        await mode_audit.uninstall(db)
