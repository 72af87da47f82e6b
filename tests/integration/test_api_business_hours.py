"""`GET`/`PATCH /v1/settings/hours`: any key reads the org's hours, an admin changes any part
of them; a refusal says what to fix (pt-BR), writes nothing and is audited."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest_asyncio

from api.keys import Role
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

PATH = "/v1/settings/hours"
# The API's clock: a Friday that the test makes a closed day, noon in Recife (UTC-3). Read from
# the wall clock, whether the org is open would depend on when the test runs.
NOW = datetime(2026, 12, 25, 15, 0, tzinfo=UTC)


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, clock=lambda: NOW) as client:
        yield client


async def test_the_api_reads_changes_and_audits_business_hours(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    viewer = await create_key(db, org, Role.VIEWER)

    empty = await api.get(PATH, viewer)
    assert empty.status == 200
    assert (empty.body["business_hours"], empty.body["timezone"], empty.body["open_now"]) == (
        None,
        "America/Sao_Paulo",
        True,
    )
    assert (await api.call("PATCH", PATH, viewer, json_body={"after_hours": "away"})).status == 403

    body = {
        "business_hours": "seg-sex 09:00-18:00; sab 09:00-13:00; sex 17:00-02:00",
        "timezone": "America/Recife",
        "closed_dates": ["2026-12-25", "2027-01-01"],
        "after_hours": "away",
    }
    refused = await api.call("PATCH", PATH, admin, json_body=body)
    assert (refused.status, refused.code) == (422, "business_hours_invalid")
    assert "sobrepõem" in refused.body["message"]  # Friday's two ranges overlap

    body["business_hours"] = "seg-sex 09:00-18:00; sab 09:00-13:00; sex 22:00-02:00"
    changed = await api.call("PATCH", PATH, admin, json_body=body)
    assert changed.status == 200, changed.body
    assert changed.body["business_hours"] == (
        "seg-qui 09:00-18:00; sex 09:00-18:00, 22:00-02:00; sab 09:00-13:00"
    )
    assert changed.body["changed"] == [
        "business_hours",
        "timezone",
        "closed_dates",
        "after_hours",
    ]
    shown = await api.get(PATH, viewer)
    assert shown.body["closed_dates"] == ["2026-12-25", "2027-01-01"]
    # Closed all Christmas day (Friday's 22:00-02:00 too); open again Saturday at 09:00 there.
    assert (shown.body["open_now"], shown.body["next_opening"]) == (
        False,
        "2026-12-26T12:00:00+00:00",
    )

    for wrong, code in (
        ({"timezone": "Horário de Brasília"}, "timezone_unknown"),
        ({"closed_dates": ["25/12"]}, "closed_dates_invalid"),
        ({"after_hours": "sleep"}, "after_hours_invalid"),
        ({"business_hours": "seg " * 1000}, "invalid_input"),
    ):
        answer = await api.call("PATCH", PATH, admin, json_body=wrong)
        assert (answer.status, answer.code) == (422, code), wrong
    assert (await api.get(PATH, viewer)).body == shown.body  # nothing written

    cleared = await api.call("PATCH", PATH, admin, json_body={"business_hours": None})
    assert (cleared.body["business_hours"], cleared.body["open_now"]) == (None, True)

    rows = await audit_rows(db, org)
    assert [r["action"] for r in rows if r["outcome"] == "ok"] == [
        "settings.business_hours",
        "settings.timezone",
        "settings.closed_dates",
        "settings.after_hours",
        "settings.business_hours",  # cleared
    ]
    refusals = [r["detail"].get("code") for r in rows if r["outcome"] == "refused"]
    assert {"business_hours_invalid", "timezone_unknown", "closed_dates_invalid"} <= set(refusals)
