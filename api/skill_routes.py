"""Routes of the org's skills: catalog, installed, upload, install, uninstall, pin, unpin,
restore, activations. Each write is the CLI's function, with the key's prefix as actor."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import asyncpg
from aiohttp import web

from api.activation_summary import SERIES_DAYS, summarize_activations
from api.bodies import read_upload
from api.errors import ApiError, not_found
from api.pagination import name_keyset, page_of, page_sorted, parse_limit, read_cursor
from api.routing import Principal, Reply, deps_of, org_db
from api.skill_queries import (
    ActivationTotals,
    InstalledRow,
    list_activation_days,
    list_activation_totals,
    list_installed_page,
    list_negative_reactions,
)
from consolidation.file_read_queries import SkillFile, list_skill_files
from consolidation.link_queries import list_neighbours
from core.audit import AuditEntry, insert_audit
from skills.catalog import (
    import_skill_package,
    install_catalog_skill,
    list_skills,
    skill_source,
    uninstall_skill,
)
from skills.catalog_models import ImportStatus
from skills.catalog_queries import fetch_org_pointed_version
from skills.editing_queries import fetch_api_key_name
from skills.models import VersionAuthor


async def list_catalog(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        listing = await list_skills(conn, organization_id=principal.organization_id)
    page = page_sorted(
        listing.catalog, request.query, "catalog", lambda s: [s.name], lambda k: [name_keyset(k)]
    )
    return {"items": [s.to_json() for s in page.items], "next": page.next}


_NONE = ActivationTotals(0, 0, 0, 0)


def _installed_json(
    row: InstalledRow,
    totals: ActivationTotals,
    neighbours: list[dict[str, Any]],
    files: list[SkillFile],
    *,
    negative_reactions: int = 0,
) -> dict[str, Any]:
    return {
        "name": row.name,
        "description": row.description,
        "version_id": str(row.version_id),
        "source": str(skill_source(row.created_by, row.forked_from_version_id)),
        "state": row.state,
        "pinned": row.pinned,
        "absorbed_into": row.absorbed_into,
        "updated_at": row.updated_at.isoformat(),
        f"last_{SERIES_DAYS}_days": {
            "hard": totals.hard,
            "intent": totals.intent,
            "probe": totals.probe,
            "capped": totals.capped,
            # Customers' negative reactions to the replies that used it (never the curator's).
            "negative_reactions": negative_reactions,
        },
        # Close skills (consolidation's links by the backend in use), best first.
        "neighbours": neighbours,
        # Its files with read_skill_reference's count and last read (moved ones keep theirs).
        "files": [f.to_json() for f in files],
    }


async def list_installed(request: web.Request, principal: Principal) -> Reply:
    """Each with its activations of the last 30 UTC days: hard (injected by its keywords),
    intent (injected by its catalog intent model alone), probe (demand no skill served) and
    capped (matched but cut by the injection cap)."""
    limit = parse_limit(request.query)
    after = read_cursor("skills", request.query, name_keyset)
    today = deps_of(request).clock().astimezone(UTC).date()
    async with org_db(request, principal) as conn:
        rows = await list_installed_page(
            conn, principal.organization_id, after=after, limit=limit + 1
        )
        page = page_of(rows, limit, "skills", lambda r: [r.name])
        names = [r.name for r in page.items]
        totals = await list_activation_totals(
            conn, principal.organization_id, names, today, SERIES_DAYS
        )
        negative = await list_negative_reactions(
            conn, principal.organization_id, names, today, SERIES_DAYS
        )
        backend = deps_of(request).similarity.name
        neighbours = await list_neighbours(conn, principal.organization_id, names, backend)
        files = await list_skill_files(conn, principal.organization_id, names)
    items = [
        _installed_json(
            r,
            totals.get(r.name, _NONE),
            neighbours.get(r.name, []),
            files.get(r.name, []),
            negative_reactions=negative.get(r.name, 0),
        )
        for r in page.items
    ]
    return {"items": items, "next": page.next}


async def key_author(request: web.Request, principal: Principal) -> VersionAuthor:
    """The key that writes a version: its prefix and name sign it (until people have
    accounts)."""
    async with org_db(request, principal) as conn:
        key_name = await fetch_api_key_name(conn, principal.organization_id, principal.key_id)
    return VersionAuthor(principal.prefix, key_name)


async def upload_skill(request: web.Request, principal: Principal) -> Reply:
    deps = deps_of(request)
    data = await read_upload(request, deps.package_limits.max_upload_bytes)
    author = await key_author(request, principal)
    async with org_db(request, principal) as conn:
        result = await import_skill_package(
            conn,
            deps.store,
            organization_id=principal.organization_id,
            data=data,
            actor=principal.prefix,
            limits=deps.package_limits,
            author=author,
        )
    return {**result.to_json(), "created": result.status is ImportStatus.IMPORTED}


async def install_skill(request: web.Request, principal: Principal) -> Reply:
    deps = deps_of(request)
    author = await key_author(request, principal)
    async with org_db(request, principal) as conn:
        result = await install_catalog_skill(
            conn,
            deps.store,
            organization_id=principal.organization_id,
            name=request.match_info["name"],
            actor=principal.prefix,
            author=author,
        )
    return {
        "name": result.name,
        "version_id": str(result.version_id),
        "forked_from_version_id": str(result.forked_from_version_id),
    }


async def uninstall(request: web.Request, principal: Principal) -> Reply:
    name = request.match_info["name"]
    async with org_db(request, principal) as conn:
        await uninstall_skill(
            conn, organization_id=principal.organization_id, name=name, actor=principal.prefix
        )
    return {"name": name, "uninstalled": True}


async def _set_pinned(request: web.Request, principal: Principal, pinned: bool) -> Reply:
    name = request.match_info["name"]
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        record = await deps_of(request).usage.set_pinned(conn, org, name, pinned)
        version = await fetch_org_pointed_version(conn, org, name)
        version_id = None if version is None else version.version_id
        await insert_audit(
            conn,
            AuditEntry(
                org,
                principal.prefix,
                "skill.pin" if pinned else "skill.unpin",
                skill_name=name,
                before_version_id=version_id,
                after_version_id=version_id,
            ),
        )
    return {"name": record.skill_name, "pinned": record.pinned, "state": record.state}


async def pin_skill(request: web.Request, principal: Principal) -> Reply:
    return await _set_pinned(request, principal, True)


async def unpin_skill(request: web.Request, principal: Principal) -> Reply:
    return await _set_pinned(request, principal, False)


async def restore_skill(request: web.Request, principal: Principal) -> Reply:
    name = request.match_info["name"]
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        restored = await deps_of(request).usage.restore(conn, org, name)
        version = await fetch_org_pointed_version(conn, org, name)
        version_id = None if version is None else version.version_id
        await insert_audit(
            conn,
            AuditEntry(
                org,
                principal.prefix,
                "skill.restore",
                skill_name=name,
                before_version_id=version_id,
                after_version_id=version_id,
                detail={"from": restored.previous_state, "to": restored.record.state},
            ),
        )
    return {
        "name": name,
        "state": restored.record.state,
        "previous_state": restored.previous_state,
    }


async def skill_activations(request: web.Request, principal: Principal) -> Reply:
    name = request.match_info["name"]
    today = deps_of(request).clock().astimezone(UTC).date()
    async with org_db(request, principal) as conn:
        if await fetch_org_pointed_version(conn, principal.organization_id, name) is None:
            raise not_found(
                "skill_not_installed", f"A skill {name!r} não está instalada nesta organização."
            )
        try:
            rows = await list_activation_days(
                conn, principal.organization_id, name, today, SERIES_DAYS
            )
        except asyncpg.UndefinedTableError:
            # The daily roll-up ships in its own migration; until it lands, say so.
            raise ApiError(
                503,
                "activations_unavailable",
                "As contagens diárias de ativação ainda não existem neste banco "
                "(falta a tabela skill_activation_daily); rode `skillet migrate`.",
            ) from None
        negative = await list_negative_reactions(
            conn, principal.organization_id, [name], today, SERIES_DAYS
        )
    summary = summarize_activations(rows, today)
    summary[f"last_{SERIES_DAYS}_days"]["negative_reactions"] = negative.get(name, 0)
    return {"name": name, **summary}
