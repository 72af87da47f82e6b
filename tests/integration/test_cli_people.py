"""`skillet orgs create --admin-email --admin-name` prints the first admin's link;
`skillet people invite|list|deactivate --org ORG`, each audited as `cli`."""

from __future__ import annotations

import json
import uuid

import asyncpg
import pytest

from cli.main import main
from worker.settings import Settings


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def test_an_org_is_created_with_its_first_admins_invitation_and_people_are_managed(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    admin_email = f"dona-{uuid.uuid4().hex[:8]}@padaria.example.com"
    assert main(
        ["orgs", "create", "--name", "Padaria", "--id", org,
         "--admin-email", admin_email, "--admin-name", "Dona Rosa"]
    ) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "/console/convite/" in printed and "Dona Rosa" in printed

    code, invited = _run(
        capsys, "people", "invite", "--org", org, "--email", "ANA@padaria.example.com",
        "--name", "Ana", "--role", "editor",
    )  # fmt: skip
    assert code == 0
    assert str(invited["url"]).startswith("/console/convite/")
    person = invited["person"]
    assert isinstance(person, dict) and person["email"] == "ana@padaria.example.com"

    code, listed = _run(capsys, "people", "list", "--org", org)
    people = listed["people"]
    assert code == 0 and isinstance(people, list)
    assert sorted((p["name"], p["role"]) for p in people) == [
        ("Ana", "editor"),
        ("Dona Rosa", "admin"),
    ]
    admin_id = next(p["id"] for p in people if p["role"] == "admin")
    code, refused = _run(capsys, "people", "deactivate", "--org", org, admin_id)
    assert code != 0 and refused.get("error") == "last_admin"
    code, gone = _run(capsys, "people", "deactivate", "--org", org, str(person["id"]))
    assert code == 0 and gone["active"] is False

    # Taken in another org: refused, nothing created there.
    other = str(uuid.uuid4())
    code, taken = _run(
        capsys, "orgs", "create", "--name", "Outra", "--id", other,
        "--admin-email", admin_email, "--admin-name", "X",
    )  # fmt: skip
    assert code != 0 and taken.get("error") == "email_taken"
    code, listed = _run(capsys, "orgs", "list")
    assert other not in json.dumps(listed)
