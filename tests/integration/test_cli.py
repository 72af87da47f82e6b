"""The `skillet` CLI end to end: env config, --json output, exit codes, one-line errors."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import asyncpg
import pytest

from cli.main import main
from worker.settings import Settings


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    return _json_of(capsys.readouterr().out)


def _json_of(stdout: str) -> dict[str, object]:
    out = stdout.strip().splitlines()
    parsed: dict[str, object] = json.loads(out[-1])
    return parsed


def test_migrate_is_idempotent(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--json"]) == 0
    assert _json(capsys)["applied"] == []


async def _count_outbox(url: str, org: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "select count(*) from outbox where organization_id = $1", uuid.UUID(org)
            )
        )
    finally:
        await conn.close()


def test_org_enqueue_worker_flow(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Padaria", "--id", org, "--json"]) == 0
    assert _json(capsys) == {"id": org, "name": "Padaria", "message": f"organization {org} created"}

    args = [
        "enqueue",
        "--org",
        org,
        "--from",
        "5511912345678",
        "--message-id",
        "w1",
        "--text",
        "oi",
        "--json",
    ]
    assert main(args) == 0
    assert _json(capsys)["status"] == "enqueued"
    assert main(args) == 0
    assert _json(capsys)["status"] == "duplicate"

    assert main(["worker", "--burst", "--json"]) == 0
    assert _json(capsys)["jobs_complete"] == 1


def test_enqueue_refuses_a_stored_message_id_from_another_contact(
    env: Settings,
    db: asyncpg.Connection,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKILLET_KEEP_RESULT_S", "0")  # the job id is free again once run
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Padaria", "--id", org]) == 0
    base = ["enqueue", "--org", org, "--message-id", "w1", "--json"]
    assert main([*base, "--from", "5511912345678", "--text", "oi"]) == 0
    assert main(["worker", "--burst"]) == 0
    capsys.readouterr()

    assert main([*base, "--from", "5511987654321", "--text", "tudo bem?"]) == 0
    refused = _json(capsys)
    assert refused["status"] == "duplicate"
    assert "another contact" in str(refused["message"])
    assert main(["worker", "--burst", "--json"]) == 0
    assert _json(capsys)["jobs_complete"] == 0
    # The first contact's own redelivery is a plain duplicate: stored and answered already,
    # nothing to enqueue.
    assert main([*base, "--from", "5511912345678", "--text", "oi"]) == 0
    again = _json(capsys)
    assert again["status"] == "duplicate" and "another contact" not in str(again["message"])


def test_errors_are_one_line_and_non_zero(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "A", "--id", org]) == 0
    capsys.readouterr()
    assert main(["orgs", "create", "--name", "B", "--id", org, "--json"]) == 1
    assert _json(capsys)["error"] == "organization_exists"
    assert main(["orgs", "create", "--name", "B", "--id", org]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: organization_exists: organization {org} already exists"]
    # empty text is refused before anything is enqueued
    assert main(["enqueue", "--org", org, "--from", "55", "--message-id", "x", "--text", " "]) == 2


def test_unreachable_database_is_a_clear_error(
    env: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:1/nothing")
    assert main(["migrate", "--json"]) == 1
    assert _json(capsys)["error"] == "service_unavailable"


@pytest.mark.parametrize("as_json", [False, True])
def test_migrate_without_migration_files_fails(
    env: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    as_json: bool,
) -> None:
    monkeypatch.setenv("SKILLET_MIGRATIONS_DIR", str(tmp_path))
    assert main(["migrate", "--json"] if as_json else ["migrate"]) == 1
    captured = capsys.readouterr()
    if as_json:
        assert _json_of(captured.out)["error"] == "migration_error"
    else:
        assert captured.err.strip().splitlines() == [
            f"error: migration_error: no migration files (NNNN_name.sql) in {tmp_path}: "
            "check SKILLET_MIGRATIONS_DIR"
        ]
        assert "applied" not in captured.out


def test_bad_uuid_is_refused_by_the_parser(env: Settings) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["orgs", "create", "--name", "A", "--id", "not-a-uuid"])
    assert exc.value.code == 2
