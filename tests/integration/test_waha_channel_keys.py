"""Per-channel WAHA webhook keys: each session signs with its own key, the global key is only
the fallback for channels without one, and the webhook's role reads no key at all: it asks
whether a signature holds under one session's key, through `skillet_waha_signature_valid`
(skillet_data/migrations/0013_waha_channel_keys.sql, 0026_tenant_binding_proof.sql)."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from structlog.testing import capture_logs

from channels.models import Channel
from channels.waha_key_queries import (
    WahaChannelKey,
    fetch_waha_channel_key,
    fetch_waha_signature_valid,
    upsert_waha_channel_key,
)
from cli.main import main
from core.channel_kind import ChannelKind
from tests.integration.support import create_org
from tests.integration.webhook_support import (
    TEST_CONFIG,
    connect_number,
    queued_payloads,
    running_webhook,
)
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import WAHA_HMAC_KEY, encode, waha_event, waha_signature
from worker.settings import Settings

KEY_A = "chave-da-loja-a-0123456789abcdef"
KEY_B = "chave-da-loja-b-0123456789abcdef"


@dataclasses.dataclass(frozen=True)
class Shops:
    a: uuid.UUID
    b: uuid.UUID
    own_a: Channel  # session loja-a of org A, key KEY_A
    own_b: Channel  # session loja-b of org B, key KEY_B
    shared: Channel  # session loja-c of org A, no key of its own


@pytest.fixture
async def shops(db: asyncpg.Connection) -> AsyncIterator[Shops]:
    a, b = await create_org(db, "Loja A"), await create_org(db, "Loja B")
    own_a = await connect_number(db, a, ChannelKind.WAHA, "loja-a")
    own_b = await connect_number(db, b, ChannelKind.WAHA, "loja-b")
    shared = await connect_number(db, a, ChannelKind.WAHA, "loja-c")
    await upsert_waha_channel_key(db, own_a, KEY_A)
    await upsert_waha_channel_key(db, own_b, KEY_B)
    yield Shops(a, b, own_a, own_b, shared)


def _signed(session: str, message_id: str, key: str) -> tuple[bytes, str]:
    body = encode(waha_event(session, message_id, "oi"))
    return body, waha_signature(body, key)


async def test_each_session_accepts_its_own_key_and_the_global_one_only_as_fallback(
    settings: Settings, shops: Shops
) -> None:
    cases = [
        ("loja-a", KEY_A, 200),
        ("loja-a", WAHA_HMAC_KEY, 401),  # an own key replaces the global one
        ("loja-a", KEY_B, 401),  # another tenant's key signs nothing of this one
        ("loja-b", KEY_B, 200),
        ("loja-b", KEY_A, 401),
        ("loja-c", WAHA_HMAC_KEY, 200),  # no key of its own: the global fallback
        ("loja-c", KEY_A, 401),
        ("desconhecida", WAHA_HMAC_KEY, 200),  # acknowledged as unknown_channel
    ]
    got = []
    with capture_logs() as logs:
        async with running_webhook(settings) as hook:
            for n, (session, key, _) in enumerate(cases):
                body, signature = _signed(session, f"m{n}", key)
                got.append((session, key, (await hook.post_waha(raw=body, signature=signature))))
    assert [(s, k, posted.status) for s, k, posted in got] == cases
    assert got[-1][2].body["unknown_channel"] == 1
    queued = {p["message_id"]: p["organization_id"] for p in await queued_payloads(settings)}
    assert queued == {"m0": str(shops.a), "m3": str(shops.b), "m5": str(shops.a)}
    logged = json.dumps([{k: str(v) for k, v in e.items()} for e in logs])
    assert KEY_A not in logged and KEY_B not in logged and WAHA_HMAC_KEY not in logged


async def test_without_a_global_key_only_sessions_with_their_own_are_served(
    settings: Settings, shops: Shops
) -> None:
    config = dataclasses.replace(TEST_CONFIG, waha_hmac_key=None)
    async with running_webhook(settings, config) as hook:
        own = await hook.post_waha(raw=(s := _signed("loja-a", "m1", KEY_A))[0], signature=s[1])
        shared = await hook.post_waha(raw=(s := _signed("loja-c", "m2", KEY_A))[0], signature=s[1])
        bad_json = await hook.post_waha(raw=b'{"session": "loja-a"', signature="00")
    assert (own.status, shared.status, bad_json.status) == (200, 503, 400)
    assert shared.body["error"] == "not_configured"


async def test_the_webhook_role_reads_no_key_and_asks_only_whether_a_signature_holds(
    db: asyncpg.Connection, shops: Shops
) -> None:
    async with db.transaction():
        await db.execute("set local role skillet_webhook")
        await db.execute("select set_config('skillet.organization_id', $1, true)", str(shops.a))
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await db.fetch("select * from channel_waha_keys")  # not even its own org's keys
    async with db.transaction():
        await db.execute("set local role skillet_webhook")  # the webhook knows no org yet
        with pytest.raises(asyncpg.InsufficientPrivilegeError):  # skillet_org_proof_valid
            await db.fetch("select * from skillet_waha_channel_key('loja-b')")
    body, signature = _signed("loja-b", "m1", KEY_B)
    async with db.transaction():
        await db.execute("set local role skillet_webhook")
        assert await fetch_waha_signature_valid(db, "loja-b", body, signature) is True
        assert await fetch_waha_signature_valid(db, "loja-b", body + b" ", signature) is False
        assert await fetch_waha_signature_valid(db, "loja-a", body, signature) is False
        assert await fetch_waha_signature_valid(db, "loja-b", body, "") is False
        assert await fetch_waha_signature_valid(db, "loja-c", body, signature) is None  # no own
        assert await fetch_waha_signature_valid(db, "", body, signature) is None
    # The owner (the CLI) still reads a session's key.
    assert await fetch_waha_channel_key(db, "loja-c") == WahaChannelKey(shops.a, None)
    for function in ("skillet_waha_channel_key", "skillet_waha_signature_valid"):
        security_definer = await db.fetchval(
            "select prosecdef from pg_proc where proname = $1", function
        )
        assert security_definer is True
    assert not await db.fetchval(
        "select has_function_privilege('public', 'skillet_waha_channel_key(text)', 'execute')"
    )
    assert not await db.fetchval(
        "select has_function_privilege('skillet_webhook', 'skillet_waha_channel_key(text)',"
        " 'execute')"
    )


async def test_a_key_belongs_to_its_channels_org_and_goes_with_the_channel(
    db: asyncpg.Connection, shops: Shops
) -> None:
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await db.execute(
            "insert into channel_waha_keys (channel_id, organization_id, hmac_key) "
            "values ($1, $2, $3)",
            shops.shared.id,
            shops.b,  # not loja-c's org
            KEY_B,
        )
    await db.execute("delete from channels where id = $1", shops.own_a.id)
    assert await db.fetchval("select count(*) from channel_waha_keys") == 1


def test_the_key_is_in_no_repr() -> None:
    assert KEY_A not in repr(WahaChannelKey(uuid.uuid4(), KEY_A))
    assert WAHA_HMAC_KEY not in repr(TEST_CONFIG)


def _answer(capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, object], str]:
    out = capsys.readouterr()
    return json.loads(out.out.strip().splitlines()[-1]), out.out + out.err


def test_cli_sets_a_key_from_a_file_an_env_var_or_a_value_and_never_prints_it(
    env: Settings,
    db: asyncpg.Connection,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli_graph: FakeGraphApi,
) -> None:
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Padaria", "--id", org, "--json"]) == 0
    waha = ["--kind", "waha", "--address", "padaria", "--json"]
    assert main(["channels", "add", "--org", org, *waha]) == 0
    capsys.readouterr()

    key_file = tmp_path / "waha.key"
    key_file.write_text(KEY_A + "\n")  # the trailing newline of an editor is not the key
    monkeypatch.setenv("PADARIA_WAHA_KEY", KEY_B)
    for option, key in [
        (["--waha-hmac-key-file", str(key_file)], KEY_A),
        (["--waha-hmac-key-env", "PADARIA_WAHA_KEY"], KEY_B),
        (["--waha-hmac-key", KEY_A], KEY_A),
    ]:
        assert main(["channels", "set", *waha, *option]) == 0
        answer, printed = _answer(capsys)
        assert answer["waha_hmac_key"] == "own"
        assert KEY_A not in printed and KEY_B not in printed
        stored = _stored_key(env.database_url, "padaria")
        assert stored == key

    assert main(["channels", "set", *waha, "--no-waha-hmac-key"]) == 0
    assert _answer(capsys)[0]["waha_hmac_key"] == "global"
    assert _stored_key(env.database_url, "padaria") is None

    assert main(["channels", "set", *waha, "--waha-hmac-key", "curta"]) == 1
    assert _answer(capsys)[0]["error"] == "invalid_waha_hmac_key"
    assert main(["channels", "set", *waha, "--waha-hmac-key-env", "NAO_EXISTE"]) == 1
    assert _answer(capsys)[0]["error"] == "invalid_waha_hmac_key"
    cloud = ["--kind", "cloud_api", "--address", "777", "--json"]
    assert main(["channels", "add", "--org", org, *cloud]) == 0
    capsys.readouterr()
    assert main(["channels", "set", *cloud, "--waha-hmac-key", KEY_A]) == 1
    answer, printed = _answer(capsys)
    assert answer["error"] == "not_a_waha_channel" and KEY_A not in printed


def _stored_key(database_url: str, session: str) -> str | None:
    import asyncio

    async def fetch() -> str | None:
        conn = await asyncpg.connect(database_url)
        try:
            found = await fetch_waha_channel_key(conn, session)
            return None if found is None else found.hmac_key
        finally:
            await conn.close()

    return asyncio.run(fetch())
