"""Bounds on what a conversation sends to the model: per message, per burst, for history.

Pure: texts in, texts out. What a customer writes is hostile input: however long the
messages, the request the model gets (and its cost) stays under named caps.
- A message longer than `max_message_chars` keeps its start and says how much was cut.
- A burst over `max_burst_chars` keeps its newest messages whole (what the customer asked
  last matters most); older ones are replaced by a one-line note.
- History keeps the newest exchange within `max_history_chars`; older turns are dropped.
- A message that quotes another (the customer swiped to reply) is read with the quote first:
  `[em resposta a: «first 200 characters»] text`, the quoted text on one line with « » [ ]
  (and the backslash) escaped by a backslash, so it can neither close the quote nor open a
  marker of its own.
- The customer's profile name, when known, opens the burst's first message on a line of its
  own, at most inbox.profile_names.MODEL_NAME_CHARS characters (`with_contact_name`).
Counts are in characters (code points), the unit the caps are documented in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inbox.profile_names import name_for_model

# The customer's WhatsApp profile name, as the model reads it: on a line of its own at the
# start of the burst's first message, in the customer's own turn (it is their data, like what
# they write; never the system prompt's), cut and stripped of brackets and quotes
# (inbox.profile_names.name_for_model) so it cannot close the line it is on.
CONTACT_NAME_LINE = "[nome do cliente no perfil do WhatsApp: {name}]"

QUOTE_CHARS = 200  # of the quoted message, what the model reads
QUOTE_UNKNOWN = "[em resposta a: uma mensagem anterior]"
_QUOTE_ESCAPES = str.maketrans({c: "\\" + c for c in "\\«»[]"})
CUT_NOTICE = "\n[… mensagem cortada: {cut} caracteres omitidos]"
OMITTED_NOTICE = "[mensagem anterior omitida: {chars} caracteres]"


@dataclass(frozen=True)
class InputCaps:
    max_message_chars: int = 4_000
    max_burst_chars: int = 12_000
    max_history_chars: int = 16_000


def cap_message(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + CUT_NOTICE.format(cut=len(text) - max_chars)


def with_quote(quote: str | None, text: str) -> str:
    """`text` as the model reads it: led by what it quotes (None: it quotes nothing; "": a
    message whose text is not known)."""
    if quote is None:
        return text
    shown = " ".join(quote[:QUOTE_CHARS].split())
    if not shown:
        return f"{QUOTE_UNKNOWN} {text}"
    return f"[em resposta a: «{shown.translate(_QUOTE_ESCAPES)}»] {text}"


def burst_text(bodies: Sequence[str]) -> str:
    """The one text a burst's messages are matched as (arrival order, one per line)."""
    return "\n".join(bodies)


def cap_burst(texts: Sequence[str], caps: InputCaps) -> list[str]:
    """Each message capped, then the newest kept whole while they fit; never empty for a
    non-empty burst (the newest message always stays)."""
    capped = [cap_message(t, caps.max_message_chars) for t in texts]
    kept: list[str] = []
    used = 0
    for index in range(len(capped) - 1, -1, -1):
        text = capped[index]
        if kept and used + len(text) > caps.max_burst_chars:
            kept.extend(OMITTED_NOTICE.format(chars=len(texts[i])) for i in range(index, -1, -1))
            break
        kept.append(text)
        used += len(text)
    return kept[::-1]


def cap_history(turns: Sequence[tuple[str, str]], caps: InputCaps) -> list[tuple[str, str]]:
    """`turns` oldest first, as (direction, body); the newest that fit, each message capped."""
    kept: list[tuple[str, str]] = []
    used = 0
    for direction, body in reversed(turns):
        text = cap_message(body, caps.max_message_chars)
        if used + len(text) > caps.max_history_chars:
            break
        kept.append((direction, text))
        used += len(text)
    return kept[::-1]


def with_contact_name(texts: Sequence[str], contact_name: str | None) -> list[str]:
    """The burst's texts (already capped) with the customer's profile name before the first
    (CONTACT_NAME_LINE); as they are when no name is known."""
    name = name_for_model(contact_name)
    if name is None or not texts:
        return list(texts)
    return [f"{CONTACT_NAME_LINE.format(name=name)}\n{texts[0]}", *texts[1:]]
