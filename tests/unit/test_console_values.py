"""Unit tests of the console's pure parts: a draft's diff cut into coloured lines, session
secrets and CSRF tokens."""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from api.console.diff_lines import BIDI_CONTROLS, DiffLine, LineKind, counts, diff_lines
from api.console.moments import Clock
from api.console.render import build_templates, day, number, segment, share
from api.console.sessions import (
    csrf_token,
    hash_secret,
    mint_secret,
    tokens_match,
    well_formed,
)


def _unified(before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="instalada/SKILL.md",
            tofile="rascunho/SKILL.md",
        )
    )


def test_a_unified_diff_is_cut_into_kinds_with_its_markers_kept() -> None:
    lines = diff_lines(_unified("a\n--- b\nc\n", "a\n+++ b\nc\nd\n"))
    assert lines == [
        DiffLine(LineKind.HEADER, "--- instalada/SKILL.md"),
        DiffLine(LineKind.HEADER, "+++ rascunho/SKILL.md"),
        DiffLine(LineKind.HUNK, "@@ -1,3 +1,4 @@"),
        DiffLine(LineKind.CONTEXT, " a"),
        # After the first hunk, a body line that reads like a header is a change.
        DiffLine(LineKind.REMOVED, "---- b"),
        DiffLine(LineKind.ADDED, "++++ b"),
        DiffLine(LineKind.CONTEXT, " c"),
        DiffLine(LineKind.ADDED, "+d"),
    ]
    assert counts(lines) == (2, 1)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("\n... (12 linhas a mais não mostradas)", LineKind.NOTE),
        ("\\ No newline at end of file", LineKind.NOTE),
    ],
)
def test_notes_are_neither_added_nor_removed(text: str, kind: LineKind) -> None:
    assert [line.kind for line in diff_lines(text) if line.text] == [kind]


def test_no_diff_gives_no_lines() -> None:
    assert diff_lines("") == [] and counts([]) == (0, 0)


def test_a_session_secret_is_random_well_formed_and_stored_only_as_its_hash() -> None:
    first, second = mint_secret(), mint_secret()
    assert first != second and well_formed(first) and well_formed(second)
    assert len(hash_secret(first)) == 32 and first.encode() not in hash_secret(first)
    for bad in (None, "", first[:-1], first + "A", first[:-1] + "!"):
        assert not well_formed(bad)


def test_the_csrf_token_is_the_sessions_own_and_compared_whole() -> None:
    secret = mint_secret()
    token = csrf_token(secret)
    assert token == csrf_token(secret) != csrf_token(mint_secret())
    assert secret not in token
    assert tokens_match(token, token)
    for given in (None, "", token[:-1], token + "0", token.upper(), "é" * 64):
        assert not tokens_match(token, given)
    assert not tokens_match("", "")


def test_a_time_in_a_template_is_said_from_the_pages_clock_and_a_path_segment_encoded() -> None:
    page = build_templates().from_string("{{ at|when }}")
    clock = Clock(datetime(2026, 12, 3, 18, 0, tzinfo=UTC), ZoneInfo("America/Sao_Paulo"))
    assert page.render(at="2026-12-03T15:05:00Z", clock=clock) == "hoje às 12:05"
    assert page.render(at=None, clock=clock) == "—"
    assert segment("a/b ?#") == "a%2Fb%20%3F%23"


def test_a_day_a_count_and_a_share_as_the_usage_page_shows_them() -> None:
    assert day("2025-03-02") == "02/03/2025"
    assert [number(n) for n in (0, 999, 1_000, 1_234_567)] == ["0", "999", "1.000", "1.234.567"]
    assert [share(p, w) for p, w in ((0, 10), (1, 3), (2, 3), (5, 5))] == [
        "0%",
        "33%",
        "67%",
        "100%",
    ]
    assert share(0, 0) == share(5, 0) == "—"  # no input: no share, not a division by zero


@pytest.mark.parametrize(
    "control",
    ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"],
)
def test_bidirectional_controls_in_a_diff_are_shown_never_applied(control: str) -> None:
    # "Troca em 7 dias" that an override would show reversed, hiding what the line holds.
    after = f"Troca em {control}said 7{chr(0x202C)} dias\n"
    lines = diff_lines(_unified("Troca em 7 dias\n", after))
    [added] = [line for line in lines if line.kind is LineKind.ADDED]
    code = f"<U+{ord(control):04X}>"
    assert added.text == f"+Troca em {code}said 7<U+202C> dias"
    assert not any(ch in BIDI_CONTROLS for line in lines for ch in line.text)
    page = build_templates().from_string(
        '{% for line in lines %}<span class="l {{ line.kind }}">{{ line.text }}</span>{% endfor %}'
    )
    html = page.render(lines=lines)
    assert control not in html and f"&lt;U+{ord(control):04X}&gt;" in html
