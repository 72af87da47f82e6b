"""`skillet orgs set --business-hours ... --timezone ... --closed ... --after-hours ...`:
parsed before anything is written, each change audited, refusals saying what to fix."""

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


def test_hours_set_shown_and_audited(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Padaria", "--id", org)[0] == 0
    code, shown = _run(capsys, "orgs", "set", "--org", org)
    assert code == 0 and shown["business_hours"] is None and shown["open_now"] is True

    code, hours = _run(
        capsys,
        "orgs", "set", "--org", org,
        "--business-hours", "SEG-sex 9:00-18:00;  sáb 09:00-13:00",
        "--timezone", "America/Sao_Paulo",
        "--closed", "2027-01-01,2026-12-25",
        "--after-hours", "away",
    )  # fmt: skip
    assert code == 0
    assert hours["business_hours"] == "seg-sex 09:00-18:00; sab 09:00-13:00"
    assert hours["closed_dates"] == ["2026-12-25", "2027-01-01"]
    assert (hours["timezone"], hours["after_hours"]) == ("America/Sao_Paulo", "away")
    assert hours["changed"] == [
        "business_hours: - -> seg-sex 09:00-18:00; sab 09:00-13:00",
        "closed_dates: - -> 2026-12-25,2027-01-01",
        "after_hours: answer -> away",
    ]

    code, again = _run(capsys, "orgs", "set", "--org", org, "--timezone", "America/Manaus")
    assert code == 0 and again["changed"] == ["timezone: America/Sao_Paulo -> America/Manaus"]
    assert again["business_hours"] == "seg-sex 09:00-18:00; sab 09:00-13:00"

    code, audit = _run(capsys, "audit", "--org", org)
    entries = audit["entries"]
    assert isinstance(entries, list)
    assert [e["action"] for e in reversed(entries)] == [
        "settings.business_hours",
        "settings.closed_dates",
        "settings.after_hours",
        "settings.timezone",
    ]

    code, cleared = _run(capsys, "orgs", "set", "--org", org, "--business-hours", "")
    assert code == 0 and cleared["business_hours"] is None and cleared["open_now"] is True


@pytest.mark.parametrize(
    ("option", "value", "error", "says"),
    [
        ("--business-hours", "segunda 9h às 18h", "business_hours_invalid", "dia desconhecido"),
        ("--business-hours", "seg 09:00-12:00, 11:00-13:00", "business_hours_invalid", "sobrepõem"),
        ("--timezone", "Brasil/Sao Paulo", "timezone_unknown", "America/Sao_Paulo"),
        ("--closed", "25/12/2026", "closed_dates_invalid", "AAAA-MM-DD"),
    ],
)
def test_refused_with_what_to_fix_and_nothing_written(
    env: Settings,
    db: asyncpg.Connection,
    capsys: pytest.CaptureFixture[str],
    option: str,
    value: str,
    error: str,
    says: str,
) -> None:
    org = str(uuid.uuid4())
    assert _run(capsys, "orgs", "create", "--name", "Padaria", "--id", org)[0] == 0
    code, refused = _run(
        capsys, "orgs", "set", "--org", org, "--name", "Outra", "--after-hours", "away",
        option, value,
    )  # fmt: skip
    assert code == 1 and refused["error"] == error
    assert says in str(refused["message"])
    code, shown = _run(capsys, "orgs", "set", "--org", org)
    assert (shown["name"], shown["after_hours"], shown["business_hours"]) == (
        "Padaria",
        "answer",
        None,
    )
