"""The console's page of a pending draft: what an installed skill's page shows (its body
rendered safely, keywords, files with their size and a download, the versions of that name),
plus what a review needs (the diff against the installed version, the rehearsal, the choice
when it is the same thing as another skill, a suggestion's removed values).

Every read runs the admin API's own routes through its gate, as the other pages do: the
draft (GET /v1/drafts/{name}), the skill's published versions (GET /v1/skills/{name}/
versions; a new name has none) and a draft file's bytes (GET /v1/drafts/{name}/files/{path}).
"""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from api.console import pages
from api.console.auth import READ_TWIN, Visit, signed_in
from api.console.diff_lines import counts, diff_lines
from api.console.render import CONSOLE_PREFIX
from api.console.skill_editor import VIA_NAMES, who
from api.console.skill_text import render_markdown
from api.guard import run_answer
from core.errors import SkilletError

P: Final = CONSOLE_PREFIX
MAX_VERSIONS: Final = 20  # the newest; the skill's own page pages through all of them


async def _versions(request: web.Request, visit: Visit) -> list[dict[str, Any]]:
    """The name's published versions, newest first (none for a name never published)."""
    base = request.get(READ_TWIN, request)  # after a refused POST, its unread twin
    listed = base.clone(rel_url=base.rel_url.with_query({"limit": str(MAX_VERSIONS)}))
    listed.match_info.update(request.match_info)
    try:
        found = await pages.read(listed, visit, "list_versions_route")
    except SkilletError as exc:
        if exc.code != "skill_not_installed":
            raise
        return []
    items: list[dict[str, Any]] = found["items"]
    for item in items:
        item["who"] = who(item)
    return items


async def draft(request: web.Request, visit: Visit) -> pages.PageData:
    reply = await pages.read(request, visit, "show_draft_route")
    pending = reply["status"] == "pending"
    rehearsal = (
        await pages.rehearsal_of(request, visit, {"draft": reply["name"]}) if pending else None
    )
    lines = diff_lines(reply["diff"]["skill_md"])
    added, removed = counts(lines)
    return "draft.html", {
        "draft": reply,
        "body_html": render_markdown(reply["body"]),
        "rehearsal": rehearsal,
        "lines": lines,
        "added": added,
        "removed": removed,
        "changed_files": reply["diff"]["files"],
        "versions": await _versions(request, visit),
        "via_names": VIA_NAMES,
        "kinds": pages.VALUE_KINDS,
        "next": None,
    }


async def download(request: web.Request, visit: Visit) -> web.StreamResponse:
    """A draft file's bytes as the API serves them: an attachment, nosniff."""
    answer = await run_answer(pages.API["download_draft_file_route"], request, visit.principal)
    assert isinstance(answer, web.StreamResponse)
    return answer


def add_routes(app: web.Application) -> None:
    app.router.add_get(P + "/rascunhos/{name}", signed_in(pages.page(draft)))
    app.router.add_get(P + "/rascunhos/{name}/arquivos/{path:.+}", signed_in(download))
