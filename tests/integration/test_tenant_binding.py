"""An org binding an injected statement cannot forge (skillet_bind_org with the org's proof):
as each process's real login, setting another org by hand, or calling the turn's binding
functions with its id, opens none of its rows; the processes' own bindings (with the org's
proof) still do."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from cli.main import main
from core.db import create_pool
from core.db_roles import API_ROLE, WEBHOOK_ROLE, WORKER_ROLE
from core.tenancy import BIND_ORGANIZATION, org_connection
from core.tenant_key import TenantKey, TenantSecretMismatch, TenantSecretMissing
from tests.integration.conftest import TENANT_SECRET
from tests.integration.support import create_org, publish, store_inbound
from tests.integration.test_database_roles import PASSWORDS, _as_user
from worker.resources import Resources
from worker.settings import Settings

GROUPS = {"worker": WORKER_ROLE, "webhook": WEBHOOK_ROLE, "api": API_ROLE}
KEY = TenantKey.from_setting(TENANT_SECRET)
ORG_ROWS = (
    "select count(*) from messages",
    "select count(*) from conversations",
    "select count(*) from agents",
)
SKILL_ROWS = (
    "select count(*) from skill_pointers where organization_id is not null",
    "select count(*) from skill_versions where organization_id is not null",
)


@pytest.fixture
def logins(env: Settings, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    assert main(["migrate", "--json"]) == 0
    return {p: _as_user(env.database_url, f"skillet_{p}_login") for p in GROUPS}


@pytest_asyncio.fixture(loop_scope="session")
async def victim(db: asyncpg.Connection, resources: Resources) -> AsyncIterator[uuid.UUID]:
    """Org B: a conversation with a message, a skill of its own."""
    org = await create_org(db, "Vítima")
    await store_inbound(resources.pool, org, "b1", "5511900000001")
    await publish(db, resources.store, org, "segredo-b", keywords=["frete"])
    yield org


async def _as_process(url: str, process: str) -> asyncpg.Connection:
    """The login as its pool has it (its group role), or as an injected RESET ROLE leaves it."""
    conn = await asyncpg.connect(url)
    if process != "bare":
        await conn.execute(f"set role {GROUPS[process]}")
    return conn


async def _sees_nothing(conn: asyncpg.Connection, readable: tuple[str, ...]) -> None:
    for statement in readable:
        assert await conn.fetchval(statement) == 0, statement


@pytest.mark.parametrize("process", ["worker", "webhook", "api"])
async def test_a_forged_org_setting_reads_and_writes_nothing_of_another_org(
    process: str,
    db: asyncpg.Connection,
    victim: uuid.UUID,
    logins: dict[str, str],
) -> None:
    own = await create_org(db, "Atacante")
    readable = ORG_ROWS if process == "webhook" else ORG_ROWS + SKILL_ROWS  # its grants
    for role in (process, "bare"):
        conn = await _as_process(logins[process], role)
        try:
            forgeries = (
                (str(victim), ""),  # the org alone
                (str(victim), "0" * 64),  # a made-up proof
                (str(victim), KEY.proof(own)),  # its own org's (valid) proof
                (str(victim).upper(), KEY.proof(victim).upper()),  # any other spelling
            )
            for org, proof in forgeries:
                for local in (False, True):
                    async with conn.transaction():
                        await conn.execute(
                            "select set_config('skillet.organization_id', $1, $3),"
                            " set_config('skillet.organization_proof', $2, $3)",
                            org,
                            proof,
                            local,
                        )
                        await _sees_nothing(conn, readable)
                        assert (
                            await conn.execute("update conversations set contact_id = 'x'")
                            == "UPDATE 0"
                        )
                        with pytest.raises(asyncpg.InsufficientPrivilegeError):
                            async with conn.transaction():
                                await conn.execute(
                                    "insert into conversations (organization_id, channel,"
                                    " contact_id) values ($1, 'whatsapp', '5511')",
                                    victim,
                                )
        finally:
            await conn.close()
    assert (
        await db.fetchval(
            "select count(*) from conversations where organization_id = $1 and contact_id <> 'x'",
            victim,
        )
        == 1
    )


async def test_the_turns_functions_refuse_another_orgs_id_without_its_proof(
    db: asyncpg.Connection, resources: Resources, victim: uuid.UUID, logins: dict[str, str]
) -> None:
    conversation = await db.fetchval(
        "select id from conversations where organization_id = $1", victim
    )
    own = await create_org(db, "Atacante")
    conn = await _as_process(logins["worker"], "worker")
    try:
        await conn.execute(BIND_ORGANIZATION, str(own), KEY.proof(own))  # its own org, bound
        lease = uuid.uuid4()
        calls = (
            ("select skillet_bind_org($1)", (victim,)),
            (
                "select * from skillet_take_conversation($1, $2, $3, 30, 50, 10)",
                (victim, conversation, lease),
            ),
            *(
                (
                    "select * from skillet_take_conversation($1, $2, $3, $4, 30, 50, 10)",
                    (victim, proof, conversation, lease),
                )
                for proof in ("", "0" * 64, KEY.proof(own))
            ),
            (
                "select * from skillet_continue_conversation($1, $2, $3, $4, null, '{}', 50, 10)",
                (victim, KEY.proof(own), conversation, lease),
            ),
            (
                "select * from skillet_commit_turn($1, $2, $3, 'whatsapp', '{}', now(), 'x',"
                " '{}', '{}', '{}', '{}', now(), null, null, true, null, null, null, null, null,"
                " false)",
                (victim, KEY.proof(own), conversation),
            ),
        )
        for statement, args in calls:
            with pytest.raises(asyncpg.InsufficientPrivilegeError, match="tenant_binding_refused"):
                await conn.fetch(statement, *args)
        # What does not bind reads under the session's binding: its own org, not the victim's.
        burst = await conn.fetchrow(
            "select ids from skillet_read_burst($1, $2, 50, 10)", victim, conversation
        )
        assert burst is not None and burst["ids"] is None
    finally:
        await conn.close()
    lease_until = await db.fetchval(
        "select lease_until from conversations where id = $1", conversation
    )
    assert lease_until is None  # nobody took the victim's conversation
    async with org_connection(resources.pool, victim) as bound:  # the worker's own binding
        assert await bound.fetchval("select count(*) from messages") == 1


async def test_the_turns_functions_with_a_valid_proof_reach_only_that_org(
    db: asyncpg.Connection, victim: uuid.UUID, logins: dict[str, str]
) -> None:
    """Inside the turn's functions (run as skillet_bound) the bound org is trusted without a
    second proof check: whatever the session set by hand beforehand, they see the org whose
    proof they were given, and no other."""
    conversation = await db.fetchval(
        "select id from conversations where organization_id = $1", victim
    )
    inbound = await db.fetchval("select id from messages where conversation_id = $1", conversation)
    own = await create_org(db, "Atacante")
    conn = await _as_process(logins["worker"], "worker")
    try:
        for local in (False, True):
            async with conn.transaction():
                # The victim's org set by hand (with a made-up proof), then the turn's
                # functions called with the attacker's own org and its valid proof.
                await conn.execute(
                    "select set_config('skillet.organization_id', $1, $2),"
                    " set_config('skillet.organization_proof', $3, $2)",
                    str(victim),
                    local,
                    "0" * 64,
                )
                taken = await conn.fetch(
                    "select * from skillet_take_conversation($1, $2, $3, $4, 30, 50, 10)",
                    own,
                    KEY.proof(own),
                    conversation,
                    uuid.uuid4(),
                )
                assert taken == []  # the victim's conversation is not there to take
                committed = await conn.fetchrow(
                    "select outcome from skillet_commit_turn($1, $2, $3, 'whatsapp', $4, now(),"
                    " 'x', '{}', '{}', '{}', '{}', now(), null, null, true, null, null, null,"
                    " null, null, false)",
                    own,
                    KEY.proof(own),
                    conversation,
                    [inbound],
                )
                assert committed is not None and committed["outcome"] == "lease_lost"
                continued = await conn.fetchrow(
                    "select held, ids from skillet_continue_conversation($1, $2, $3, null, null,"
                    " '{}', 50, 10)",
                    own,
                    KEY.proof(own),
                    conversation,
                )
                assert continued is not None and continued["held"] is False
                # Outside them the hand-set org still opens nothing.
                assert await conn.fetchval("select count(*) from messages") == 0
    finally:
        await conn.close()
    assert (
        await db.fetchval("select lease_until from conversations where id = $1", conversation)
        is None
    )
    assert (
        await db.fetchval("select count(*) from messages where conversation_id = $1", conversation)
        == 1
    )  # no reply committed into the victim's conversation


@pytest.mark.parametrize("process", ["worker", "webhook", "api"])
async def test_no_login_can_act_as_the_turns_role(process: str, logins: dict[str, str]) -> None:
    for role in (process, "bare"):
        conn = await _as_process(logins[process], role)
        try:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute("set role skillet_bound")
        finally:
            await conn.close()


async def test_every_function_of_the_turns_role_binds_its_org_first(
    db: asyncpg.Connection, logins: dict[str, str]
) -> None:
    """skillet_current_org trusts the bound org inside skillet_bound's functions: each must
    bind (with the org's proof) before it reads anything, or a hand-set org would be trusted."""
    rows = await db.fetch(
        "select p.proname, p.prosrc from pg_proc p"
        " where p.proowner = (select oid from pg_roles where rolname = 'skillet_bound')"
    )
    assert {r["proname"] for r in rows} == {
        "skillet_take_conversation",
        "skillet_commit_turn",
        "skillet_continue_conversation",
        "skillet_presence_target",
    }
    for row in rows:
        body = row["prosrc"].split("begin", 1)[1].lstrip()
        assert body.startswith("perform skillet_bind_org(p_org, p_proof);"), row["proname"]
    conn = await _as_process(logins["worker"], "worker")
    try:
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="tenant_binding_refused"):
            await conn.fetch(
                "select * from skillet_take_conversation(null, '', $1, $2, 30, 50, 10)",
                uuid.uuid4(),
                uuid.uuid4(),
            )
    finally:
        await conn.close()


async def test_a_login_without_the_secret_or_with_another_stops_at_startup(
    settings: Settings, logins: dict[str, str]
) -> None:
    with pytest.raises(TenantSecretMissing, match="SKILLET_TENANT_SECRET"):
        await create_pool(logins["worker"], app_role=WORKER_ROLE)
    with pytest.raises(TenantSecretMismatch, match="SKILLET_TENANT_SECRET"):
        await create_pool(logins["api"], app_role=API_ROLE, tenant_secret="x" * 40)
    pool = await create_pool(logins["webhook"], app_role=WEBHOOK_ROLE, tenant_secret=TENANT_SECRET)
    await pool.close()
    # The owner's login (development, the demo) needs no setting: it reads the stored secret.
    pool = await create_pool(settings.database_url, app_role=WORKER_ROLE)
    await pool.close()
