"""Unit tests of the console's words: every success says a pt-BR word in its URL, every
audited action and stored enumeration has pt-BR words, an audit row's details read as words
(no None, True, False or ['...']), and a refusal never shows a code span."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from api.console import actions, labels
from api.console.pages import DONE_WORDS, NOTICES, done_query
from api.console.refusals import refusal_sentence
from api.errors import ApiError
from api.route_table import ROUTES
from consolidation import rewrite
from conversation.errors import ConversationConflict
from skills.curator.rules import SkipReason
from skills.curator.schedule import RunTrigger

EDITOR_OPERATIONS = ("put_skill_route", "put_file_route", "delete_file_route", "rollback_route")


def test_every_console_action_leaves_a_pt_br_word_in_the_url_and_a_notice() -> None:
    operations = {a.operation for a in actions.ACTIONS} | set(EDITOR_OPERATIONS)
    assert operations <= set(DONE_WORDS), operations - set(DONE_WORDS)
    assert set(NOTICES) <= set(DONE_WORDS)
    assert len(set(DONE_WORDS.values())) == len(DONE_WORDS)  # one word, one operation
    assert done_query("takeover_route") == "?feito=conversa-assumida"
    for word in DONE_WORDS.values():
        assert "_" not in word and word.isascii()


def test_every_audited_action_and_stored_enumeration_has_words() -> None:
    audited = {r.action for r in ROUTES if r.action}
    assert audited <= set(labels.AUDIT_ACTIONS), audited - set(labels.AUDIT_ACTIONS)
    assert {t.value for t in RunTrigger} <= set(labels.CURATOR_TRIGGERS)
    assert {r.value for r in SkipReason} <= set(labels.CURATOR_SKIPS)
    assert labels.label("ceiling", "curator_trigger") == "pelo intervalo máximo entre relatórios"
    assert labels.label("not-agent-created", "curator_skip") == "não foi escrita pelo agente"
    assert labels.label("REJECTED", "template_status") == "recusado pela Meta"
    assert labels.label("something.new", "audit_action") == "outra ação"


@pytest.mark.parametrize(
    ("detail", "shown"),
    [
        ({"to": None}, [("para", "nenhum", False)]),
        (
            {"answer_pending": False},
            [("o agente responde o que ficou sem resposta", "não", False)],
        ),
        ({"fields": ["model_name"]}, [("campos", "model_name", True)]),
        ({"force": True}, [("à força", "sim", False)]),
        ({"code": "forbidden"}, [("motivo", "sem permissão", False)]),
        (
            {"after_mode": "waiting", "before_held_by": "phone"},
            [
                ("depois", "esperando", False),
                ("estava com", "celular da empresa", False),
            ],
        ),
    ],
)
def test_an_audit_rows_details_read_as_words(
    detail: dict[str, object], shown: list[tuple[str, str, bool]]
) -> None:
    assert [(d.label, d.text, d.code) for d in labels.audit_detail(detail)] == shown


def test_a_refusal_reads_as_a_sentence_without_code_spans() -> None:
    window = ConversationConflict("outside_service_window", "aprovados (`templates`).")
    assert "`" not in refusal_sentence(window) and "template aprovado" in refusal_sentence(window)
    other = ApiError(422, "invalid_input", "Envie `name` ou `role`.")
    assert refusal_sentence(other) == "Envie “name” ou “role”."


def test_every_reason_a_rewrite_is_refused_has_words() -> None:
    source = Path(rewrite.__file__).read_text(encoding="utf-8")
    reasons = set(re.findall(r'(?:RewriteRejected|rejected)\(f?"([a-z_]+)', source))
    assert reasons and reasons <= set(labels.REWRITE_REJECTIONS), reasons
