"""When approving a change must be confirmed: its rehearsal loses messages.

`loss_reasons` rehearses the change and names the reason (`loses_messages`) when some burst
that matched a skill would match none; the approve routes add other reasons of their own
beside it (the list is the contract). `LOSS_MESSAGE` says it to the person, in pt-BR.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from rehearsal.changes import ChangeOf
from rehearsal.run import run_rehearsal

LOSES_MESSAGES = "loses_messages"


def loss_message(lost: int) -> str:
    noun = "mensagem" if lost == 1 else "mensagens"
    return (
        f"Esta mudança deixaria de reconhecer {lost} {noun} de clientes dos últimos dias. "
        "Confira o ensaio e confirme para publicar mesmo assim."
    )


async def loss_reasons(
    pool: Any,
    organization_id: uuid.UUID,
    change_of: ChangeOf,
    *,
    days: int,
    now: datetime,
    max_matched: int | None,
) -> tuple[list[str], int]:
    """([`loses_messages`] or [], how many bursts the change loses)."""
    rehearsal = await run_rehearsal(
        pool, organization_id, change_of, days=days, now=now, max_matched=max_matched
    )
    lost = rehearsal.outcome.lost
    return ([LOSES_MESSAGES] if lost else []), lost
