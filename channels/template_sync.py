"""Reading a WABA's templates from the Graph API: `GET {base}/{waba_id}/message_templates`,
then `paging.next` only, at most MAX_PAGES pages of at most MAX_PAGE_BYTES each.

The answer is a remote server's, so it is bounded in bytes (a page past MAX_PAGE_BYTES is an
error, read no further) and in pages (past MAX_PAGES the listing is `complete=False`: what
was read is stored, nothing is deleted); each page is parsed by channels.templates. A
failure raises TemplateSyncError with a pt-BR message saying what to check; nothing is
stored by this module (channels.template_queries does that).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp

from channels.templates import Template, parse_page
from core.errors import SkilletError

MAX_PAGES = 50
MAX_PAGE_BYTES = 1 << 20  # 1 MiB: a page of 1,000 templates is far less
PAGE_LIMIT = 100  # templates asked per page
FIELDS = "name,language,category,status,components"


class TemplateSyncError(SkilletError):
    code = "template_sync_failed"
    retryable = True


@dataclass(frozen=True)
class TemplateListing:
    templates: tuple[Template, ...]
    pages: int
    skipped: int  # entries of no known shape
    complete: bool  # every page was read (False: MAX_PAGES reached)


@dataclass(frozen=True)
class GraphAccess:
    base_url: str
    access_token: str = field(repr=False)  # never printed
    timeout_s: float = 10.0


async def _page(session: aiohttp.ClientSession, url: str, access: GraphAccess) -> Any:
    headers = {"Authorization": f"Bearer {access.access_token}"}
    timeout = aiohttp.ClientTimeout(total=access.timeout_s)
    try:
        async with session.get(url, headers=headers, timeout=timeout) as response:
            raw = await response.content.read(MAX_PAGE_BYTES + 1)
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise TemplateSyncError(
            f"Não foi possível ler os templates do WhatsApp ({type(exc).__name__}); "
            "tente de novo em instantes."
        ) from exc
    if len(raw) > MAX_PAGE_BYTES:
        raise TemplateSyncError(
            f"A Graph API respondeu uma página de templates maior que {MAX_PAGE_BYTES} bytes."
        )
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if status != 200:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise TemplateSyncError(
            f"A Graph API recusou a leitura dos templates (HTTP {status}: "
            f"{str(message or 'sem detalhe')[:200]}). Confira o WABA id do número e se o "
            "token tem a permissão whatsapp_business_management."
        )
    return body


async def fetch_templates(
    session: aiohttp.ClientSession, access: GraphAccess, waba_id: str
) -> TemplateListing:
    base = access.base_url.rstrip("/")
    url: str | None = (
        f"{base}/{quote(waba_id, safe='')}/message_templates?limit={PAGE_LIMIT}&fields={FIELDS}"
    )
    templates: dict[tuple[str, str], Template] = {}
    pages = skipped = 0
    while url is not None and pages < MAX_PAGES:
        body = await _page(session, url, access)
        try:
            page = parse_page(body, base)
        except ValueError as exc:
            raise TemplateSyncError(
                f"A Graph API respondeu algo que não é uma lista: {exc}."
            ) from exc
        pages += 1
        skipped += page.skipped
        for template in page.templates:
            templates.setdefault((template.name, template.language), template)
        url = page.next_url
    return TemplateListing(tuple(templates.values()), pages, skipped, complete=url is None)
