"""HTML answers of the console: the Jinja2 environment (autoescape on) and its headers.

Every value a customer, a model or a package wrote reaches a page through `{{ }}` and is
escaped; no template marks anything `|safe`. Pages are never cached (they carry CSRF tokens,
and a key is shown once) and may not be framed. The only script is the console's own, from
/console/static/, which polls the console's JSON on the same origin: the CSP allows exactly
that (`script-src 'self'`, `connect-src 'self'`), no inline script, nothing from elsewhere.
"""

from __future__ import annotations

import urllib.parse
from datetime import date
from typing import Any

import jinja2
from aiohttp import web

from api.console.diff_lines import visible
from api.console.labels import audit_detail, label, language
from api.console.moments import Clock

CONSOLE_PREFIX = "/console"
TEMPLATES = web.AppKey("console_templates", jinja2.Environment)
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; media-src 'self'; "
        "script-src 'self'; "
        "connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


@jinja2.pass_context
def when(context: jinja2.runtime.Context, value: str | None) -> str:
    """An ISO timestamp in the org's zone, as a person scanning reads it ("há 3 min", "ontem
    às 14:05"): the page's `clock` (api.console.org_clock), São Paulo's when it has none."""
    clock = context.get("clock") or Clock()
    return str(clock.moment(value))


def day(value: str) -> str:
    """An ISO date (a day of the counts, as its label says) as dd/mm/aaaa."""
    return date.fromisoformat(value).strftime("%d/%m/%Y")


def number(value: int) -> str:
    """A count as read in Brazil: dots between thousands (1.234.567)."""
    return f"{value:,}".replace(",", ".")


def share(part: int, whole: int) -> str:
    """`part` as a whole percent of `whole` ("—" when there is no whole to share)."""
    if whole <= 0:
        return "—"
    return f"{round(100 * part / whole)}%"


def segment(value: object) -> str:
    """One URL path segment (a skill name, an id), percent-encoded, slashes included."""
    return urllib.parse.quote(str(value), safe="")


def build_templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("api.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["seg"] = segment
    env.filters["day"] = day
    env.filters["number"] = number
    env.filters["share"] = share
    env.filters["bidi"] = visible  # bidi controls shown as <U+202E>, never applied
    env.filters["label"] = label  # a stored value in pt-BR words (api.console.labels)
    env.filters["audit_detail"] = audit_detail
    env.filters["idioma"] = language
    return env


# What base.html reads on every page, absent unless a page sets it.
_BASE_DEFAULTS: dict[str, Any] = {
    "visit": None,
    "notice": None,
    "error": None,
    "next_href": None,
    "clock": None,
}


def html(
    request: web.Request, template: str, context: dict[str, Any], status: int = 200
) -> web.Response:
    text = request.app[TEMPLATES].get_template(template).render(**(_BASE_DEFAULTS | context))
    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        charset="utf-8",
        headers=SECURITY_HEADERS,
    )


def see_other(location: str) -> web.Response:
    """303: after a POST, the browser GETs `location` (a reload does not repeat the POST)."""
    return web.Response(status=303, headers={**SECURITY_HEADERS, "Location": location})
