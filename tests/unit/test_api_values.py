"""The admin API's pure pieces: keys, the role ladder, cursors, activation windows, agent
changes."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta

import pytest

from api.activation_summary import summarize_activations
from api.agent_change import AgentChange, apply_agent_change
from api.errors import ApiError
from api.keys import Role, hash_key, mint_key, parse_bearer, parse_key, role_allows
from api.pagination import encode_cursor, page_of, page_sorted, parse_limit, read_cursor
from api.skill_queries import ActivationDay
from api.usage_routes import parse_agent_id, parse_days
from turn.agent_queries import Agent


def test_a_minted_key_parses_back_to_its_prefix_and_hash() -> None:
    minted = mint_key()
    assert minted.key.startswith(minted.prefix + "_") and len(minted.prefix) == 12
    assert parse_key(minted.key) == (minted.prefix, minted.key_hash)
    assert parse_bearer(f"Bearer {minted.key}") == (minted.prefix, hash_key(minted.key))
    assert minted.key not in repr(minted)
    assert mint_key().prefix != minted.prefix


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Basic abc",
        "Bearer skt_abc",
        "Bearer skt_ABCDEFGH_" + "a" * 43,
        "Bearer skt_abcdefgh_" + "a" * 42,
        "Bearer skt_abcdefgh_" + "a" * 43 + " extra",
    ],
)
def test_anything_but_a_well_formed_bearer_key_is_no_key(header: str | None) -> None:
    assert parse_bearer(header) is None


@pytest.mark.parametrize(
    ("have", "need", "allowed"),
    [
        (Role.VIEWER, Role.VIEWER, True),
        (Role.VIEWER, Role.EDITOR, False),
        (Role.EDITOR, Role.EDITOR, True),
        (Role.EDITOR, Role.ADMIN, False),
        (Role.ADMIN, Role.VIEWER, True),
        (Role.ADMIN, Role.ADMIN, True),
    ],
)
def test_each_role_may_do_what_the_ones_below_may(have: Role, need: Role, allowed: bool) -> None:
    assert role_allows(have, need) is allowed


def test_cursors_round_trip_and_refuse_what_was_not_issued() -> None:
    cursor = encode_cursor("drafts", ["2026-11-30T10:00:00+00:00", "x"])
    assert read_cursor("drafts", {"cursor": cursor}, lambda k: tuple(k)) == (
        "2026-11-30T10:00:00+00:00",
        "x",
    )
    assert read_cursor("drafts", {}, lambda k: k) is None
    for query, kind in (
        ({"cursor": cursor}, "audit"),  # another list's cursor
        ({"cursor": "%%%"}, "drafts"),
        ({"cursor": encode_cursor("drafts", [])}, "drafts"),  # parse fails on it
    ):
        with pytest.raises(ApiError) as refused:
            read_cursor(kind, query, lambda k: datetime.fromisoformat(k[0]))
        assert (refused.value.status, refused.value.code) == (400, "invalid_cursor")


def test_a_page_has_a_next_cursor_only_when_a_row_is_left() -> None:
    assert page_of([1, 2, 3], 3, "n", lambda n: [n]).next is None
    page = page_of([1, 2, 3, 4], 3, "n", lambda n: [n])
    assert page.items == [1, 2, 3]
    assert read_cursor("n", {"cursor": page.next or ""}, lambda k: k[0]) == 3


def test_a_short_sorted_list_pages_by_its_keyset_not_by_position() -> None:
    start = datetime(2026, 11, 30, tzinfo=UTC)
    rows = [(start + timedelta(seconds=n), uuid.UUID(int=n)) for n in range(5)]

    def parse(k: list[str]) -> tuple[datetime, uuid.UUID]:
        return datetime.fromisoformat(k[0]), uuid.UUID(k[1])

    first = page_sorted(rows, {"limit": "2"}, "t", lambda r: r, parse)
    assert first.items == rows[:2] and first.next is not None
    # A row added before the cursor does not shift the next page.
    grown = [(start - timedelta(seconds=1), uuid.UUID(int=99)), *rows]
    second = page_sorted(grown, {"limit": "2", "cursor": first.next}, "t", lambda r: r, parse)
    assert second.items == rows[2:4]


@pytest.mark.parametrize("text", ["0", "201", "-1", "x", "1.5"])
def test_a_limit_outside_1_to_200_is_refused(text: str) -> None:
    with pytest.raises(ApiError):
        parse_limit({"limit": text})
    assert parse_limit({}) == 50 and parse_limit({"limit": "200"}) == 200


def test_activation_windows_end_today_and_include_it() -> None:
    today = date(2026, 3, 1)  # after a short February: windows cross the month
    rows = [
        ActivationDay(today - timedelta(days=ago), hard, probe, intent=probe * 10)
        for ago, hard, probe in ((0, 1, 0), (6, 2, 1), (7, 4, 0), (29, 8, 2), (30, 16, 4))
    ]
    summary = summarize_activations(rows, today)
    assert summary["last_7_days"] == {"hard": 3, "intent": 10, "probe": 1}
    assert summary["last_30_days"] == {"hard": 15, "intent": 30, "probe": 3}
    assert [d["day"] for d in summary["days"][:1] + summary["days"][-1:]] == [
        "2026-01-31",
        "2026-03-01",
    ]
    assert sum(d["hard"] for d in summary["days"]) == 15


def _agent(provider: str | None = None, name: str | None = None) -> Agent:
    return Agent(uuid.uuid4(), uuid.uuid4(), "A", "Persona", provider, name, datetime.now(UTC))


def test_an_agents_vision_is_switched_alone() -> None:
    agent = _agent("openai", "gpt")
    seeing = apply_agent_change(agent, AgentChange.model_validate({"vision": True}))
    assert seeing.vision and (seeing.model_provider, seeing.model_name) == ("openai", "gpt")
    assert not apply_agent_change(seeing, AgentChange.model_validate({"vision": False})).vision
    assert apply_agent_change(seeing, AgentChange.model_validate({"name": "B"})).vision


@pytest.mark.parametrize(
    ("agent", "change", "expected"),
    [
        (_agent(), {"model_provider": "local"}, ("local", None)),
        (_agent("openai", "gpt"), {"model_name": "gpt-2"}, ("openai", "gpt-2")),
        (
            _agent("openai", "gpt"),
            {"model_provider": "anthropic", "model_name": "c"},
            ("anthropic", "c"),
        ),
        (_agent("openai", "gpt"), {"default_model": True}, (None, None)),
        (_agent("openai", "gpt"), {"name": " Nova "}, ("openai", "gpt")),
    ],
)
def test_agent_changes_keep_a_valid_model(
    agent: Agent, change: dict[str, object], expected: tuple[str | None, str | None]
) -> None:
    changed = apply_agent_change(agent, AgentChange.model_validate(change))
    assert (changed.model_provider, changed.model_name) == expected
    assert changed.name == str(change.get("name", "A")).strip()


@pytest.mark.parametrize(
    ("agent", "change", "code"),
    [
        (_agent(), {}, "nothing_to_change"),
        (_agent(), {"default_model": False}, "nothing_to_change"),
        (_agent(), {"model_name": "x"}, "invalid_model"),
        (_agent("openai", "gpt"), {"model_provider": "anthropic"}, "invalid_model"),
        (_agent(), {"model_provider": "gemini"}, "invalid_model"),
        (_agent(), {"default_model": True, "model_name": "x"}, "invalid_model"),
        (_agent(), {"system_prompt": ""}, "invalid_prompt"),
        (_agent(), {"name": "x" * 101}, "invalid_name"),
    ],
)
def test_agent_changes_are_refused_with_the_clis_codes(
    agent: Agent, change: dict[str, object], code: str
) -> None:
    with pytest.raises(ApiError) as refused:
        apply_agent_change(agent, AgentChange.model_validate(change))
    assert (refused.value.status, refused.value.code) == (422, code)


def test_days_is_30_unless_given_and_1_to_90_ascii_digits() -> None:
    assert parse_days({}) == 30
    assert [parse_days({"days": t}) for t in ("1", "90", "07")] == [1, 90, 7]
    for text in ("0", "91", "-1", "", " 5", "1.5", "²", "٣", "9" * 400):
        with pytest.raises(ApiError) as refused:
            parse_days({"days": text})
        assert (refused.value.status, refused.value.code) == (422, "invalid_days"), text


def test_agent_id_is_a_uuid_or_absent() -> None:
    agent = uuid.uuid4()
    assert parse_agent_id({}) is None
    assert parse_agent_id({"agent_id": str(agent)}) == agent
    for text in ("", "x", str(agent)[:-1], "' or 1=1 --"):
        with pytest.raises(ApiError) as refused:
            parse_agent_id({"agent_id": text})
        assert (refused.value.status, refused.value.code) == (422, "invalid_agent_id"), text
