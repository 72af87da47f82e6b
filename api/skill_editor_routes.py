"""Routes of the skill editor: read an installed skill, its versions, one version (with the
diff against another), a file's bytes; publish a new version from fields, add/replace/remove
one file, roll back. The decisions are skills.editing's; this module reads the request and
translates the editor's refusals into the API's answers (409 `skill_base_moved` with
`current_version_id`, 422 with the package rules' code and the form `field` to fix)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json, read_upload
from api.errors import ApiError, conflict, invalid, not_found
from api.guard import json_reply
from api.media_routes import FILE_HEADERS, attachment
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.routing import Principal, Reply, deps_of, org_db
from api.skill_detail import show_skill
from api.skill_routes import key_author
from inbox.file_names import safe_file_name
from skills.editing import (
    Editor,
    EditResult,
    SkillEdit,
    delete_skill_file,
    publish_edit,
    put_skill_file,
    rollback_skill,
)
from skills.editing_errors import EditRefused, SkillBaseMoved
from skills.editing_queries import fetch_pointed_record, list_skill_versions
from skills.publisher import content_type_of
from skills.skill_view import (
    diff_records,
    locate_file,
    read_file,
    show_version,
    version_json,
)


@contextlib.contextmanager
def editor_errors() -> Iterator[None]:
    """The editor's refusals with the fields a client acts on."""
    try:
        yield
    except SkillBaseMoved as exc:
        current = None if exc.current_version_id is None else str(exc.current_version_id)
        raise conflict(exc.code, exc.message, {"current_version_id": current}) from exc
    except EditRefused as exc:
        raise ApiError(422, exc.code, exc.message, {"field": str(exc.field)}) from exc


async def editor_of(request: web.Request, principal: Principal) -> Editor:
    """The key that writes: its prefix audits the change, its prefix and name sign the
    version (until people have accounts)."""
    return Editor(principal.prefix, await key_author(request, principal))


def _uuid(text: str | None, what: str) -> uuid.UUID | None:
    if text is None or text == "":
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        raise invalid("invalid_input", f"`{what}` deve ser o id de uma versão (uuid).") from None


def _base_from_query(request: web.Request) -> uuid.UUID:
    base = _uuid(request.query.get("base_version_id"), "base_version_id")
    if base is None:
        raise invalid(
            "base_required",
            "Diga de qual versão a alteração parte: `?base_version_id=` com o version_id "
            "atual da skill (GET /v1/skills/{name}).",
        )
    return base


def _version_in_path(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["version_id"])
    except ValueError:
        raise not_found(
            "skill_version_not_found", "Essa versão não é desta skill nesta organização."
        ) from None


async def show_skill_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        view = await show_skill(conn, principal.organization_id, request.match_info["name"])
    return view.to_json()


async def list_versions_route(request: web.Request, principal: Principal) -> Reply:
    name = request.match_info["name"]
    limit = parse_limit(request.query)
    before = read_cursor("skill_versions", request.query, time_id_keyset)
    async with org_db(request, principal) as conn:
        current = await fetch_pointed_record(conn, principal.organization_id, name)
        rows = await list_skill_versions(
            conn, principal.organization_id, name, before=before, limit=limit + 1
        )
    if current is None and not rows and before is None:
        raise not_found(
            "skill_not_installed", f"A skill {name!r} não tem versões nesta organização."
        )
    page = page_of(
        rows,
        limit,
        "skill_versions",
        lambda r: [r.created_at.isoformat(), str(r.version.version_id)],
    )
    current_id = None if current is None else current.version.version_id
    items = []
    for record in page.items:
        item = version_json(record, current=record.version.version_id == current_id)
        del item["body"]  # a list of versions is read for who and when; a version has its body
        items.append(item)
    return {"items": items, "next": page.next}


async def show_version_route(request: web.Request, principal: Principal) -> Reply:
    """One version; `diff` from `?against=` (default: the current version) to it."""
    name = request.match_info["name"]
    version_id = _version_in_path(request)
    against = _uuid(request.query.get("against"), "against")
    async with org_db(request, principal) as conn:
        record = await show_version(conn, principal.organization_id, name, version_id)
        current = await fetch_pointed_record(conn, principal.organization_id, name)
        current_id = None if current is None else current.version.version_id
        other = current
        if against is not None:
            other = await show_version(conn, principal.organization_id, name, against)
    answer = version_json(record, current=version_id == current_id)
    answer["diff"] = None if other is None else diff_records(other, record).to_json()
    answer["against"] = None if other is None else str(other.version.version_id)
    return answer


async def download_file_route(request: web.Request, principal: Principal) -> web.Response:
    """The bytes as an attachment (never shown as a page of ours: nosniff, sandbox CSP);
    Content-Type as stored (text, known media, else octet-stream)."""
    name = request.match_info["name"]
    path = request.match_info["path"]
    version_id = _uuid(request.query.get("version_id"), "version_id")
    async with org_db(request, principal) as conn:
        key, entry = await locate_file(conn, principal.organization_id, name, path, version_id)
    found = await read_file(deps_of(request).store, key, entry)
    file_name = safe_file_name(path.rsplit("/", 1)[-1]) or "arquivo"
    return web.Response(
        body=found.data,
        content_type=content_type_of(path, entry.kind).split(";")[0],
        charset="utf-8" if content_type_of(path, entry.kind).endswith("utf-8") else None,
        headers={**FILE_HEADERS, "Content-Disposition": attachment(file_name)},
    )


class SkillEditBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_version_id: uuid.UUID | None
    description: str
    body: str
    keywords: str = ""
    probe_keywords: str = ""


async def put_skill(request: web.Request, principal: Principal) -> tuple[int, Reply]:
    """(status, answer): 201 for a new skill (or a catalog skill installed by this edit), 200
    for a new version."""
    payload = await read_json(request, SkillEditBody)
    editor = await editor_of(request, principal)
    deps = deps_of(request)
    edit = SkillEdit(payload.description, payload.body, payload.keywords, payload.probe_keywords)
    with editor_errors():
        async with org_db(request, principal) as conn:
            result = await publish_edit(
                conn,
                deps.store,
                organization_id=principal.organization_id,
                name=request.match_info["name"],
                base_version_id=payload.base_version_id,
                edit=edit,
                editor=editor,
                limits=deps.package_limits,
            )
    return (201 if result.created else 200), result.to_json()


async def put_skill_route(request: web.Request, principal: Principal) -> web.Response:
    status, answer = await put_skill(request, principal)
    return json_reply(answer, status)


async def put_file_route(request: web.Request, principal: Principal) -> Reply:
    base = _base_from_query(request)
    deps = deps_of(request)
    data = await read_upload(request, deps.package_limits.max_upload_bytes)
    editor = await editor_of(request, principal)
    with editor_errors():
        async with org_db(request, principal) as conn:
            result = await put_skill_file(
                conn,
                deps.store,
                organization_id=principal.organization_id,
                name=request.match_info["name"],
                base_version_id=base,
                path=request.match_info["path"],
                data=data,
                editor=editor,
                limits=deps.package_limits,
            )
    return _written(result)


async def delete_file_route(request: web.Request, principal: Principal) -> Reply:
    base = _base_from_query(request)
    deps = deps_of(request)
    editor = await editor_of(request, principal)
    with editor_errors():
        async with org_db(request, principal) as conn:
            result = await delete_skill_file(
                conn,
                deps.store,
                organization_id=principal.organization_id,
                name=request.match_info["name"],
                base_version_id=base,
                path=request.match_info["path"],
                editor=editor,
                limits=deps.package_limits,
            )
    return _written(result)


class RollbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version_id: uuid.UUID
    base_version_id: uuid.UUID


async def rollback_route(request: web.Request, principal: Principal) -> Reply:
    payload = await read_json(request, RollbackBody)
    editor = await editor_of(request, principal)
    with editor_errors():
        async with org_db(request, principal) as conn:
            result = await rollback_skill(
                conn,
                organization_id=principal.organization_id,
                name=request.match_info["name"],
                version_id=payload.version_id,
                base_version_id=payload.base_version_id,
                editor=editor,
            )
    return _written(result)


def _written(result: EditResult) -> dict[str, Any]:
    return result.to_json()
