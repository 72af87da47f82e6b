"""WhatsApp message templates (pure: values in, values out): one page of the Graph API's
`GET /{waba_id}/message_templates` read into templates, the next page's URL, a template's
body with its parameters filled in, and the Cloud API's `type: template` message.

A page is a remote server's answer, so every field is checked and bounded: a template whose
name, language or status is not the shape Meta documents is skipped (counted), a body longer
than Meta's 1,024 characters is cut to MAX_BODY_CHARS, at most MAX_PLACEHOLDERS distinct
placeholders are read from it, and at most MAX_TEMPLATES_PER_PAGE entries of a page. The
next page is followed only from `paging.next`, and only when it points at the same scheme,
host and port as the base URL (a server cannot send the sync, and its token, elsewhere).

Placeholders are `{{1}}`, `{{2}}`, ... (positional) or `{{name}}` (named, Meta's
`parameter_format: NAMED`); their count is how many params a send must give, in order of
first appearance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_BODY_CHARS = 4096
MAX_PLACEHOLDERS = 100
MAX_TEMPLATES_PER_PAGE = 1_000
MAX_PARAM_CHARS = 1024  # more than any template body takes
APPROVED = "APPROVED"

_NAME_RE = re.compile(r"^[a-z0-9_]{1,512}$")
_LANGUAGE_RE = re.compile(r"^[A-Za-z_]{2,16}$")
_WORD_RE = re.compile(r"^[A-Z_]{1,64}$")
# Bounded: a name is at most 64 word characters; nothing nested, no backtracking to speak of.
_PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z0-9_]{1,64})\s*\}\}")


@dataclass(frozen=True)
class Template:
    name: str
    language: str  # Meta's code: pt_BR, en_US, ...
    category: str  # MARKETING | UTILITY | AUTHENTICATION
    status: str  # APPROVED | PENDING | REJECTED | PAUSED | DISABLED | ...
    body: str  # the BODY component's text ('' when it has none)
    placeholders: tuple[str, ...]  # '1', '2', ... or names, in order of first appearance

    @property
    def approved(self) -> bool:
        return self.status == APPROVED

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "language": self.language,
            "category": self.category,
            "status": self.status,
            "body": self.body,
            "placeholders": list(self.placeholders),
        }


@dataclass(frozen=True)
class Page:
    templates: tuple[Template, ...]
    skipped: int  # entries that were not a template of a known shape
    next_url: str | None


def placeholders_of(body: str) -> tuple[str, ...]:
    found: list[str] = []
    for match in _PLACEHOLDER_RE.finditer(body):
        name = match.group(1)
        if name not in found:
            found.append(name)
            if len(found) == MAX_PLACEHOLDERS:
                break
    return tuple(found)


def _body_text(components: Any) -> str:
    if not isinstance(components, list):
        return ""
    for component in components[:20]:
        if isinstance(component, dict) and str(component.get("type", "")).upper() == "BODY":
            text = component.get("text")
            return text[:MAX_BODY_CHARS] if isinstance(text, str) else ""
    return ""


def _template(entry: Any) -> Template | None:
    if not isinstance(entry, dict):
        return None
    name, language = entry.get("name"), entry.get("language")
    status, category = entry.get("status"), entry.get("category", "UTILITY")
    if not (isinstance(name, str) and _NAME_RE.match(name)):
        return None
    if not (isinstance(language, str) and _LANGUAGE_RE.match(language)):
        return None
    if not (isinstance(status, str) and _WORD_RE.match(status)):
        return None
    if not (isinstance(category, str) and _WORD_RE.match(category)):
        return None
    body = _body_text(entry.get("components"))
    return Template(name, language, category, status, body, placeholders_of(body))


def same_origin(url: str, base_url: str) -> bool:
    one, other = urlsplit(url), urlsplit(base_url)
    return (one.scheme, one.hostname, one.port) == (other.scheme, other.hostname, other.port)


def parse_page(body: Any, base_url: str) -> Page:
    """One answer of `message_templates`; ValueError when it is not one at all."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ValueError("the answer has no `data` list of templates")
    entries = body["data"][:MAX_TEMPLATES_PER_PAGE]
    templates = [t for t in map(_template, entries) if t is not None]
    paging = body.get("paging")
    next_url = paging.get("next") if isinstance(paging, dict) else None
    followed = isinstance(next_url, str) and len(next_url) <= 4096
    if not (followed and isinstance(next_url, str) and same_origin(next_url, base_url)):
        next_url = None
    return Page(tuple(templates), len(body["data"]) - len(templates), next_url)


def filled_body(template: Template, params: Sequence[str]) -> str:
    """The body as the customer reads it: each placeholder replaced by its param."""
    values = dict(zip(template.placeholders, params, strict=False))

    def value(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return _PLACEHOLDER_RE.sub(value, template.body)[:MAX_BODY_CHARS]


def template_message(
    to: str, name: str, language: str, params: Sequence[str], placeholders: Sequence[str]
) -> dict[str, Any]:
    """The Cloud API's `POST /{phone_number_id}/messages` body of a template message."""
    template: dict[str, Any] = {"name": name, "language": {"code": language}}
    if params:
        named = any(not p.isdigit() for p in placeholders)
        parameters = []
        for i, text in enumerate(params):
            parameter: dict[str, Any] = {"type": "text", "text": text}
            if named and i < len(placeholders):
                parameter["parameter_name"] = placeholders[i]
            parameters.append(parameter)
        template["components"] = [{"type": "body", "parameters": parameters}]
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "template",
        "template": template,
    }
