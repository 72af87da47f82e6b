"""What the Atendimento pages show, as plain values: the API's conversation and message JSON
turned into pt-BR labels and texts, given `now` (pure: no I/O, no clock).

The pages' templates and their script (static/atendimento.js) render the same values, so a
page and its update read alike. Every text a customer, the agent or a person wrote stays as
written: the template escapes it, the script sets it with textContent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from api.console.delivery_view import DELIVERY, delivery_label
from api.console.labels import language
from api.console.moments import Clock
from api.console.render import segment
from conversation.mode import ConversationMode
from conversation.satisfaction import ID_PREFIX as SATISFACTION_ID_PREFIX
from delivery.outbound_choices import NOTE_START, marker_choice, offered_in
from hours.opening import opening_phrase
from hours.schedule import load_zone
from inbox.kind_labels import KIND_LABELS
from inbox.profile_names import contact_label

CAUSES = {
    "customer": "pedido do cliente",
    "tool": "o agente chamou",
    "phone": "celular da empresa",
    "console": "console",
}
AUTHORS = {
    "customer": "Cliente",
    "agent": "Agente",
    "person": "Atendente",
    "phone": "Celular da empresa",
}
MODES = {
    ConversationMode.AGENT: "Com o agente",
    ConversationMode.WAITING: "Esperando uma pessoa",
    ConversationMode.HUMAN: "Com uma pessoa",
}
PHONE_HOLDER = "phone"
VERSION_ID_CHARS = 8  # enough to tell two versions of one skill apart on a page


def waited(since: str | None, now: datetime) -> str:
    """How long ago `since` (ISO) was, as "há 12 min"."""
    if since is None:
        return "—"
    minutes = max(0, int((now - datetime.fromisoformat(since)).total_seconds() // 60))
    if minutes < 1:
        return "há menos de 1 min"
    if minutes < 60:
        return f"há {minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours < 24:
        return f"há {hours} h" + (f" {rest} min" if rest else "")
    days = hours // 24
    return f"há {days} dia" + ("s" if days > 1 else "")


def holder(held_by: str | None, me: str, person: dict[str, Any] | None = None) -> str:
    """Who holds it, by name: a person's name, the company phone, or a key's prefix."""
    if held_by is None:
        return "—"
    if held_by == PHONE_HOLDER:
        return "celular da empresa"
    name = person["name"] if person else held_by
    return f"{name} (você)" if held_by == me else name


def author_label(
    author: str, key_prefix: str | None = None, person: dict[str, Any] | None = None
) -> str:
    if author == "person" and person:
        return str(person["name"])
    label = AUTHORS.get(author, author)
    return f"{label} ({key_prefix})" if author == "person" and key_prefix else label


def why(conversation: dict[str, Any]) -> str:
    """Why it left the agent: the cause, and the agent's own reason when it called."""
    cause = conversation.get("mode_cause")
    label = CAUSES.get(cause or "", "")
    reason = conversation.get("mode_reason")
    if cause == "tool" and reason:
        return f"{label}: {reason}"
    return label or (reason or "—")


def _last(item: dict[str, Any], clock: Clock) -> dict[str, str] | None:
    last = item.get("last_message")
    if last is None:
        return None
    return {
        "author": author_label(last["author"] or "agent"),
        "text": readable(last["body"] or ""),
        "at": clock.moment(last["at"]),
    }


def queue_item(item: dict[str, Any], clock: Clock, me: str) -> dict[str, Any]:
    """One conversation of the waiting queue or of those people hold."""
    return {
        "id": item["id"],
        "href": f"/console/conversas/{segment(item['id'])}",
        "contact": contact_label(item["contact_id"], item.get("contact_name")),
        "channel": item["channel"],
        "mode": item["mode"],
        "waited": waited(item.get("mode_since"), clock.now),
        "why": why(item),
        "holder": holder(item.get("held_by"), me, item.get("held_by_person")),
        "last": _last(item, clock),
        "unanswered": item["unanswered"],
    }


def media_item(message: dict[str, Any], conversation_id: str | None) -> dict[str, str] | None:
    """A customer's stored media as the thread shows it: a player, a thumbnail or a link,
    served by the console with the session (api.console.media)."""
    media = message.get("media")
    if not isinstance(media, dict) or not media.get("stored") or conversation_id is None:
        return None
    kind = str(media.get("type") or "")
    shown = (
        "audio" if kind.startswith("audio/") else "image" if kind.startswith("image/") else "file"
    )
    url = f"/console/conversas/{segment(conversation_id)}/midia/{segment(message['id'])}"
    return {"kind": shown, "url": url}


def kind_label(kind: str, text: str) -> str | None:
    """A non-text message's kind in pt-BR, unless its text already opens with it (a
    description such as `[imagem] legenda`): a transcribed voice note reads `[áudio] ...`."""
    if kind in ("text", "interactive", "button"):  # typed, or a tapped choice: no label
        return None
    label = KIND_LABELS.get(kind, kind)
    return None if text.startswith(f"[{label}]") else label


FILE_KINDS = {"document": "documento", "image": "imagem", "audio": "áudio"}


def readable(body: str) -> str:
    """A message as a person reads it: a tap as "Escolheu: Sexta 14h", the options a reply
    offered as "Opções: Quinta 10h · Sexta 14h" (no ids: those are for the model)."""
    offered = offered_in(body)
    if offered is not None:
        return f"{offered.text}\n\nOpções: " + " · ".join(c.title for c in offered.choices)
    if NOTE_START in body:  # a preview cut inside the options: the text alone
        return body[: body.index(NOTE_START)]
    chosen = marker_choice(body)
    return body if chosen is None else f"Escolheu: {chosen.title}"


def _satisfaction_tap(body: str) -> bool:
    """A tap on the satisfaction question: kept as context, never answered, not waiting."""
    chosen = marker_choice(body)
    return chosen is not None and chosen.id.startswith(SATISFACTION_ID_PREFIX)


def sent_files(message: dict[str, Any]) -> list[str]:
    """The skill files an agent reply sent after its text, each with its own delivery
    ("tabela.pdf (documento) · enviada")."""
    shown = []
    for f in message.get("files") or []:
        kind = FILE_KINDS.get(f.get("kind") or "", f.get("kind") or "arquivo")
        status = DELIVERY.get(f.get("status") or "", f.get("status") or "")
        shown.append(f"{f.get('filename') or 'arquivo'} ({kind}) · {status}")
    return shown


def message_item(
    message: dict[str, Any], conversation_id: str | None = None, clock: Clock | None = None
) -> dict[str, Any]:
    """One message of the thread, its author told apart (customer, agent, person, phone);
    its time said from `clock` (the page's; São Paulo's now without one)."""
    clock = clock or Clock()
    author = message.get("author") or ("customer" if message["direction"] == "inbound" else "agent")
    delivery = message.get("delivery")
    skills = message.get("skills") or []
    return {
        "id": message["id"],
        "author": author,
        "label": author_label(
            author, message.get("author_key_prefix"), message.get("author_person")
        ),
        "text": readable(message["body"] or ""),
        "kind": kind_label(message["kind"], message["body"] or ""),
        "at": clock.moment(message.get("received_at") or message["created_at"]),
        "delivery": delivery_label(delivery),
        "unanswered": author == "customer"
        and not message.get("answered_by")
        and not _satisfaction_tap(message["body"] or ""),
        # A person's text can become a suggestion's draft ("Ensinar o agente").
        "teach": author in ("person", "phone") and message["kind"] == "text",
        "skills": [f"{s['name']} · {str(s['version_id'])[:VERSION_ID_CHARS]}" for s in skills],
        "media": media_item(message, conversation_id),
        "files": sent_files(message),
        "quote": quote_line(message.get("reply_to")),
        "reactions": reaction_line(message.get("reactions") or []),
    }


QUOTE_SHOWN_CHARS = 200


def quote_line(reply_to: dict[str, Any] | None) -> str | None:
    """What a quoting message answers, shown above it (None: it quotes nothing)."""
    if reply_to is None:
        return None
    text = " ".join((reply_to.get("text") or "").split())
    if not text:
        return "uma mensagem anterior"
    return text if len(text) <= QUOTE_SHOWN_CHARS else text[: QUOTE_SHOWN_CHARS - 1] + "…"


def reaction_line(reactions: list[dict[str, Any]]) -> str | None:
    """`👍 👎` as the customer reacted (None: no reaction)."""
    shown = " ".join(r["emoji"] for r in reactions if r.get("emoji"))
    return shown or None


def offers(
    conversation: dict[str, Any], me: str, *, admin: bool, can: dict[str, bool]
) -> dict[str, bool]:
    """Which of the page's forms apply now: the API's gate decides the role (`can`); this
    only hides what the conversation's state would refuse. Someone else's conversation is
    taken or given back by an admin only; an editor reads why instead (`phone_note` when the
    company phone holds it, `other_note` for a person)."""
    mine = conversation["mode"] == ConversationMode.HUMAN and conversation["held_by"] == me
    other = conversation["mode"] == ConversationMode.HUMAN and conversation["held_by"] not in (
        None,
        me,
    )
    told = other and not admin and can["takeover_route"]
    phone = conversation["held_by"] == PHONE_HOLDER
    return {
        "takeover": can["takeover_route"] and not mine and not other,
        "force": can["takeover_route"] and other and admin,
        "release": can["release_route"]
        and conversation["mode"] != ConversationMode.AGENT
        and (admin or not other),
        "reply": can["reply_route"] and not other,
        "phone_note": told and phone,
        "other_note": told and not phone,
    }


def reopens(hours: dict[str, Any], now: datetime) -> str:
    """When a closed org opens again, said from `now` ("amanhã às 09:00"); "" while open
    (`hours`: GET /v1/settings/hours)."""
    if hours["open_now"]:
        return ""
    opening = hours["next_opening"]
    at = None if opening is None else datetime.fromisoformat(opening)
    return opening_phrase(at, now, load_zone(hours["timezone"]))


FOLLOWUP_STATUS = {
    "scheduled": "agendada",
    "sent": "enviada",
    "skipped": "não enviada",
    "cancelled": "cancelada",
}
FOLLOWUP_REASONS = {
    "customer_wrote": "o cliente escreveu antes",
    "opted_out": "o cliente pediu PARAR",
    "person_holds": "uma pessoa estava com a conversa",
    "template_unavailable": "o template não está mais aprovado",
}


def followup_item(followup: dict[str, Any], clock: Clock, *, can_cancel: bool) -> dict[str, Any]:
    """One follow-up the agent scheduled: when, which template, what it says, its fate."""
    status, reason = followup["status"], followup.get("reason")
    label = FOLLOWUP_STATUS.get(status, status)
    if status == "skipped" and reason:
        label += f" ({FOLLOWUP_REASONS.get(reason, reason)})"
    elif status == "cancelled" and reason:
        label += f" por {reason}"
    return {
        "id": followup["id"],
        "at": clock.moment(followup["at"]),
        "template": followup["template"],
        "text": followup["body"],
        "status": status,
        "label": label,
        "cancel": can_cancel and status == "scheduled",
    }


PREVIEW_CHARS = 80


def template_option(template: dict[str, Any]) -> dict[str, Any]:
    """One approved template offered in the send form (value: name|language)."""
    body = template["body"]
    preview = body if len(body) <= PREVIEW_CHARS else body[: PREVIEW_CHARS - 1] + "…"
    count = len(template["placeholders"])
    return {
        "value": f"{template['name']}|{template['language']}",
        "label": f"{template['name']} ({language(template['language'])}) — {preview}",
        "params": count,
    }


def conversation_state(
    conversation: dict[str, Any],
    clock: Clock,
    me: str,
    *,
    admin: bool,
    can: dict[str, bool],
    hours: dict[str, Any],
) -> dict[str, Any]:
    """The conversation's head: its mode in words, who holds it, since when and why, and
    whether the business is closed now ("fora do horário") and until when."""
    mode = conversation["mode"]
    return {
        "after_hours": not hours["open_now"],
        "reopens": reopens(hours, clock.now),
        "id": conversation["id"],
        "contact": contact_label(conversation["contact_id"], conversation.get("contact_name")),
        "mode": mode,
        "mode_label": MODES.get(mode, mode),
        "holder": holder(conversation.get("held_by"), me, conversation.get("held_by_person")),
        "since": waited(conversation.get("mode_since"), clock.now),
        "why": why(conversation) if mode != "agent" else "",
        "unanswered": conversation["unanswered"],
        "offers": offers(conversation, me, admin=admin, can=can),
        "opted_out": bool(conversation.get("opted_out")),
        "opted_out_at": clock.moment(conversation.get("opted_out_at")),
    }
