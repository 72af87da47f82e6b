"""A rehearsal end to end: under the org's lock, read its installed skills, the change and
its recent customer messages in one bound connection, then replay them off the event loop.

One rehearsal per org at a time, across processes: a session advisory lock taken without
waiting (`rehearsal_busy` when held). The connection is held while the replay runs (CPU
only, a few seconds at most: no third party is called meanwhile), so the lock lives exactly
as long as the rehearsal.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.tenancy import org_connection
from rehearsal.bursts import CustomerMessage, group_bursts
from rehearsal.changes import ChangeOf, changed_set
from rehearsal.errors import RehearsalBusy, check_days
from rehearsal.queries import list_customer_messages, try_lock_rehearsal, unlock_rehearsal
from rehearsal.replay import Outcome, rehearse
from skills.models import LoadedSkill
from skills.queries import list_installed_skills
from turn.matcher import MAX_MATCHED_TEXT_BYTES

DEFAULT_DAYS = 30
# The newest customer messages read, whatever the period: bounds the read and the replay.
MAX_MESSAGES = 50_000
# A message's characters read: the matcher reads at most 8 KiB of UTF-8 of a burst, which is
# at most this many characters.
MAX_MESSAGE_CHARS = MAX_MATCHED_TEXT_BYTES


@dataclass(frozen=True)
class Rehearsal:
    days: int
    outcome: Outcome

    def to_json(self) -> dict[str, Any]:
        body = self.outcome.to_json()
        return {"messages": body.pop("messages"), "days": self.days, **body}


async def run_rehearsal(
    pool: Any,
    organization_id: uuid.UUID,
    change_of: ChangeOf,
    *,
    days: int,
    now: datetime,
    max_matched: int | None,
    max_messages: int = MAX_MESSAGES,
) -> Rehearsal:
    """Rehearse the change `change_of` reads (module docstring); RehearsalBusy when the org
    has one running, the change's own refusals (not found, package rules) as they come."""
    days = check_days(days)
    async with org_connection(pool, organization_id) as conn:
        if not await try_lock_rehearsal(conn, organization_id):
            raise RehearsalBusy()
        try:
            installed = tuple(await list_installed_skills(conn, organization_id))
            change = await change_of(conn, installed)
            messages = await list_customer_messages(
                conn, organization_id, now - timedelta(days=days), max_messages, MAX_MESSAGE_CHARS
            )
            outcome = await asyncio.to_thread(
                _replay, messages, installed, changed_set(installed, change), max_matched
            )
        finally:
            await unlock_rehearsal(conn, organization_id)
    return Rehearsal(days, outcome)


def _replay(
    messages: Sequence[CustomerMessage],
    before: tuple[LoadedSkill, ...],
    after: tuple[LoadedSkill, ...],
    max_matched: int | None,
) -> Outcome:
    return rehearse(group_bursts(messages), before, after, max_matched=max_matched)
