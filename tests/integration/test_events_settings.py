"""Setting, clearing and auditing an org's events webhook: `skillet orgs set` and
`PATCH /v1/settings/events`; URLs that point inside are refused when set, the secret is
never shown."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from api.keys import Role
from cli.main import main
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

PUBLIC_URL = "https://93.184.215.14/skillet-events"  # a literal: no DNS needed
SECRET = "segredo-dos-eventos-0123456789"
INSIDE = [
    "https://localhost/hook",  # a name that resolves to 127.0.0.1
    "https://127.0.0.1/hook",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://169.254.169.254/latest",
    "https://10.0.0.8/hook",
    "http://93.184.215.14/hook",  # not https
]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


async def _stored(db: asyncpg.Connection, org: uuid.UUID) -> tuple[str | None, str | None]:
    row = await db.fetchrow(
        "select url, secret from org_event_settings where organization_id = $1", org
    )
    return (None, None) if row is None else (row["url"], row["secret"])


def _stored_now(settings: Settings, org: uuid.UUID) -> tuple[str | None, str | None]:
    """_stored from a sync test (the CLI runs its own event loop)."""

    async def read() -> tuple[str | None, str | None]:
        conn = await asyncpg.connect(settings.database_url)
        try:
            return await _stored(conn, org)
        finally:
            await conn.close()

    return asyncio.run(read())


def test_orgs_set_sets_clears_and_audits_the_events_webhook(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Padaria", "--id", org]) == 0
    capsys.readouterr()
    secret_file = tmp_path / "events.secret"
    secret_file.write_text(f"\n  {SECRET}  \n")

    code, refused = _run(capsys, "orgs", "set", "--org", org, "--events-url", PUBLIC_URL)
    assert (code, refused["error"]) == (1, "events_secret_missing")

    code, shown = _run(
        capsys,
        "orgs",
        "set",
        "--org",
        org,
        "--events-url",
        PUBLIC_URL,
        "--events-secret-file",
        str(secret_file),
    )
    assert code == 0
    assert (shown["events_url"], shown["events_secret"]) == (PUBLIC_URL, "********")
    assert SECRET not in json.dumps(shown)
    assert _stored_now(env, uuid.UUID(org)) == (PUBLIC_URL, SECRET)  # stripped

    assert main(["orgs", "set", "--org", org]) == 0  # shows, changes nothing
    assert f"events_url={PUBLIC_URL}" in capsys.readouterr().out

    code, cleared = _run(capsys, "orgs", "set", "--org", org, "--events-url", "")
    assert (code, cleared["events_url"], cleared["events_secret"]) == (0, None, "********")
    assert cleared["previous"] == {"events_url": PUBLIC_URL}

    code, audit = _run(capsys, "audit", "--org", org)
    entries = audit["entries"]
    assert code == 0 and isinstance(entries, list)
    assert [(e["action"], e["detail"]) for e in reversed(entries)] == [
        ("settings.events_secret", {"set": True}),
        ("settings.events_url", {"from": None, "to": PUBLIC_URL}),
        ("settings.events_url", {"from": PUBLIC_URL, "to": None}),
    ]


@pytest.mark.parametrize("url", INSIDE)
def test_orgs_set_refuses_a_url_pointing_inside_in_one_line(
    env: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    secret_file = tmp_path / "events.secret"
    secret_file.write_text(SECRET)
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Clínica", "--id", org]) == 0
    capsys.readouterr()

    code = main(
        ["orgs", "set", "--org", org, "--events-url", url, "--events-secret-file", str(secret_file)]
    )

    out = capsys.readouterr()
    lines = (out.out + out.err).strip().splitlines()
    assert code == 1 and len(lines) == 1 and "events_url_refused" in lines[0]


def test_the_allow_setting_accepts_a_loopback_http_url(
    env: Settings,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKILLET_EVENTS_ALLOW_PRIVATE_URLS", "true")
    secret_file = tmp_path / "events.secret"
    secret_file.write_text(SECRET)
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Dev", "--id", org]) == 0
    code, shown = _run(
        capsys,
        "orgs",
        "set",
        "--org",
        org,
        "--events-url",
        "http://127.0.0.1:9/hook",
        "--events-secret-file",
        str(secret_file),
    )
    assert (code, shown["events_url"]) == (0, "http://127.0.0.1:9/hook")


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_the_api_sets_clears_and_audits_the_events_webhook(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    editor = await create_key(db, org, Role.EDITOR)
    path = "/v1/settings/events"

    assert (await api.get(path, editor)).status == 403
    empty = await api.get(path, admin)
    assert (empty.status, empty.body["events_url"], empty.body["events_secret"]) == (
        200,
        None,
        None,
    )
    missing = await api.call("PATCH", path, admin, json_body={"events_url": PUBLIC_URL})
    assert (missing.status, missing.code) == (422, "events_secret_missing")
    short = await api.call("PATCH", path, admin, json_body={"events_secret": "curto"})
    assert (short.status, short.code) == (422, "events_secret_invalid")

    body = {"events_url": PUBLIC_URL, "events_secret": SECRET}
    changed = await api.call("PATCH", path, admin, json_body=body)
    assert changed.status == 200, changed.body
    assert (changed.body["events_url"], changed.body["events_secret"]) == (PUBLIC_URL, "********")
    shown = await api.get(path, admin)
    assert shown.body["events_secret"] == "********" and SECRET not in json.dumps(shown.body)

    cleared = await api.call("PATCH", path, admin, json_body={"events_url": None})
    assert (cleared.status, cleared.body["events_url"]) == (200, None)
    assert await _stored(db, org) == (None, SECRET)  # the secret stays for a next URL

    prefix = admin.split("_")[0] + "_" + admin.split("_")[1]
    rows = [(r["actor"], r["action"], r["outcome"], r["detail"]) for r in await audit_rows(db, org)]
    assert rows == [
        (prefix, "settings.events", "refused", {"code": "events_secret_missing"}),
        (prefix, "settings.events", "refused", {"code": "events_secret_invalid"}),
        (prefix, "settings.events_secret", "ok", {"set": True}),
        (prefix, "settings.events_url", "ok", {"from": None, "to": PUBLIC_URL}),
        (prefix, "settings.events_url", "ok", {"from": PUBLIC_URL, "to": None}),
    ]

    # The audit log is every role's; the URL (its path may carry a token) only an admin's.
    async def url_details(key: str) -> list[Any]:
        audit = await api.get("/v1/audit", key)
        assert audit.status == 200, audit.body
        return [i["detail"] for i in audit.body["items"] if i["action"] == "settings.events_url"]

    shown_to_editor = await url_details(editor)
    assert PUBLIC_URL not in json.dumps(shown_to_editor)
    assert {"from": None, "to": "https://93.184.215.14/…"} in shown_to_editor
    assert {"from": None, "to": PUBLIC_URL} in await url_details(admin)


@pytest.mark.parametrize("url", INSIDE)
async def test_the_api_refuses_a_url_pointing_inside(
    api: ApiClient, db: asyncpg.Connection, url: str
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    refused = await api.call(
        "PATCH",
        "/v1/settings/events",
        admin,
        json_body={"events_url": url, "events_secret": SECRET},
    )
    assert (refused.status, refused.code) == (422, "events_url_refused")
    assert await _stored(db, org) == (None, None)
