"""A reply's delivery in words: Meta's code read back from the stored reason, and a pt-BR
sentence for every failure (never the raw code alone, never Meta's English)."""

from __future__ import annotations

import pytest

from api.console.delivery_view import META_ERRORS, delivery_label
from api.delivery_codes import delivery_json, meta_error_code


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("131026 Message undeliverable: Message Undeliverable.", 131026),
        ("131051", 131051),
        ("outside_service_window: HTTP 400, Graph error 131047: Re-engagement message", 131047),
        ("send_rejected: HTTP 400, Graph error None: {'x': 1}", None),
        ("WAHA ack -1 ERROR", None),
        ("Message undeliverable", None),
        ("1" * 40 + " too long to be a code", None),
        (None, None),
        ("", None),
    ],
)
def test_metas_code_is_read_from_the_stored_reason(error: str | None, code: int | None) -> None:
    assert meta_error_code(error) == code


def test_the_code_is_added_only_when_the_reply_failed() -> None:
    assert delivery_json(None, None) is None
    assert delivery_json("read", None) == {"status": "read", "error": None}
    failed = delivery_json("failed", "131047 Re-engagement message")
    assert failed == {
        "status": "failed",
        "error": "131047 Re-engagement message",
        "error_code": 131047,
    }


@pytest.mark.parametrize(
    ("status", "shown"),
    [("pending", "pendente"), ("sent", "enviada"), ("delivered", "entregue"), ("read", "lida")],
)
def test_each_status_reads_in_portuguese(status: str, shown: str) -> None:
    assert delivery_label({"status": status, "error": None}) == shown


def test_a_known_code_has_its_sentence_and_an_unknown_one_a_generic_sentence() -> None:
    known = delivery_label({"status": "failed", "error": "131026 x", "error_code": 131026})
    assert known == f"falhou — {META_ERRORS[131026]} (código 131026)"
    unknown = delivery_label({"status": "failed", "error": "999999 x", "error_code": 999999})
    assert unknown is not None and unknown.startswith("falhou — o WhatsApp recusou")
    assert unknown.endswith("(código 999999)") and unknown != "falhou — (código 999999)"
    ours = delivery_label({"status": "failed", "error": "no_channel: none", "error_code": None})
    assert ours == "falhou — a organização não tem um número conectado para enviar"


def test_the_common_codes_all_have_a_sentence() -> None:
    for code in (131026, 131047, 131051, 131049, 131050, 130429, 131056, 132001):
        assert META_ERRORS[code] and "_" not in META_ERRORS[code]
