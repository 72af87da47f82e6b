"""The console's skill editor: a page per installed skill (its body rendered safely, its
keywords, files and versions, a diff between any two, "Voltar para esta versão"), the
"Nova skill" and "Editar" forms, a file added, replaced or removed by upload, and the JSON the
keyword preview polls.

Every read and write runs the admin API's own routes through its gate (api.guard), as the
other pages do: the role, the audit rows and every refusal are the route's. A refused form is
shown again with what was typed and each refusal beside its field (the package rules name
it); `skill_base_moved` shows the version published meanwhile beside the typed one, and the
form then starts from that version, so publishing again is a decision, not an accident.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

from aiohttp import web
from aiohttp.web_request import FileField

from api.bodies import PRELOADED_BODY
from api.console import pages
from api.console.auth import Form, Visit, signed_in
from api.console.diff_lines import counts, diff_lines
from api.console.render import CONSOLE_PREFIX, see_other, segment
from api.console.skill_text import render_markdown
from api.errors import ApiError
from api.guard import run_answer, run_route
from api.routing import deps_of
from core.errors import SkilletError
from core.tenancy import org_connection
from skills.catalog_errors import SkillNotInstalled
from skills.edit_package import matcher_texts
from skills.editing_queries import fetch_pointed_record
from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import keyword_form_error, match_skills

P: Final = CONSOLE_PREFIX
FORM_FIELDS: Final = ("description", "keywords", "probe_keywords", "body")
FOLDERS: Final = ("references", "assets", "templates", "scripts")
# A few customer messages the keyword field is tried on as the person types (the matcher's
# own code), plus one the person writes.
SAMPLE_MESSAGES: Final = (
    "Oi, vocês aceitam pix?",
    "Qual o horário de funcionamento no sábado?",
    "Quero trocar um produto que comprei semana passada",
    "Quanto custa o frete para Campinas?",
    "Vocês parcelam no cartão?",
    "Meu pedido ainda não chegou",
    "Onde fica a loja?",
    "Tem desconto à vista?",
)
MAX_PREVIEW_CHARS: Final = 3_000  # a keyword list's cap (skills.package.limits)
MAX_TEST_CHARS: Final = 500
VIA_NAMES: Final = {
    "upload": "enviada (.zip)",
    "editor": "editor",
    "agent": "escrita pelo agente",
    "catalog": "catálogo",
    "consolidation": "consolidação",
    "suggestion": "sugestão",
}


def who(version: dict[str, Any]) -> str:
    """Who made a version, as a person reads it: a key (name and prefix), or the way."""
    author = version.get("author")
    if author:
        name = author.get("key_name")
        prefix = author["key_prefix"]
        return f"chave “{name}” ({prefix})" if name else f"chave {prefix}"
    return {
        "agent": "o agente",
        "catalog": "o catálogo",
        "consolidation": "a consolidação",
        "suggestion": "uma sugestão",
    }.get(version["created_via"], "linha de comando")


def _text(form: Form | None, name: str) -> str:
    value = None if form is None else form.get(name)
    return value if isinstance(value, str) else ""


def _diff_view(diff: dict[str, Any] | None) -> dict[str, Any] | None:
    if diff is None:
        return None
    lines = diff_lines(diff["skill_md"])  # bidi controls already written out
    added, removed = counts(lines)
    return {"lines": lines, "added": added, "removed": removed, "files": diff["files"]}


async def _compare(request: web.Request, visit: Visit, a: str, b: str) -> dict[str, Any] | None:
    """The diff from version `a` to `b` (the API's version read, `against` a)."""
    try:
        uuid.UUID(a), uuid.UUID(b)
    except ValueError:
        return None
    twin = request.clone(rel_url=request.rel_url.with_query({"against": a}))
    twin.match_info.update(request.match_info)
    twin.match_info["version_id"] = b
    reply = await run_route(pages.API["show_version_route"], twin, visit.principal)
    return _diff_view(reply["diff"])


async def skill_page(request: web.Request, visit: Visit) -> pages.PageData:
    skill = await pages.read(request, visit, "show_skill_route")
    versions = await pages.read(request, visit, "list_versions_route")
    for item in versions["items"]:
        item["who"] = who(item)
    before, after = request.query.get("de", ""), request.query.get("para", "")
    diff = await _compare(request, visit, before, after) if before and after else None
    return "skill.html", {
        "skill": skill,
        "who": who(skill),
        "via_names": VIA_NAMES,
        "body_html": render_markdown(skill["body"]),
        "versions": versions["items"],
        "next": versions["next"],
        "diff": diff,
        "de": before,
        "para": after,
        "folders": FOLDERS,
        "file_error": None,
    }


def _form_context(
    *, name: str, base: str | None, values: dict[str, str], new: bool, catalog: bool
) -> dict[str, Any]:
    return {
        "name": name,
        "base": base,
        "values": values,
        "new": new,
        "catalog": catalog,
        "field_errors": {},
        "moved": None,
        "samples": SAMPLE_MESSAGES,
        "next": None,
        "rehearsal": None,  # "Ensaiar": the typed version tried on customers' messages
    }


async def _catalog_values(request: web.Request, visit: Visit, name: str) -> dict[str, Any]:
    """A catalog skill the org has not installed: the form starts from the catalog's text."""
    async with org_connection(deps_of(request).pool, visit.principal.organization_id) as conn:
        record = await fetch_pointed_record(conn, None, name)
    if record is None:
        raise SkillNotInstalled(name)
    version = record.version
    keywords, probes = matcher_texts(version.matcher)
    return {
        "version_id": str(version.version_id),
        "description": version.description,
        "body": version.body,
        "keywords": keywords,
        "probe_keywords": probes,
    }


async def edit_form(request: web.Request, visit: Visit) -> pages.PageData:
    name = request.match_info["name"]
    catalog = False
    try:
        current = await pages.read(request, visit, "show_skill_route")
    except SkillNotInstalled:
        current, catalog = await _catalog_values(request, visit, name), True
    values = {f: str(current[f]) for f in FORM_FIELDS}
    context = _form_context(
        name=name, base=current["version_id"], values=values, new=False, catalog=catalog
    )
    return "skill_form.html", context


async def new_form(request: web.Request, visit: Visit) -> pages.PageData:
    values = dict.fromkeys(FORM_FIELDS, "")
    return "skill_form.html", _form_context(
        name="", base=None, values=values, new=True, catalog=False
    )


def _answer_json(answer: Any) -> dict[str, Any]:
    if isinstance(answer, web.Response) and isinstance(answer.body, bytes):
        parsed: dict[str, Any] = json.loads(answer.body)
        return parsed
    assert isinstance(answer, dict)
    return answer


async def publish(request: web.Request, visit: Visit) -> web.StreamResponse:
    """The form's POST: PUT /v1/skills/{name}; refused, the form again with what was typed."""
    form = visit.form
    values = {f: _text(form, f) for f in FORM_FIELDS}
    base = _text(form, "base_version_id") or None
    new = "name" not in request.match_info
    name = _text(form, "name").strip() if new else request.match_info["name"]
    if new:
        request.match_info["name"] = name  # the new-skill form names it in a field
    if _text(form, "acao") == "ensaiar":
        return await _rehearsed(request, visit, name, base, values, new)
    request[PRELOADED_BODY] = {"base_version_id": base, **values}
    try:
        answer = _answer_json(
            await run_answer(pages.API["put_skill_route"], request, visit.principal)
        )
    except SkilletError as exc:
        return await _form_again(request, visit, name, base, values, new, exc)
    return see_other(f"{P}/skills/{segment(answer['name'])}{pages.done_query('put_skill_route')}")


async def _rehearsed(
    request: web.Request,
    visit: Visit,
    name: str,
    base: str | None,
    values: dict[str, str],
    new: bool,
) -> web.Response:
    """ "Ensaiar": the form again, with everything typed, and what the typed version would have
    done to the org's recent customer messages (POST /v1/rehearsals); nothing is published."""
    context = _typed_context(visit, name, base, values, new)
    context["rehearsal"] = await pages.rehearsal_of(
        request, visit, {"skill": {"name": name, **values}}
    )
    return await _show_form(request, visit, context)


def _typed_context(
    visit: Visit, name: str, base: str | None, values: dict[str, str], new: bool
) -> dict[str, Any]:
    """The form's context with what the person typed (a catalog fork stays one)."""
    catalog = _text(visit.form, "catalog") == "1"
    return _form_context(name=name, base=base, values=values, new=new, catalog=catalog)


async def _show_form(
    request: web.Request,
    visit: Visit,
    context: dict[str, Any],
    error: SkilletError | None = None,
) -> web.Response:
    async def again(_: web.Request, __: Visit) -> pages.PageData:
        return "skill_form.html", context

    return await pages.show(request, visit, again, error=error)


async def _form_again(
    request: web.Request,
    visit: Visit,
    name: str,
    base: str | None,
    values: dict[str, str],
    new: bool,
    error: SkilletError,
) -> web.Response:
    context = _typed_context(visit, name, base, values, new)
    # The API's 422 names the form field its package rule is about (api.skill_editor_routes).
    field = error.extra.get("field") if isinstance(error, ApiError) else None
    if field is not None:
        context["field_errors"] = {str(field): error.message}
    elif error.code in ("skill_already_installed", "skill_name_reserved") and new:
        context["field_errors"] = {"name": error.message}
    if error.code == "skill_base_moved":
        moved = await pages.read(request, visit, "show_skill_route")
        context["moved"] = {**moved, "who": who(moved), "body_html": render_markdown(moved["body"])}
        context["base"] = moved["version_id"]  # publishing again now starts from it
    return await _show_form(request, visit, context, error)


async def add_file(request: web.Request, visit: Visit) -> web.StreamResponse:
    """PUT /v1/skills/{name}/files/{folder}/{file name} with the uploaded bytes."""
    form = visit.form
    upload = None if form is None else form.get("file")
    folder = _text(form, "pasta")
    file_name = upload.filename if isinstance(upload, FileField) else ""
    path = _text(form, "caminho").strip() or (
        f"{folder}/{file_name}" if folder in FOLDERS else file_name
    )
    request.match_info["path"] = path
    request[PRELOADED_BODY] = upload.file.read() if isinstance(upload, FileField) else b""
    return await _file_change(request, visit, "put_file_route")


async def remove_file(request: web.Request, visit: Visit) -> web.StreamResponse:
    return await _file_change(request, visit, "delete_file_route")


async def _file_change(request: web.Request, visit: Visit, operation: str) -> web.StreamResponse:
    name = request.match_info["name"]
    try:
        await run_route(pages.API[operation], request, visit.principal)
    except SkilletError as exc:
        return await pages.show(
            request, visit, skill_page, error=exc, extra={"file_error": exc.message}
        )
    return see_other(f"{P}/skills/{segment(name)}{pages.done_query(operation)}")


async def rollback(request: web.Request, visit: Visit) -> web.StreamResponse:
    name = request.match_info["name"]
    request[PRELOADED_BODY] = {
        "version_id": _text(visit.form, "version_id"),
        "base_version_id": _text(visit.form, "base_version_id"),
    }
    try:
        await run_route(pages.API["rollback_route"], request, visit.principal)
    except SkilletError as exc:
        return await pages.show(request, visit, skill_page, error=exc)
    return see_other(f"{P}/skills/{segment(name)}{pages.done_query('rollback_route')}")


async def download(request: web.Request, visit: Visit) -> web.StreamResponse:
    """A file's bytes as the API serves them: an attachment, nosniff."""
    answer = await run_answer(pages.API["download_file_route"], request, visit.principal)
    assert isinstance(answer, web.StreamResponse)
    return answer


def _keywords(text: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in text[:MAX_PREVIEW_CHARS].split(",") if k.strip())


async def keyword_preview(request: web.Request, visit: Visit) -> web.Response:
    """Which sample messages (and the person's own) the typed keywords would match, by the
    turn's matcher: `skill` (its body injected), `probe` (only logged) or null."""
    keywords = _keywords(request.query.get("keywords", ""))
    probes = _keywords(request.query.get("probe_keywords", ""))
    test = request.query.get("teste", "")[:MAX_TEST_CHARS].strip()
    errors = [e for k in (*keywords, *probes) if (e := keyword_form_error(k)) is not None]
    skill = LoadedSkill(
        version_id=uuid.UUID(int=0),
        name="previa",
        matcher=SkillMatcher(any_keywords=keywords, probe_keywords=probes),
    )
    samples = []
    for text in (*SAMPLE_MESSAGES, *([test] if test else [])):
        result = match_skills([skill], text) if keywords and not errors else None
        hit = None
        if result is not None and result.matched:
            hit = "skill"
        elif result is not None and result.probes:
            hit = "probe"
        samples.append({"text": text, "match": hit})
    return web.json_response(
        {"samples": samples, "error": errors[0] if errors else None},
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


def add_routes(app: web.Application) -> None:
    """Before the console's other /skills routes: `/nova-skill` and the keyword preview are
    fixed paths; a skill's own pages follow its name."""
    app.router.add_get(P + "/nova-skill", signed_in(pages.page(new_form)))
    app.router.add_post(P + "/nova-skill", signed_in(publish))
    app.router.add_get(P + "/palavras-chave", signed_in(keyword_preview))
    app.router.add_get(P + "/skills/{name}", signed_in(pages.page(skill_page)))
    app.router.add_get(P + "/skills/{name}/editar", signed_in(pages.page(edit_form)))
    app.router.add_post(P + "/skills/{name}/editar", signed_in(publish))
    app.router.add_post(P + "/skills/{name}/arquivos", signed_in(add_file))
    app.router.add_post(P + "/skills/{name}/voltar", signed_in(rollback))
    app.router.add_get(P + "/skills/{name}/arquivos/{path:.+}", signed_in(download))
    app.router.add_post(P + "/skills/{name}/remover/{path:.+}", signed_in(remove_file))
