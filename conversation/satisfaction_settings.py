"""Changing an org's satisfaction settings (the API's PATCH /v1/settings and `skillet orgs
set`): what is given, audited with what it replaced."""

from __future__ import annotations

import uuid

import asyncpg

from conversation.satisfaction_queries import (
    SatisfactionSettings,
    update_satisfaction_settings,
)
from core.audit import AuditEntry, insert_audit


async def change_satisfaction(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    *,
    enabled: bool | None,
    buttons: tuple[str, str, str] | None,
) -> SatisfactionSettings:
    """Set what is given (buttons already checked: satisfaction.checked_buttons); the
    settings it replaced."""
    previous = await update_satisfaction_settings(
        conn, organization_id, enabled=enabled, buttons=buttons
    )
    assert previous is not None  # the caller's org exists (a key's, or checked by the CLI)
    detail: dict[str, object] = {"from": previous.as_json()}
    if enabled is not None:
        detail["satisfaction"] = "on" if enabled else "off"
    if buttons is not None:
        detail["satisfaction_buttons"] = list(buttons)
    await insert_audit(
        conn, AuditEntry(organization_id, actor, "settings.satisfaction", detail=detail)
    )
    return previous
