"""Unit tests of demo.transcript: the demo report as a transcript a person can read."""

from __future__ import annotations

import copy
from typing import Any

from demo.transcript import render_transcript

ORG = "0f7c2a1e-5d4b-4c3a-9e8f-7a6b5c4d3e2f"
BOLETO_V = "a1a1a1a1-0000-4000-8000-000000000001"
FRETE_V = "b2b2b2b2-0000-4000-8000-000000000002"
ORCAMENTO_V = "c3c3c3c3-0000-4000-8000-000000000003"
HASH = "ab" * 32


def result(
    matched: list[tuple[str, str]],
    probes: list[str],
    tools: list[str],
    prefix: str = HASH,
) -> dict[str, Any]:
    """Shaped like jobs.inbound's return value for a replied turn."""
    return {
        "status": "replied",
        "inbound_id": "9d9d9d9d-0000-4000-8000-000000000009",
        "matched": [{"name": n, "version_id": v} for n, v in matched],
        "probes": probes,
        "tools": tools,
        "prefix_sha256": prefix,
    }


def report() -> dict[str, Any]:
    """Shaped like demo.run.run_demo's report."""
    return {
        "organization_id": ORG,
        "skills": {
            "segunda-via-boleto": BOLETO_V,
            "frete-e-entrega": FRETE_V,
            "orcamento": ORCAMENTO_V,
        },
        "deliveries": [
            {
                "message_id": "wamid.demo-1",
                "text": "Preciso da segunda via do boleto.",
                "purpose": "casa a skill com referência",
                "queued": True,
                "result": result([("segunda-via-boleto", BOLETO_V)], [], ["read_skill_reference"]),
            },
            {
                "message_id": "wamid.demo-2",
                "text": "Vocês dão desconto à vista?",
                "purpose": "só uma palavra de sondagem (probe)",
                "queued": True,
                "result": result([], ["orcamento"], []),
            },
            {
                "message_id": "wamid.demo-4",
                "text": "Quanto fica o frete para o CEP 01310-100?",
                "purpose": "casa uma skill sem referência",
                "queued": True,
                # Another tool was called, but not read_skill_reference.
                "result": result([("frete-e-entrega", FRETE_V)], [], ["skill_view"]),
            },
            {
                "message_id": "wamid.demo-1",
                "text": "Preciso da segunda via do boleto.",
                "purpose": "entrega duplicada da mensagem 1",
                "queued": False,
                "result": None,
            },
            {
                "message_id": "wamid.demo-1",
                "text": "Preciso da segunda via do boleto.",
                "purpose": "reentrega tardia (fora da deduplicação da fila)",
                "queued": True,
                "result": {"status": "duplicate", "inbound_id": "x"},
            },
        ],
        "replies": [
            {
                "external_id": "wamid.demo-1",
                "reply_id": "r1",
                "inbound": "Preciso da segunda via do boleto.",
                "reply": "Envio a segunda via pelo link seguro.\nBoletos até 30 dias.",
                "outbox_status": "sent",
            },
            {
                "external_id": "wamid.demo-2",
                "reply_id": "r2",
                "inbound": "Vocês dão desconto à vista?",
                "reply": "Olá! Obrigado pela mensagem.",
                "outbox_status": "sent",
            },
            {
                "external_id": "wamid.demo-4",
                "reply_id": "r3",
                "inbound": "Quanto fica o frete para o CEP 01310-100?",
                "reply": "O frete é grátis acima de R$ 199.",
                "outbox_status": "pending",
            },
        ],
        "activations": [
            {"skill_name": "segunda-via-boleto", "skill_version_id": BOLETO_V, "trigger": "hard"},
            {"skill_name": "orcamento", "skill_version_id": "", "trigger": "probe"},
            {"skill_name": "frete-e-entrega", "skill_version_id": FRETE_V, "trigger": "hard"},
        ],
    }


def block(transcript: str, number: int) -> str:
    """The lines of delivery [number], up to the blank line after it."""
    start = transcript.index(f"[{number}] ")
    return transcript[start : transcript.index("\n\n", start)]


def test_header_names_the_org_and_each_installed_skill_with_its_version() -> None:
    text = render_transcript(report())
    assert ORG in text.splitlines()[0]
    for name, version in report()["skills"].items():
        assert f"{name}: versão {version}" in text


def test_each_message_shows_its_text_purpose_match_probes_and_tool_use() -> None:
    text = render_transcript(report())
    first = block(text, 1)
    assert "wamid.demo-1" in first and "Preciso da segunda via do boleto." in first
    assert "casa a skill com referência" in first
    assert f"segunda-via-boleto (versão {BOLETO_V})" in first
    assert "probes: nenhuma" in first
    assert "read_skill_reference chamada: sim" in first
    assert HASH in first

    second = block(text, 2)
    assert "skills casadas: nenhuma" in second
    assert "probes: orcamento" in second
    assert "read_skill_reference chamada: não" in second

    third = block(text, 3)
    assert f"frete-e-entrega (versão {FRETE_V})" in third
    assert "read_skill_reference chamada: não" in third


def test_each_replied_message_shows_its_reply_and_outbox_status() -> None:
    text = render_transcript(report())
    assert "resposta (sent): Envio a segunda via pelo link seguro." in block(text, 1)
    assert "resposta (sent): Olá! Obrigado pela mensagem." in block(text, 2)
    assert "resposta (pending): O frete é grátis acima de R$ 199." in block(text, 3)


def test_a_duplicate_shows_no_second_reply() -> None:
    text = render_transcript(report())
    refused = block(text, 4)
    assert "duplicada recusada" in refused
    assert "resposta" not in refused
    late = block(text, 5)
    assert "já respondida" in late and "nenhuma segunda resposta" in late
    assert "resposta (" not in late
    assert text.count("resposta (sent): Envio a segunda via") == 1


def test_activations_list_hard_matches_with_versions_and_probes_without() -> None:
    text = render_transcript(report())
    section = text.split("ativações gravadas:\n", 1)[1]
    lines = section.splitlines()
    assert len(lines) == 3
    assert "hard" in lines[0] and "segunda-via-boleto" in lines[0] and BOLETO_V in lines[0]
    assert "probe" in lines[1] and "orcamento" in lines[1] and "sem versão" in lines[1]


def test_no_activations_says_so() -> None:
    data = report()
    data["activations"] = []
    assert render_transcript(data).endswith("ativações gravadas:\n  (nenhuma)")


def test_outbox_count_is_replies_over_received_messages() -> None:
    data = report()
    data["replies"][2]["reply"] = None
    text = render_transcript(data)
    assert "mensagens recebidas: 3, respondidas: 2, respostas no outbox: 2" in text


def test_prefix_hash_is_reported_identical_when_every_turn_shares_it() -> None:
    text = render_transcript(report())
    line = next(x for x in text.splitlines() if x.startswith("prefixo do prompt:"))
    assert "idêntico" in line
    assert "DIFERENTE" not in line


def test_prefix_hash_is_reported_different_when_one_turn_differs() -> None:
    data = copy.deepcopy(report())
    data["deliveries"][2]["result"]["prefix_sha256"] = "cd" * 32
    text = render_transcript(data)
    line = next(x for x in text.splitlines() if x.startswith("prefixo do prompt:"))
    assert "DIFERENTE" in line
    assert "idêntico" not in line
    assert "2" in line


def test_no_replied_turn_does_not_claim_the_prefix_differed() -> None:
    data = report()
    for delivery in data["deliveries"]:
        if delivery["queued"]:
            delivery["result"] = {"status": "failed", "code": "model_unavailable"}
    line = next(
        x for x in render_transcript(data).splitlines() if x.startswith("prefixo do prompt:")
    )
    assert "DIFERENTE" not in line
