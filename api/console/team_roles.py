"""The Equipe page after a refused role change: the team as pages.team shows it, with the
refusal beside that person's role form (the API's PATCH /v1/people/{id}: admin only; 409
`last_admin` for the last active admin's demotion)."""

from __future__ import annotations

from aiohttp import web

from api.console.auth import Visit
from api.console.pages import PageData, team


async def page(request: web.Request, visit: Visit) -> PageData:
    template, context = await team(request, visit)
    return template, {**context, "role_person": request.match_info.get("id")}
