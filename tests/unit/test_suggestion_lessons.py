"""suggestions.lessons, keywords and grouping on small threads and question sets."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from skills.models import LoadedSkill, SkillMatcher
from suggestions.closest import closest_skill
from suggestions.draft_content import body_of, draft_content
from suggestions.grouping import group_lessons
from suggestions.keywords import budget_of, choose_keywords
from suggestions.lessons import Lesson, Question, ThreadMessage, lessons_of
from suggestions.privacy import REMOVED
from suggestions.similarity import LexicalSimilarity

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CONVERSATION = uuid.uuid4()
LONG = "Aceitamos pix sim, a chave é o nosso CNPJ."


def _thread(*turns: tuple[str, str] | tuple[str, str, float]) -> list[ThreadMessage]:
    """(who, text[, seconds after the previous]): who is customer, agent, ack, person,
    phone or template."""
    out: list[ThreadMessage] = []
    at = T0
    for turn in turns:
        who, text = turn[0], turn[1]
        at += timedelta(seconds=turn[2] if len(turn) > 2 else 60)  # type: ignore[misc]
        inbound = who == "customer"
        out.append(
            ThreadMessage(
                id=uuid.uuid4(),
                conversation_id=CONVERSATION,
                direction="inbound" if inbound else "outbound",
                author=None if inbound else {"ack": "agent", "template": "person"}.get(who, who),
                author_key_prefix="skt_a" if who == "person" else None,
                kind="template" if who == "template" else "text",
                body=text,
                at=at,
                turn_reply=who == "agent",
            )
        )
    return out


def _texts(lesson: Lesson) -> list[str]:
    return [q.text for q in lesson.questions]


def test_a_handoff_burst_and_what_came_while_waiting_are_the_question() -> None:
    thread = _thread(
        ("customer", "bom dia"),
        ("agent", "Bom dia! Como posso ajudar?"),
        ("customer", "vocês aceitam pix?"),
        ("customer", "é pra pagar a encomenda"),
        ("agent", "Vou chamar uma pessoa da equipe."),  # the handoff's acknowledgement
        ("customer", "alô?"),
        ("person", LONG),
        ("person", "Manda o comprovante aqui depois!"),
        ("customer", "obrigada"),
    )
    [lesson] = lessons_of(thread)
    assert _texts(lesson) == ["vocês aceitam pix?", "é pra pagar a encomenda", "alô?"]
    assert lesson.answer == LONG + "\nManda o comprovante aqui depois!"
    assert lesson.author == "skt_a" and lesson.id == thread[6].id


def test_templates_short_replies_fixed_texts_and_the_phones_auto_reply_are_no_answer() -> None:
    ack = "Um instante, chamando a equipe para te atender."
    thread = _thread(
        ("customer", "tem pix?"),
        ("phone", "Olá! No momento não podemos responder.", 1.0),  # the app's away message
        ("template", "Seu pedido foi enviado, acompanhe pelo link."),
        ("person", ack),
        ("person", "ok"),
    )
    assert lessons_of(thread, [ack]) == []
    thread = _thread(("customer", "tem pix?"), ("phone", LONG, 20.0))
    [lesson] = lessons_of(thread)
    assert lesson.author == "phone" and _texts(lesson) == ["tem pix?"]


def test_a_question_stops_at_the_previous_answer_and_at_an_earlier_agent_reply() -> None:
    thread = _thread(
        ("customer", "qual o horário?"),
        ("agent", "Das 9h às 18h."),
        ("customer", "e sábado?"),
        ("agent", "Vou confirmar com a equipe."),
        ("person", "Sábado abrimos das 9h às 13h, pode vir!"),
        ("customer", "e entregam no centro?"),
        ("person", "Entregamos sim, a taxa para o centro é R$ 10."),
    )
    first, second = lessons_of(thread)
    assert _texts(first) == ["e sábado?"]
    assert _texts(second) == ["e entregam no centro?"]


def _lesson(question: str, answer: str, conversation: uuid.UUID | None = None) -> Lesson:
    return Lesson(
        uuid.uuid4(),
        conversation or uuid.uuid4(),
        (Question(uuid.uuid4(), question),),
        answer,
        "skt_a",
        T0,
    )


def test_keywords_match_the_group_and_stay_within_the_outside_budget() -> None:
    questions = [
        "vocês aceitam pix?",
        "da pra pagar no pix?",
        "posso fazer um pix pra pagar a encomenda? meu nome é Joana",
        "aceita cartão de crédito?",
    ]
    others = ["qual o horário?", "vocês entregam?", "quanto custa o bolo de pote?"] * 10
    choice = choose_keywords(questions, others, names=["Joana"])
    assert "pix" in choice.keywords and choice.unmatched == ()
    assert not any("joana" in k or "nome" in k for k in choice.keywords)
    assert choice.outside_matches <= choice.budget == budget_of(len(others)) == 10
    # A word every other customer writes cannot become a keyword past the budget.
    crowded = ["aceita pix no site?"] + ["o site está fora do ar"] * 30
    narrow = choose_keywords(["tem site?"], crowded)
    assert narrow.keywords == () and narrow.unmatched == (0,)


def test_the_body_is_only_the_answers_and_the_name_and_keywords_are_not_data() -> None:
    lessons = [
        _lesson("meu nome é Joana, aceita pix? cpf 123.456.789-09", f"Oi Joana! {LONG}"),
        _lesson("dá pra pagar no pix?", f"Pode sim! {LONG}"),
    ]
    content = draft_content(lessons, ["qual o horário?"] * 5, names=["Joana"])
    assert "Joana" not in content.body and "123.456.789-09" not in content.body
    assert f"Oi {REMOVED}! {LONG}" in content.body and "aceita pix?" not in content.body
    assert content.name.startswith("duvida-") and "pix" in content.keywords
    body, _removed, _kept = body_of(lessons, ["Joana"])
    assert body == content.body  # deterministic


def test_grouping_joins_one_topic_and_keeps_others_apart() -> None:
    lessons = [
        _lesson("vocês aceitam pix?", LONG),
        _lesson("da pra pagar no pix?", LONG),
        _lesson("posso pagar com pix?", LONG),
        _lesson("qual o horário de sábado?", "Sábado das 9h às 13h, pessoal."),
        _lesson("sábado abre em que horário?", "Sábado das 9h às 13h, pessoal."),
        _lesson("vocês entregam no centro?", "Entregamos sim, taxa de R$ 10."),
    ]
    groups = group_lessons(lessons, LexicalSimilarity())
    sizes = sorted(len(g.lessons) for g in groups)
    assert sizes == [1, 2, 3]
    again = group_lessons(list(reversed(lessons)), LexicalSimilarity())
    assert {g.id for g in groups} == {g.id for g in again}  # ids do not depend on order


def test_the_closest_skill_is_the_one_whose_keywords_match_most_questions() -> None:
    pix = LoadedSkill(version_id=uuid.uuid4(), name="pagamento", matcher=SkillMatcher(["pix"]))
    hours = LoadedSkill(
        version_id=uuid.uuid4(),
        name="horario-de-funcionamento",
        description="Horário de funcionamento da loja",
        matcher=SkillMatcher(["que horas abre"]),
    )
    questions = ["aceita pix?", "da pra pagar no pix?", "tem desconto?"]
    found = closest_skill(questions, [hours, pix])
    assert found is not None and found.to_json() == {"name": "pagamento", "score": 0.67}
    lexical = closest_skill(["qual o horário de funcionamento no sábado?"], [pix, hours])
    assert lexical is not None and lexical.name == "horario-de-funcionamento"
    assert closest_skill(["vocês entregam?"], [pix, hours]) is None
    assert closest_skill(questions, []) is None
