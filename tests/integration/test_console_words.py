"""Every word the console shows is pt-BR: every page, rendered by the real application for
each role in its main states (and after refused forms), is read as a person sees it, and
fails on raw codes, Python values (None, True, False, ['...']), code spans and the English
the issue found (ceiling, not-agent-created, REJECTED, params...). Names and keyword syntax
shown inside <code> (or a file's text inside <pre>) are exempt. A GET page of the console
that the tour does not visit fails the test: a page added later must be added to
tests/integration/console_tour.py."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from html.parser import HTMLParser
from zoneinfo import ZoneInfo

import asyncpg
import pytest_asyncio
from markupsafe import escape

from tests.integration.api_support import ApiClient, running_api
from tests.integration.console_tour import (
    NOT_PAGES,
    Tour,
    Visitor,
    console_get_routes,
    csrf_in,
    seed,
)
from tests.integration.test_templates import NUMBER
from tests.integration.whatsapp_fakes import FakeGraphApi
from worker.resources import Resources
from worker.settings import Settings

FORBIDDEN = {
    "Python None": re.compile(r"\bNone\b"),
    "Python True": re.compile(r"\bTrue\b"),
    "Python False": re.compile(r"\bFalse\b"),
    "Python list": re.compile(r"\[\s*['\"]"),
    "code span": re.compile(r"`"),
    "raw code": re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b"),
    "raw value": re.compile(
        r"\b(?:not-agent-created|no-change|ceiling|pinned|params|null|undefined|"
        r"REJECTED|APPROVED|PENDING|PAUSED|DISABLED|UTILITY|MARKETING)\b"
    ),
}
HOSTILE = '"><img src=x onerror=alert(1)>'
# Names the tour's data carries, shown where no <code> can hold them (an <option>).
DATA_NAMES = {"lembrete_vespera"}
# A key's prefix is the key's name (where a person acts, the person's name replaces it).
KEY_PREFIX = re.compile(r"\bskt_[a-z0-9]+\b")


class _Visible(HTMLParser):
    """The text a person reads: text nodes, outside <code>, <script> and <style>, and outside
    <pre> (a file's literal text: a SKILL.md diff with its keyword syntax, the persona)."""

    SKIP = frozenset({"code", "pre", "script", "style"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skipping = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def offenders(html: str) -> list[str]:
    text = visible_text(html)
    found = []
    for what, pattern in FORBIDDEN.items():
        for match in pattern.finditer(text):
            if match.group(0) in DATA_NAMES or KEY_PREFIX.fullmatch(match.group(0)):
                continue
            start = max(0, match.start() - 40)
            found.append(f"{what}: …{text[start : match.end() + 40]}…")
    return found


@pytest_asyncio.fixture(loop_scope="session")
async def api(whatsapp_settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(whatsapp_settings, resources.store) as client:
        yield client


async def _visitors(api: ApiClient, tour: Tour) -> dict[str, Visitor]:
    visitors = {"": Visitor(api)}
    for role, key in (("admin", tour.admin), ("editor", tour.editor), ("viewer", tour.viewer)):
        visitors[role] = Visitor(api)
        await visitors[role].sign_in(key)
    return visitors


def _no_code_in(url: str) -> None:
    assert "?ok=" not in url and not re.search(r"[a-z]+_[a-z]+", url.split("?", 1)[-1]), url


async def _act(db: asyncpg.Connection, tour: Tour, v: dict[str, Visitor]) -> list[str]:
    """The console's own forms, as people use them: changes (for the audit rows) and
    refusals (each page shown after one is checked too)."""
    refused: list[str] = []
    c = "/console/conversas"
    status, _, url = await v["editor"].post(f"{c}/{tour.waiting}/assumir", {})
    assert status == 200, url
    _no_code_in(url)
    status, _, url = await v["editor"].post(f"{c}/{tour.waiting}/devolver", {})
    assert status == 200 and "feito=conversa-devolvida" in url
    agent = await db.fetchval("select id from agents where organization_id = $1", tour.org)
    status, _, url = await v["admin"].post(
        f"/console/agente/{agent}/modelo", {"model_provider": "anthropic", "model_name": "m-1"}
    )
    assert status == 200 and "feito=agente-atualizado" in url
    t, hours = "lembrete_vespera|pt_BR", {"business_hours": "segunda 9h", "timezone": "X"}
    forms = [
        # (who, where, what was typed, the refusal, the field it sits beside)
        ("admin", "/console/agente/horario", hours, "business_hours_invalid", "business_hours"),
        (
            "admin",
            f"/console/agente/{agent}/modelo",
            {"model_provider": "anthropic", "model_name": ""},  # as a browser sends it
            "invalid_model",
            "model_name",
        ),
        (
            "admin",
            "/console/numeros",
            {"kind": "cloud_api", "address": "106540352", "access_token": "t"},
            "invalid_access_token",
            "access_token",
        ),
        (
            "admin",
            "/console/equipe",
            {"name": HOSTILE, "email": "bia-sem-arroba", "role": "viewer"},
            "invalid_email",
            "email",
        ),
        ("viewer", "/console/rascunhos/clareamento/aprovar", {}, "forbidden", None),
        ("editor", f"{c}/{tour.phone_held}/assumir", {}, "held_by_other", None),
        (
            "editor",
            f"{c}/{tour.conversation}/template",
            {"template": t, "params": "Ana"},
            "template_params_mismatch",
            "params",
        ),
        (
            "editor",
            f"{c}/{tour.waiting}/responder",
            {"text": "Fazemos sim!"},
            "outside_service_window",
            "text",
        ),
    ]
    anonymous = v[""]
    anonymous.csrf = csrf_in((await anonymous.get("/console/entrar"))[1])
    status, html, _ = await anonymous.post("/console/entrar", {"key": "skt_errada_123"})
    assert status == 401 and 'data-codigo="chave_invalida"' in html
    refused.extend(f"sem sessão POST /console/entrar: {o}" for o in offenders(html))
    for role, path, form, code, beside in forms:
        status, html, url = await v[role].post(path, form)
        assert status >= 400 and f'data-codigo="{code}"' in html, (path, status)
        if beside is not None:  # the refusal beside its field, everything typed kept
            assert f'id="erro-{beside}"' in html, path
            for value in form.values():
                assert str(escape(value)) in html, (path, value)
        assert HOSTILE not in html  # typed back as text, never as markup
        refused.extend(f"{role} POST {path}: {o}" for o in offenders(html))
    return refused


async def test_every_console_page_speaks_pt_br_in_its_main_states(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    api: ApiClient,
) -> None:
    tour = await seed(db, resources, whatsapp_settings, fake_graph, api)
    uncovered = console_get_routes() - set(NOT_PAGES) - set(tour.pages)
    assert not uncovered, (
        f"add these console pages to tests/integration/console_tour.py: {uncovered}"
    )

    visitors = await _visitors(api, tour)
    try:
        problems = await _act(db, tour, visitors)
        for route, visits in tour.pages.items():
            for role, path in visits:
                status, html, url = await visitors[role].get(path)
                assert status in (200, 404), (route, role, path, status)
                assert "/console/entrar" not in url or not role, (role, path, url)
                problems.extend(f"{role or 'sem sessão'} {path}: {o}" for o in offenders(html))
    finally:
        for visitor in visitors.values():
            await visitor.close()
    assert not problems, "\n".join(problems)
    assert NUMBER  # the tour's number is the templates page's


async def test_every_time_is_said_in_the_orgs_zone_and_the_api_stays_utc(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    api: ApiClient,
) -> None:
    tour = await seed(db, resources, whatsapp_settings, fake_graph, api)
    manaus = ZoneInfo("America/Manaus")  # UTC-4, an hour behind São Paulo
    changed = await api.call(
        "PATCH", "/v1/settings/hours", tour.admin, json_body={"timezone": "America/Manaus"}
    )
    assert changed.status == 200, changed.body
    visitor = Visitor(api)
    try:
        await visitor.sign_in(tour.admin)
        # The waiting customer wrote 26 hours ago: "ontem", at Manaus's clock time.
        received = await db.fetchval(
            "select received_at from messages where conversation_id = $1", tour.waiting
        )
        _, html, _ = await visitor.get(f"/console/conversas/{tour.waiting}")
        local = received.astimezone(manaus)
        named = "ontem" if local.date() == (datetime.now(manaus) - timedelta(days=1)).date() else ""
        assert f"{named} às {local:%H:%M}".strip() in visible_text(html)
        # The polled JSON says when it was drawn, in the same zone ("Atualizado às ...").
        before = datetime.now(manaus).replace(second=0, microsecond=0)
        _, text, _ = await visitor.get("/console/atendimento/dados")
        after = datetime.now(manaus)
        stamp = datetime.strptime(json.loads(text)["updated_at"], "%H:%M:%S").time()
        assert before.time() <= stamp <= after.time() or before.date() != after.date()
    finally:
        await visitor.close()
    # The API itself keeps ISO 8601 in UTC.
    shown = await api.get(f"/v1/conversations/{tour.waiting}", tour.admin)
    assert shown.body["created_at"].endswith(("+00:00", "Z"))
