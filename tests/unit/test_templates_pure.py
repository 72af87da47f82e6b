"""Templates read from a remote answer, bounded and checked; a body filled in; the Cloud
API's template message."""

from __future__ import annotations

from channels.templates import (
    MAX_BODY_CHARS,
    MAX_PLACEHOLDERS,
    MAX_TEMPLATES_PER_PAGE,
    Template,
    filled_body,
    parse_page,
    placeholders_of,
    template_message,
)

BASE = "https://graph.facebook.com/v23.0"


def _entry(name: str, body: str = "Oi {{1}}", **more: object) -> dict[str, object]:
    return {
        "name": name,
        "language": "pt_BR",
        "status": "APPROVED",
        "category": "UTILITY",
        "components": [{"type": "HEADER", "text": "x"}, {"type": "BODY", "text": body}],
        **more,
    }


def test_a_page_is_read_and_odd_entries_are_skipped() -> None:
    page = parse_page(
        {
            "data": [
                _entry("lembrete", "Oi {{1}}, dia {{2}} às {{1}}"),
                _entry("Maiúscula"),
                {"name": "sem_idioma", "status": "APPROVED"},
                _entry("status_estranho", status="<script>"),
                "not a dict",
            ],
            "paging": {"next": f"{BASE}/123/message_templates?after=abc"},
        },
        BASE,
    )
    assert [t.name for t in page.templates] == ["lembrete"]
    assert page.templates[0].placeholders == ("1", "2") and page.skipped == 4
    assert page.next_url == f"{BASE}/123/message_templates?after=abc"


def test_the_next_page_is_followed_only_on_the_same_origin() -> None:
    for elsewhere in (
        "https://evil.example/v23.0/123/message_templates",
        "http://graph.facebook.com/v23.0/x",
        "https://graph.facebook.com:8443/v23.0/x",
        "https://graph.facebook.com/" + "a" * 5000,
        12,
    ):
        assert parse_page({"data": [], "paging": {"next": elsewhere}}, BASE).next_url is None


def test_a_hostile_page_is_bounded() -> None:
    huge = "{{1}}" + "x" * 1_000_000
    many = " ".join(f"{{{{v{i}}}}}" for i in range(500))
    page = parse_page(
        {"data": [_entry("grande", huge), _entry("muitas", many)] * MAX_TEMPLATES_PER_PAGE},
        BASE,
    )
    assert len(page.templates) == MAX_TEMPLATES_PER_PAGE
    assert len(page.templates[0].body) == MAX_BODY_CHARS
    assert len(page.templates[1].placeholders) == MAX_PLACEHOLDERS
    assert len(placeholders_of("{{" * 100_000)) == 0


def test_a_body_is_filled_and_the_wire_format_is_metas() -> None:
    template = Template(
        "lembrete", "pt_BR", "UTILITY", "APPROVED", "Oi {{1}}, às {{2}}.", ("1", "2")
    )
    assert filled_body(template, ["Ana", "15h"]) == "Oi Ana, às 15h."
    assert template_message("5511", "lembrete", "pt_BR", ["Ana", "15h"], ("1", "2")) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5511",
        "type": "template",
        "template": {
            "name": "lembrete",
            "language": {"code": "pt_BR"},
            "components": [
                {
                    "type": "body",
                    "parameters": [
                        {"type": "text", "text": "Ana"},
                        {"type": "text", "text": "15h"},
                    ],
                }
            ],
        },
    }
    named = template_message("5511", "t", "pt_BR", ["Ana"], ("nome",))
    assert named["template"]["components"][0]["parameters"] == [
        {"type": "text", "text": "Ana", "parameter_name": "nome"}
    ]
    assert "components" not in template_message("5511", "t", "pt_BR", [], ())["template"]
