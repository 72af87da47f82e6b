"""The soak scenario shared by bench/soak.py and its small-size test."""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
import subprocess
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg

from core.db import connect, create_pool
from core.db_errors import DATABASE_ERRORS
from core.errors import DatabaseUnavailable
from core.organizations import insert_organization
from inbox.message import InboundMessage
from jobs.queue import enqueue_inbound, open_queue
from tests.integration.support import SKILLET, worker_env
from tests.soak import mode_audit
from tests.soak.person import Person
from turn.agent_queries import insert_agent
from worker.settings import Settings


@dataclass(frozen=True)
class SoakPlan:
    messages: int
    conversations: int
    workers: int
    duplicate_share: float = 0.10
    # Photos on a number that does not answer them: stored, never answered on their own.
    media_share: float = 0.10
    kill_one_worker: bool = True
    # Restarts the Postgres the soak runs on, at half: only one of the soak's own (bench/soak.py
    # starts one); the suite's server is shared with everyone's connections.
    restart_postgres: Callable[[], None] | None = None
    # FLUSHALL at three quarters: only with a Redis of the soak's own (bench/soak.py).
    wipe_redis: bool = False
    add_workers: int = 0  # started when a quarter of the messages are answered
    drain_workers: int = 0  # SIGTERMed (drained, not replaced) at half
    model_latency_ms: int = 20
    round_gap_s: float = 0.2
    timeout_s: float = 600.0
    # A person (over the API of a `skillet api` process) takes over this share of the
    # conversations at `takeover_at` of the rounds, answers them, and gives them back at
    # `release_at` (0: no person).
    takeover_share: float = 0.05
    takeover_at: float = 0.3
    release_at: float = 0.6


@dataclass
class SoakReport:
    sent: int = 0
    lost: int = 0  # messages expecting a reply that got none (or no stored row, for photos)
    duplicate_replies: int = 0
    out_of_order: int = 0
    photo_only_replies: int = 0  # agent replies that answered nothing but photos
    agent_replies_while_human: int = 0  # committed while a person held the conversation
    person_replies: int = 0
    takeovers: int = 0  # committed changes to 'human' (the DB's audit)
    releases: int = 0  # and back to 'agent'
    events: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicate_replies
            or self.out_of_order
            or self.photo_only_replies
            or self.agent_replies_while_human
        )


def _worker_env(settings: Settings, plan: SoakPlan) -> dict[str, str]:
    return worker_env(
        settings,
        SKILLET_MAX_JOBS="20",
        SKILLET_LOCAL_MODEL_LATENCY_MS=str(plan.model_latency_ms),
        SKILLET_JOB_TIMEOUT_S="10",  # a killed worker's jobs re-run after 10 + 10 s
        SKILLET_CURATOR_ENABLED="false",
        SKILLET_CURATOR_TIMEOUT_S="10",
        SKILLET_CONVERSATION_LEASE_MS="5000",
        SKILLET_RETRY_DEFER_S="0.5",
        SKILLET_MAX_TRIES="20",
        SKILLET_LOG_LEVEL="WARNING",
    )


def _start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SKILLET, "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@dataclass
class _Scaling:
    """Scales the fleet mid-load: adds `plan.add_workers`, then drains `plan.drain_workers`
    of the original ones with SIGTERM (as `docker compose up --scale` does)."""

    plan: SoakPlan
    env: dict[str, str]
    added: bool = False
    drained: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def step(self, done: int, workers: list[subprocess.Popen[bytes]], report: SoakReport) -> None:
        plan = self.plan
        if plan.add_workers and not self.added and done >= plan.messages // 4:
            workers.extend(_start_worker(self.env) for _ in range(plan.add_workers))
            self.added = True
            report.events.append(f"added {plan.add_workers} worker(s) at {done} answered")
        if plan.drain_workers and not self.drained and done >= plan.messages // 2:
            self.drained = [workers.pop(0) for _ in range(plan.drain_workers)]
            for worker in self.drained:
                worker.send_signal(signal.SIGTERM)
            report.events.append(f"SIGTERM {plan.drain_workers} worker(s) at {done} answered")

    async def finish(self, report: SoakReport) -> None:
        for worker in self.drained:
            try:
                code = await asyncio.to_thread(worker.wait, 60)
            except subprocess.TimeoutExpired:
                worker.kill()
                code = None
            report.events.append(f"drained worker exited {code}")


def _message_plan(org: uuid.UUID, plan: SoakPlan) -> list[tuple[InboundMessage, str]]:
    """(payload, how it is delivered): 'first', 'duplicate' (arq dedup) or 'late' (bypass)."""
    rng = random.Random(7)
    out: list[tuple[InboundMessage, str]] = []
    for n in range(plan.messages):
        conv, seq = n % plan.conversations, n // plan.conversations
        photo = rng.random() < plan.media_share
        message = InboundMessage(
            organization_id=org,
            contact_id=f"5511{conv:08d}",
            message_id=f"soak-{conv}-{seq}",
            text=f"[imagem] foto {seq}" if photo else f"mensagem {seq} da conversa {conv}: frete?",
            sent_at=datetime.now(UTC),
            kind="image" if photo else "text",
            expects_reply=not photo,
        )
        out.append((message, "first"))
        if rng.random() < plan.duplicate_share:
            out.append((message, rng.choice(["duplicate", "late"])))
    return out


async def _produce(
    settings: Settings,
    deliveries: list[tuple[InboundMessage, str]],
    plan: SoakPlan,
    between_rounds: Callable[[int], Awaitable[None]],
) -> None:
    """Deliver in rounds (one message per conversation each), a short gap between rounds,
    like customers typing: some messages coalesce into bursts, most get their own turn."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    pool = await create_pool(settings.database_url, min_size=1, max_size=4)
    try:
        for n, (message, how) in enumerate(deliveries):
            if n and n % plan.conversations == 0:
                await asyncio.sleep(plan.round_gap_s)
                await between_rounds(n // plan.conversations)
            # "late": a redelivery the queue no longer remembers (another job id)
            job_id = f"late-{uuid.uuid4()}" if how == "late" else None
            await _deliver(pool, redis, message, job_id=job_id)
    finally:
        await pool.close()
        await redis.aclose()


async def _deliver(
    pool: Any, redis: Any, message: InboundMessage, *, job_id: str | None = None
) -> None:
    """Like WhatsApp redelivering after a 503: the message is stored before it is enqueued,
    so while Postgres restarts the delivery is retried (idempotent) until it lands."""
    for _ in range(600):
        try:
            await enqueue_inbound(pool, redis, message, job_id=job_id)
            return
        except (*DATABASE_ERRORS, DatabaseUnavailable):
            await asyncio.sleep(0.1)
    raise RuntimeError(f"message {message.message_id} could not be delivered in 60 s")


# Answered means the reply reached the sender, not just that it was committed.
ANSWERED = """
select count(*) from messages i join outbox o on o.message_id = i.answered_by
where i.organization_id = $1 and i.direction = 'inbound' and i.expects_reply
  and o.status = 'sent'
"""


async def _answered(settings: Settings, org: uuid.UUID) -> int | None:
    try:
        conn = await connect(settings.database_url)
    except (OSError, asyncpg.PostgresError):
        return None  # Postgres is restarting
    try:
        return int(await conn.fetchval(ANSWERED, org))
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        return None
    finally:
        await conn.close()


async def _watch(
    settings: Settings,
    org: uuid.UUID,
    plan: SoakPlan,
    env: dict[str, str],
    workers: list[subprocess.Popen[bytes]],
    report: SoakReport,
    scaling: _Scaling,
) -> None:
    killed = restarted = wiped = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + plan.timeout_s
    restart = plan.restart_postgres
    target = len(_expected(org, plan, expects_reply=True))
    while loop.time() < deadline:
        done = await _answered(settings, org)
        if done is not None and done >= target:
            return
        if done is not None and plan.kill_one_worker and not killed and done >= plan.messages // 4:
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait()
            workers[0] = _start_worker(env)
            killed = True
            report.events.append(f"SIGKILL worker at {done} answered")
        if done is not None and restart and not restarted and done >= plan.messages // 2:
            await asyncio.to_thread(restart)
            restarted = True
            report.events.append(f"Postgres restarted at {done} answered")
        if done is not None and plan.wipe_redis and not wiped and done >= plan.messages * 3 // 4:
            await _wipe_redis(settings)
            wiped = True
            report.events.append(f"Redis wiped at {done} answered")
        if done is not None:
            scaling.step(done, workers, report)
        await asyncio.sleep(0.2)
    report.events.append("timed out")


async def _wipe_redis(settings: Settings) -> None:
    """Every queued job and result gone at once, as a Redis that lost its data: the messages
    are in Postgres, and the conversation sweep must wake what waits."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        await redis.flushall()
    finally:
        await redis.aclose()


VERIFY_LOST = """
select count(*) from unnest($2::text[]) as expected(external_id)
where not exists (
    select 1 from messages m join outbox o on o.message_id = m.answered_by
    where m.organization_id = $1 and m.direction = 'inbound'
      and m.external_id = expected.external_id and o.status = 'sent'
)
"""

# Over every reply, the agent's and the person's: one sent twice, two agent replies to one
# message, an agent reply to a message another reply answered, a person's reply that
# answered no one (the person only writes when the console shows a message unanswered).
VERIFY_DUPLICATES = """
select
    (select count(*) from outbox where organization_id = $1 and attempts > 1)
  + (select count(*) from (
        select reply_to_id from messages where organization_id = $1 and direction = 'outbound'
          and reply_to_id is not null
        group by reply_to_id having count(*) > 1) d)
  + (select count(*) from messages r join messages i on i.id = r.reply_to_id
     where r.organization_id = $1 and r.direction = 'outbound'
       and i.answered_by is distinct from r.id)
  + (select count(*) from messages r
     where r.organization_id = $1 and r.direction = 'outbound' and r.author = 'person'
       and not exists (select 1 from messages i where i.answered_by = r.id))
"""

VERIFY_ORDER = """
select c.contact_id, i.external_id
from messages i
join messages r on r.id = i.answered_by
join conversations c on c.id = i.conversation_id
where i.organization_id = $1 and i.direction = 'inbound'
order by c.contact_id, r.created_at, r.id, i.received_at, i.id
"""


VERIFY_STORED = """
select count(*) from unnest($2::text[]) as expected(external_id)
where not exists (
    select 1 from messages m
    where m.organization_id = $1 and m.direction = 'inbound'
      and m.external_id = expected.external_id and not m.expects_reply and m.kind = 'image'
)
"""


# The agent's rule (a person may well answer a photo).
VERIFY_PHOTO_ONLY_REPLIES = """
select count(*) from messages r
where r.organization_id = $1 and r.direction = 'outbound' and r.author = 'agent'
  and not exists (select 1 from messages i where i.answered_by = r.id and i.expects_reply)
"""


def _expected(org: uuid.UUID, plan: SoakPlan, *, expects_reply: bool) -> list[str]:
    return [
        message.message_id
        for message, how in _message_plan(org, plan)
        if how == "first" and message.expects_reply is expects_reply
    ]


async def _verify(settings: Settings, org: uuid.UUID, plan: SoakPlan, report: SoakReport) -> None:
    expected = _expected(org, plan, expects_reply=True)
    photos = _expected(org, plan, expects_reply=False)
    conn = await connect(settings.database_url)
    try:
        report.lost = int(await conn.fetchval(VERIFY_LOST, org, expected))
        report.lost += int(await conn.fetchval(VERIFY_STORED, org, photos))
        report.duplicate_replies = int(await conn.fetchval(VERIFY_DUPLICATES, org))
        report.photo_only_replies = int(await conn.fetchval(VERIFY_PHOTO_ONLY_REPLIES, org))
        report.agent_replies_while_human = await mode_audit.agent_replies_while_human(conn, org)
        report.takeovers, report.releases = await mode_audit.mode_changes(conn, org)
        report.person_replies = int(
            await conn.fetchval(
                "select count(*) from messages where organization_id = $1 and author = 'person'",
                org,
            )
        )
        report.sent = int(
            await conn.fetchval(
                "select count(*) from outbox where organization_id = $1 and status = 'sent'", org
            )
        )
        answered_order: dict[str, list[int]] = {}
        for row in await conn.fetch(VERIFY_ORDER, org):
            seq = int(row["external_id"].rsplit("-", 1)[1])
            answered_order.setdefault(row["contact_id"], []).append(seq)
    finally:
        await conn.close()
    # A message answered by a reply earlier than an older message's reply is out of order.
    report.out_of_order = sum(
        1 for seqs in answered_order.values() for a, b in itertools.pairwise(seqs) if b < a
    )


@dataclass
class _Handover:
    """When the person takes over (without waiting: turns are running) and gives back (the
    producer waits: the person gives a conversation back when its customer is quiet and
    everything is answered, else a message would be kept as context and answered by no one)."""

    plan: SoakPlan
    person: Person
    report: SoakReport
    rounds: int
    taking: asyncio.Task[None] | None = None

    def contacts(self) -> list[str]:
        count = round(self.plan.conversations * self.plan.takeover_share)
        if not count:
            return []
        step = self.plan.conversations // count
        return [f"5511{n * step + step // 2:08d}" for n in range(count)]

    async def _take(self, at_round: int) -> None:
        conversations = await self.person.find(self.contacts())
        await self.person.take_over(conversations)
        self.report.events.append(f"took over {len(conversations)} at round {at_round}")

    async def between_rounds(self, at_round: int) -> None:
        if not self.contacts():
            return
        if at_round == max(1, int(self.rounds * self.plan.takeover_at)):
            self.taking = asyncio.create_task(self._take(at_round))
        if at_round == int(self.rounds * self.plan.release_at) and self.taking is not None:
            await self.taking
            held = len(self.person.held)
            await self.person.release()
            self.report.events.append(f"released {held} at round {at_round}")


async def run_soak(settings: Settings, plan: SoakPlan) -> SoakReport:
    org = uuid.uuid4()
    conn = await connect(settings.owner_url)
    try:
        await insert_organization(conn, org, "Soak")
        await insert_agent(conn, org, "Soak", "Você é o assistente do teste de resistência.")
        await mode_audit.install(conn)
    finally:
        await conn.close()
    try:
        return await _run(settings, plan, org)
    finally:
        conn = await connect(settings.owner_url)
        try:
            await mode_audit.uninstall(conn)
        finally:
            await conn.close()


async def _run(settings: Settings, plan: SoakPlan, org: uuid.UUID) -> SoakReport:
    env = _worker_env(settings, plan)
    report = SoakReport()
    person = Person(env, org)
    await person.start()
    workers = [_start_worker(env) for _ in range(plan.workers)]
    scaling = _Scaling(plan, env)
    deliveries = _message_plan(org, plan)
    handover = _Handover(plan, person, report, len(deliveries) // plan.conversations)
    try:
        producer = asyncio.create_task(
            _produce(settings, deliveries, plan, handover.between_rounds)
        )
        watch = asyncio.create_task(_watch(settings, org, plan, env, workers, report, scaling))
        # A producer that fails must end the soak with its error, not look like a hang.
        await asyncio.wait({producer, watch}, return_when=asyncio.FIRST_EXCEPTION)
        if producer.done() and producer.exception() is not None:
            watch.cancel()
        await producer
        await watch
    finally:
        await person.stop()
        await scaling.finish(report)
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
    if person.failed_requests:
        report.events.append(f"person's requests tried again: {person.failed_requests}")
    await _verify(settings, org, plan, report)
    return report
