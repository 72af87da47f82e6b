"""Request bodies: JSON validated by a pydantic model, and skill uploads (raw or multipart).

An upload is refused with 413 as soon as it is known to pass the deployment's cap
(`PackageLimits.max_upload_bytes`, 8 MiB at the default 5 MiB package limit): from its
Content-Length before a byte is read, else while streaming, before reading further.

The console (api.console) reads its HTML forms itself (it checks their CSRF token first) and
leaves what a route's handler would have read under PRELOADED_BODY: a dict of fields for
`read_json`, the file's bytes for `read_upload`. The handler validates it as it would a body.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiohttp import BodyPartReader, web
from pydantic import BaseModel, ValidationError

from api.errors import ApiError
from skills.package.limits import DEFAULT_LIMITS

MAX_UPLOAD_BYTES = DEFAULT_LIMITS.max_upload_bytes  # at the default package limits
MAX_JSON_BYTES = 256 * 1024  # an agent's prompt is at most 50,000 characters
# Boundaries and part headers around the file in a multipart body.
MULTIPART_OVERHEAD_BYTES = 16 * 1024
CHUNK_BYTES = 64 * 1024
UPLOAD_FIELD = "file"
PRELOADED_BODY = web.RequestKey("preloaded_body", object)

M = TypeVar("M", bound=BaseModel)


def _too_large(limit: int, what: str) -> ApiError:
    return ApiError(
        413,
        "skill_too_large" if what == "pacote" else "body_too_large",
        f"O {what} passa de {limit // 1024} KiB"
        + ("; envie um pacote de skill menor." if what == "pacote" else "."),
    )


async def _read_capped(read: Callable[[int], Awaitable[bytes]], limit: int, what: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := await read(CHUNK_BYTES):
        total += len(chunk)
        if total > limit:
            raise _too_large(limit, what)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: web.Request, model: type[M]) -> M:
    preloaded = request.get(PRELOADED_BODY)
    if isinstance(preloaded, dict):
        raw = json.dumps(preloaded).encode()
    else:
        declared = request.content_length
        if declared is not None and declared > MAX_JSON_BYTES:
            raise _too_large(MAX_JSON_BYTES, "corpo")
        raw = await _read_capped(request.content.read, MAX_JSON_BYTES, "corpo")
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise ApiError(400, "invalid_json", "O corpo não é JSON válido.") from None
        detail = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'corpo'}: {e['msg']}" for e in exc.errors()
        )
        raise ApiError(422, "invalid_input", f"Dados inválidos: {detail}") from None


async def read_upload(request: web.Request, max_bytes: int = MAX_UPLOAD_BYTES) -> bytes:
    """The .zip of a skill: the raw body, or the `file` part of a multipart/form-data body."""
    preloaded = request.get(PRELOADED_BODY)
    if isinstance(preloaded, bytes):
        if len(preloaded) > max_bytes:
            raise _too_large(max_bytes, "pacote")
        return preloaded
    multipart = request.content_type.startswith("multipart/")
    slack = MULTIPART_OVERHEAD_BYTES if multipart else 0
    declared = request.content_length
    if declared is not None and declared > max_bytes + slack:
        raise _too_large(max_bytes, "pacote")
    if not multipart:
        return await _read_capped(request.content.read, max_bytes, "pacote")
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if isinstance(part, BodyPartReader) and (
            part.name == UPLOAD_FIELD or part.filename is not None
        ):
            return await _read_capped(part.read_chunk, max_bytes, "pacote")
    raise ApiError(
        422, "invalid_input", f"O formulário não tem o campo `{UPLOAD_FIELD}` com o .zip."
    )
