"""Non-text WhatsApp messages -> a short description the model and the history can read.

The agents answer in Portuguese, so the descriptions are too: `[imagem] legenda`,
`[localização] -23.56, -46.65 Loja Paulista`, `[contato] Ana +55 11 99999-0000`.
Only what the customer typed or WhatsApp shows them is kept: no media URLs or ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from inbox.kind_labels import KIND_LABELS
from inbox.message import MessageKind

# Kinds whose text is the customer's own words (a typed text, a tapped option's title).
TYPED_KINDS: Final = frozenset({"text", "interactive", "button"})
# Answering these would be noise (a 👍 on our last reply), whatever the channel says.
NEVER_ANSWERED: Final = frozenset({"reaction"})

# Room for the description: the queue contract caps `text` at 65,536 characters.
_MAX_PART: Final = 4_096


def expects_reply(kind: MessageKind, reply_to_non_text: bool) -> bool:
    """Typed messages are always answered; the rest only where the channel says so (the
    readable form of what skillet_receive_inbound applies with the channel's setting)."""
    always, answerable = reply_rule(kind)
    return always or (reply_to_non_text and answerable)


def reply_rule(kind: MessageKind) -> tuple[bool, bool]:
    """(always answered, answered where the channel answers non-text messages): the
    database applies it with the channel's setting while storing the message."""
    return kind in TYPED_KINDS, kind not in NEVER_ANSWERED


def describe(kind: MessageKind, *parts: object) -> str:
    """`[label] part part ...`, skipping empty parts; each part is clipped."""
    words = [_clip(p) for p in parts if isinstance(p, str | int | float) and str(p).strip()]
    return " ".join([f"[{KIND_LABELS.get(kind, kind)}]", *words])


def describe_location(
    latitude: object, longitude: object, name: object = None, address: object = None
) -> str:
    coordinates = None
    if isinstance(latitude, int | float) and isinstance(longitude, int | float):
        coordinates = f"{latitude}, {longitude}"
    return describe("location", coordinates, name, address)


def vcard_names(vcards: Iterable[object]) -> list[str]:
    """The FN (formatted name) line of each vCard text; a card without one (or whose FN line
    has no `:`, which a vCard must have) gives no name."""
    names: list[str] = []
    for card in vcards:
        if not isinstance(card, str):
            continue
        for line in card.splitlines():
            if line.upper().startswith(("FN:", "FN;")):
                _, colon, name = line.partition(":")
                if colon:
                    names.append(name.strip())
                    break
    return names


def _clip(part: object) -> str:
    text = " ".join(str(part).split())
    return text if len(text) <= _MAX_PART else text[: _MAX_PART - 1] + "…"
