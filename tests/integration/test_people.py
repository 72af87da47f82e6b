"""People: invitations, e-mail and password sign-in, roles, deactivation, the last admin.
Real Postgres and Redis, the real app on a port; hostile cases: a reused, expired or
replaced link, a wrong or unknown e-mail (the dummy hash runs), ten failures an hour, a
deactivated person's session refused on its next request."""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest
import pytest_asyncio

from api import passwords
from api.keys import Role
from api.rate_limit import RateLimits
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.support import create_org, store_inbound
from worker.resources import Resources
from worker.settings import Settings

pytestmark = pytest.mark.integration

PASSWORD = "uma frase longa de senha"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(
        settings, resources.store, console_public_url="https://painel.example.com/"
    ) as client:
        yield client


def _browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def _invite(
    api: ApiClient, key: str, email: str, name: str = "Ana Souza", role: str = "editor"
) -> dict[str, str]:
    answer = await api.call(
        "POST",
        "/v1/people/invitations",
        key,
        json_body={"email": email, "name": name, "role": role},
    )
    assert answer.status == 201, answer.body
    return answer.body  # type: ignore[no-any-return]


def _path_of(url: str) -> str:
    return url.removeprefix("https://painel.example.com")


async def _accept(
    api: ApiClient, http: aiohttp.ClientSession, url: str, password: str = PASSWORD
) -> aiohttp.ClientResponse:
    path = _path_of(url)
    async with http.get(api.base_url + path) as page:
        text = await page.text()
        assert page.status == 200, text
        assert page.headers["Referrer-Policy"] == "no-referrer"
    match = _CSRF.search(text)
    assert match
    form = {"csrf": match.group(1), "password": password, "password_again": password}
    async with http.post(api.base_url + path, data=form, allow_redirects=False) as sent:
        await sent.read()
        return sent


async def _sign_in(
    api: ApiClient, http: aiohttp.ClientSession, email: str, password: str
) -> aiohttp.ClientResponse:
    async with http.get(api.base_url + "/console/entrar") as page:
        match = _CSRF.search(await page.text())
    assert match
    form = {"csrf": match.group(1), "email": email, "password": password}
    async with http.post(
        api.base_url + "/console/entrar", data=form, allow_redirects=False
    ) as sent:
        await sent.read()
        return sent


async def _home_status(api: ApiClient, http: aiohttp.ClientSession) -> int:
    async with http.get(api.base_url + "/console/atendimento", allow_redirects=False) as page:
        return page.status


def _email() -> str:
    return f"pessoa-{uuid.uuid4().hex[:10]}@Loja.example.com"


async def test_an_invitation_link_sets_a_password_once_and_signs_in(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    email = _email()
    made = await _invite(api, admin, email)
    assert made["url"].startswith("https://painel.example.com/console/convite/")
    token = made["url"].rsplit("/", 1)[1]
    assert len(token) >= 43  # 32 random bytes
    stored = await db.fetchrow(
        "select token_sha256, expires_at - created_at as ttl from person_invitations where id = $1",
        uuid.UUID(made["id"]),
    )
    assert stored["token_sha256"] == hashlib.sha256(token.encode()).digest()
    assert stored["ttl"].days == 7
    audit = await db.fetch(
        "select detail::text as d from audit_log where organization_id = $1", org
    )
    assert audit and all(token not in r["d"] for r in audit)

    async with _browser() as http:
        sent = await _accept(api, http, made["url"])
        assert sent.status == 303
        assert sent.headers["Location"] == "/console/atendimento"
        assert await _home_status(api, http) == 200
    hashed = await db.fetchval("select password_hash from people where email = $1", email.lower())
    assert hashed.startswith("$argon2id$") and PASSWORD not in hashed

    async with _browser() as http:  # the same link again: used
        async with http.get(api.base_url + _path_of(made["url"])) as page:
            assert page.status == 404
            assert "convite_invalido" in await page.text()
        signed = await _sign_in(api, http, email.upper(), PASSWORD)
        assert signed.status == 303
        assert await _home_status(api, http) == 200

    people = await api.get("/v1/people", admin)
    assert [p["email"] for p in people.body["items"]] == [email.lower()]
    assert people.body["items"][0]["role"] == "editor"


async def test_an_expired_or_replaced_link_opens_nothing_and_a_short_password_is_refused(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    email = _email()
    first = await _invite(api, admin, email)
    second = await _invite(api, admin, email)
    async with _browser() as http:
        async with http.get(api.base_url + _path_of(first["url"])) as page:
            assert page.status == 404  # replaced by the newer invitation
        short = await _accept(api, http, second["url"], password="curta")
        assert short.status == 422
    await db.execute(
        "update person_invitations set expires_at = now() - interval '1 second' where id = $1",
        uuid.UUID(second["id"]),
    )
    async with _browser() as http, http.get(api.base_url + _path_of(second["url"])) as page:
        assert page.status == 404
    async with _browser() as http, http.get(api.base_url + "/console/convite/abc") as page:
        assert page.status == 404  # not a token at all


async def test_a_new_invitation_used_replaces_the_password_and_ends_other_sessions(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    email = _email()
    async with _browser() as old:
        assert (await _accept(api, old, (await _invite(api, admin, email))["url"])).status == 303
        assert await _home_status(api, old) == 200
        async with _browser() as new:
            again = await _invite(api, admin, email)
            assert (await _accept(api, new, again["url"], "outra frase de senha")).status == 303
            assert await _home_status(api, new) == 200
        assert await _home_status(api, old) == 303  # ended
    async with _browser() as http:
        assert (await _sign_in(api, http, email, PASSWORD)).status == 401
        assert (await _sign_in(api, http, email, "outra frase de senha")).status == 303


async def test_an_unknown_email_runs_the_dummy_hash_and_ten_failures_lock_the_email(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    email = _email()
    async with _browser() as http:
        assert (await _accept(api, http, (await _invite(api, admin, email))["url"])).status == 303
    before = passwords._dummy_hash.cache_info().hits + passwords._dummy_hash.cache_info().misses
    async with _browser() as http:
        unknown = await _sign_in(api, http, _email(), PASSWORD)
        assert unknown.status == 401
    after = passwords._dummy_hash.cache_info().hits + passwords._dummy_hash.cache_info().misses
    assert after == before + 1  # the unknown e-mail paid for a hash too

    async with _browser() as http:
        for _ in range(10):
            assert (await _sign_in(api, http, email, "senha errada demais")).status == 401
        locked = await _sign_in(api, http, email, PASSWORD)  # even the right one, now
        assert locked.status == 429
    stored = await db.fetchval(
        "select count(*) from person_sign_in_failures where email_sha256 = sha256($1::bytea)",
        email.lower().encode(),
    )
    assert stored == 10
    await db.execute(
        "update person_sign_in_failures set failed_at = now() - interval '61 minutes'"
        " where email_sha256 = sha256($1::bytea)",
        email.lower().encode(),
    )
    async with _browser() as http:
        assert (await _sign_in(api, http, email, PASSWORD)).status == 303


async def test_deactivating_ends_sessions_at_once_and_returns_held_conversations(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    email = _email()
    made = await _invite(api, admin, email)
    person_id = made["person"]["id"]  # type: ignore[index]
    conversation, _ = await store_inbound(resources.pool, org, "wamid.p1", "5511999990001")
    await db.execute(
        "update conversations set mode = 'human', held_by = $2, mode_since = now() where id = $1",
        conversation,
        f"person:{person_id}",
    )
    async with _browser() as http:
        assert (await _accept(api, http, made["url"])).status == 303
        assert await _home_status(api, http) == 200
        gone = await api.call("POST", f"/v1/people/{person_id}/deactivate", admin)
        assert gone.status == 200, gone.body
        assert gone.body["active"] is False
        assert gone.body["conversations_waiting"] == [str(conversation)]
        assert await _home_status(api, http) == 303  # the very next request
        assert (await _sign_in(api, http, email, PASSWORD)).status == 401
    row = await db.fetchrow("select mode, held_by from conversations where id = $1", conversation)
    assert (row["mode"], row["held_by"]) == ("waiting", None)


async def test_the_last_active_admin_is_neither_demoted_nor_deactivated(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.ADMIN)
    first = await _invite(api, key, _email(), "Bia", "admin")
    first_id = first["person"]["id"]  # type: ignore[index]
    demote = await api.call("PATCH", f"/v1/people/{first_id}", key, json_body={"role": "editor"})
    assert (demote.status, demote.code) == (409, "last_admin")
    gone = await api.call("POST", f"/v1/people/{first_id}/deactivate", key)
    assert (gone.status, gone.code) == (409, "last_admin")
    second = await _invite(api, key, _email(), "Caio", "admin")
    renamed = await api.call(
        "PATCH", f"/v1/people/{first_id}", key, json_body={"role": "editor", "name": "Bia S."}
    )
    assert renamed.status == 200 and renamed.body["name"] == "Bia S."
    second_id = second["person"]["id"]  # type: ignore[index]
    last = await api.call("POST", f"/v1/people/{second_id}/deactivate", key)
    assert (last.status, last.code) == (409, "last_admin")
    editor = await create_key(db, org, Role.EDITOR)
    refused = await api.call(
        "POST",
        "/v1/people/invitations",
        editor,
        json_body={"email": _email(), "name": "X", "role": "admin"},
    )
    assert refused.status == 403


async def test_an_email_of_another_org_is_refused(api: ApiClient, db: asyncpg.Connection) -> None:
    email = _email()
    one, two = await create_org(db), await create_org(db)
    await _invite(api, await create_key(db, one, Role.ADMIN), email)
    taken = await api.call(
        "POST",
        "/v1/people/invitations",
        await create_key(db, two, Role.ADMIN),
        json_body={"email": email, "name": "Outra", "role": "viewer"},
    )
    assert (taken.status, taken.code) == (409, "email_taken")


async def test_conversations_and_replies_name_the_person(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    made = await _invite(api, admin, _email(), "Ana Lima")
    person_id = made["person"]["id"]  # type: ignore[index]
    conversation, _ = await store_inbound(resources.pool, org, "wamid.n1", "5511999990002")
    await db.execute(
        "update conversations set mode = 'human', held_by = $2, mode_since = now() where id = $1",
        conversation,
        f"person:{person_id}",
    )
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, body,"
        " author, author_key_prefix) values ($1, $2, 'outbound', 'whatsapp', 'oi', 'person', $3)",
        org,
        conversation,
        f"person:{person_id}",
    )
    one = await api.get(f"/v1/conversations/{conversation}", admin)
    assert one.body["held_by"] == f"person:{person_id}"
    assert one.body["held_by_person"] == {"id": person_id, "name": "Ana Lima"}
    listed = await api.get("/v1/conversations", admin)
    assert listed.body["items"][0]["held_by_person"]["name"] == "Ana Lima"
    thread = await api.get(f"/v1/conversations/{conversation}/messages", admin)
    by_person = [m for m in thread.body["items"] if m["author"] == "person"]
    assert by_person[0]["author_person"] == {"id": person_id, "name": "Ana Lima"}
    await db.execute("update conversations set held_by = 'phone' where id = $1", conversation)
    phone = await api.get(f"/v1/conversations/{conversation}", admin)
    assert phone.body["held_by_person"] is None
    await db.execute(
        "insert into audit_log (organization_id, actor, action, detail)"
        " values ($1, $2, 'conversation.takeover', '{}')",
        org,
        f"person:{person_id}",
    )
    audit = (await api.get("/v1/audit", admin)).body["items"]
    by_actor = {r["actor"]: r["actor_person"] for r in audit}
    assert by_actor[f"person:{person_id}"] == {"id": person_id, "name": "Ana Lima"}
    assert all(v is None for k, v in by_actor.items() if not k.startswith("person:"))


async def test_bad_invitation_links_and_wrong_passwords_count_against_the_address(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    limits = RateLimits(auth_failures_per_minute=3, key_prefix=f"{settings.queue_name}:ratelimit")
    async with running_api(settings, resources.store, limits=limits) as api, _browser() as http:
        for n in range(2):
            async with http.get(f"{api.base_url}/console/convite/{'A' * 42}{n}") as page:
                assert page.status == 404
        assert (await _sign_in(api, http, _email(), PASSWORD)).status == 401
        async with http.get(f"{api.base_url}/console/convite/{'B' * 43}") as page:
            assert page.status == 429  # the address is locked: links and sign-ins alike
        async with http.get(api.base_url + "/console/entrar") as page:
            assert page.status == 429


async def test_a_conversation_is_transferred_by_its_holder_or_an_admin_to_an_active_editor(
    api: ApiClient, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    holder, other = await create_key(db, org, Role.EDITOR), await create_key(db, org, Role.EDITOR)
    ana = (await _invite(api, admin, _email(), "Ana"))["person"]["id"]  # type: ignore[index]
    caio = (await _invite(api, admin, _email(), "Caio", "admin"))["person"]["id"]  # type: ignore[index]
    viewer = (await _invite(api, admin, _email(), "Vera", "viewer"))["person"]["id"]  # type: ignore[index]
    conversation, _ = await store_inbound(resources.pool, org, "wamid.t1", "5511999990003")
    path = f"/v1/conversations/{conversation}"
    assert (await api.call("POST", f"{path}/takeover", holder, json_body={})).status == 200

    stranger = await api.call("POST", f"{path}/transfer", other, json_body={"person_id": ana})
    assert (stranger.status, stranger.code) == (409, "held_by_other")
    for refused in (viewer, str(uuid.uuid4())):
        bad = await api.call("POST", f"{path}/transfer", holder, json_body={"person_id": refused})
        assert (bad.status, bad.code) == (422, "person_cannot_hold")
    moved = await api.call("POST", f"{path}/transfer", holder, json_body={"person_id": ana})
    assert moved.status == 200, moved.body
    assert moved.body["held_by_person"] == {"id": ana, "name": "Ana"}
    assert moved.body["mode"] == "human"
    # The former holder no longer holds it; an admin still may move it.
    again = await api.call("POST", f"{path}/transfer", holder, json_body={"person_id": caio})
    assert again.code == "held_by_other"
    by_admin = await api.call("POST", f"{path}/transfer", admin, json_body={"person_id": caio})
    assert by_admin.status == 200 and by_admin.body["held_by_person"]["name"] == "Caio"
    assert (await api.call("POST", f"/v1/people/{ana}/deactivate", admin)).status == 200
    gone = await api.call("POST", f"{path}/transfer", admin, json_body={"person_id": ana})
    assert gone.code == "person_cannot_hold"
    actions = [
        r["action"]
        for r in await db.fetch(
            "select action from audit_log where organization_id = $1 and outcome = 'ok'", org
        )
    ]
    assert actions.count("conversation.transfer") == 2


async def test_one_link_posted_twice_at_once_is_used_once(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    made = await _invite(api, admin, _email())
    async with _browser() as one, _browser() as two:
        answers = await asyncio.gather(
            _accept(api, one, made["url"], "primeira senha longa"),
            _accept(api, two, made["url"], "segunda senha longa"),
        )
    assert sorted(a.status for a in answers) in ([303, 404], [303, 422])
    sessions = await db.fetchval(
        "select count(*) from console_sessions where organization_id = $1", org
    )
    assert sessions == 1
