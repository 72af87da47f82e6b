"""Choices as Meta's Cloud API sends them (pure): 1-3 as an `interactive` `button` message
(reply buttons), 4-10 as an `interactive` `list` message (one section, its rows), and Meta's
refusal of one turned into the pt-BR reason its outbox row keeps."""

from __future__ import annotations

from typing import Any, Final

from delivery.outbound_choices import OutboundChoices

# Graph error codes Meta answers an interactive message it will not take, in our words.
_REFUSALS: Final = {
    131009: "um valor das opções não é aceito (parâmetro inválido)",
    131051: "este tipo de mensagem não é aceito para este número",
    131008: "falta um campo obrigatório das opções",
    100: "um campo das opções é inválido",
}


def interactive_message(to: str, offered: OutboundChoices) -> dict[str, Any]:
    """The body of POST /{phone-number-id}/messages for `offered`."""
    interactive: dict[str, Any]
    if offered.as_list:
        rows = []
        for choice in offered.choices:
            row = {"id": choice.id, "title": choice.title}
            if choice.description:
                row["description"] = choice.description
            rows.append(row)
        interactive = {
            "type": "list",
            "body": {"text": offered.text},
            "action": {"button": offered.button, "sections": [{"rows": rows}]},
        }
    else:
        interactive = {
            "type": "button",
            "body": {"text": offered.text},
            "action": {
                "buttons": [
                    {"type": "reply", "reply": {"id": c.id, "title": c.title}}
                    for c in offered.choices
                ]
            },
        }
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "interactive",
        "interactive": interactive,
    }


def refusal_reason(graph_code: int | None, detail: str) -> str:
    """Why the choices did not leave, for the people who read the outbox (pt-BR)."""
    why = _REFUSALS.get(graph_code or 0, "o WhatsApp recusou a mensagem")
    code = f" (erro {graph_code})" if graph_code is not None else ""
    return f"As opções não foram enviadas: {why}{code}. {detail}"[:500]
