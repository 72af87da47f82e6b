"""Request bodies: JSON validated by a pydantic model, and skill uploads (raw or multipart).

A JSON body is parsed once by the standard library first: what is not JSON is 400
`invalid_json`; a document that is not an object, 422 `invalid_input`; a string Postgres
cannot store, anywhere in it, 422 `invalid_text` (api.text). Then the route's model reads it.

An upload is refused with 413 as soon as it is known to pass the deployment's cap
(`PackageLimits.max_upload_bytes`, 8 MiB at the default 5 MiB package limit): from its
Content-Length before a byte is read, else while streaming, before reading further (what
still comes is dropped for LINGER_AFTER_ANSWER_S, then the connection is closed). Every
byte of the body counts, however it is split: a multipart body (every part and its headers)
may pass the cap by MULTIPART_OVERHEAD_BYTES of framing and no more, and is read whole (it
is that small) before its parts are looked at. A multipart body we cannot read (no boundary,
no parts, broken framing) is 400 `invalid_multipart`.

The console (api.console) reads its HTML forms itself (it checks their CSRF token first) and
leaves what a route's handler would have read under PRELOADED_BODY: a dict of fields for
`read_json`, the file's bytes for `read_upload`. The handler validates it as it would a body.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import BodyPartReader, MultipartReader, StreamReader, web
from aiohttp.base_protocol import BaseProtocol
from aiohttp.http_exceptions import HttpProcessingError
from multidict import CIMultiDictProxy
from pydantic import BaseModel, ValidationError

from api.errors import ApiError
from api.text import check_body
from skills.package.limits import DEFAULT_LIMITS

MAX_UPLOAD_BYTES = DEFAULT_LIMITS.max_upload_bytes  # at the default package limits
MAX_JSON_BYTES = 256 * 1024  # an agent's prompt is at most 50,000 characters
# Boundaries and part headers around the file in a multipart body.
MULTIPART_OVERHEAD_BYTES = 16 * 1024
CHUNK_BYTES = 64 * 1024
# After an answer sent before the body's end (a 413 at the cap, a 401), aiohttp reads and
# drops what keeps coming, so the client reads the answer before the connection closes; its
# default of 10 s let a refused client stream on for 10 s. A short answer needs far less.
LINGER_AFTER_ANSWER_S = 2.0
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


def _invalid_json() -> ApiError:
    return ApiError(400, "invalid_json", "O corpo não é JSON válido.")


def _document(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    # RecursionError: a few thousand nested brackets; pydantic would refuse them too.
    except (ValueError, RecursionError):
        raise _invalid_json() from None


async def read_json(request: web.Request, model: type[M]) -> M:
    preloaded = request.get(PRELOADED_BODY)
    if isinstance(preloaded, dict):
        raw = json.dumps(preloaded).encode()
    else:
        declared = request.content_length
        if declared is not None and declared > MAX_JSON_BYTES:
            raise _too_large(MAX_JSON_BYTES, "corpo")
        raw = await _read_capped(request.content.read, MAX_JSON_BYTES, "corpo")
    raw = raw or b"{}"
    document = _document(raw)
    if not isinstance(document, dict):
        raise ApiError(
            422,
            "invalid_input",
            'O corpo deve ser um objeto JSON, entre chaves: {"campo": valor}.',
        )
    check_body(document)
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise _invalid_json() from None
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
    cap = max_bytes + (MULTIPART_OVERHEAD_BYTES if multipart else 0)
    declared = request.content_length
    if declared is not None and declared > cap:
        raise _too_large(max_bytes, "pacote")
    body = await _read_capped(request.content.read, cap, "pacote")
    if not multipart:
        return body
    data = await _file_part(request.headers, body)
    if len(data) > max_bytes:
        raise _too_large(max_bytes, "pacote")
    return data


def _invalid_multipart() -> ApiError:
    return ApiError(
        400,
        "invalid_multipart",
        "O formulário multipart não pôde ser lido (falta o boundary no Content-Type ou as "
        f"partes estão malformadas). Envie o .zip no campo `{UPLOAD_FIELD}` de um "
        "multipart/form-data, ou o .zip sozinho no corpo.",
    )


async def _file_part(headers: CIMultiDictProxy[str], body: bytes) -> bytes:
    """The `file` part (or the first part with a filename) of a multipart body in memory."""
    loop = asyncio.get_running_loop()
    stream = StreamReader(BaseProtocol(loop), CHUNK_BYTES, loop=loop)
    stream.feed_data(body)
    stream.feed_eof()
    try:
        reader = MultipartReader(headers, stream)
        while (part := await reader.next()) is not None:
            if isinstance(part, BodyPartReader) and (
                part.name == UPLOAD_FIELD or part.filename is not None
            ):
                return bytes(await part.read())
    except (ValueError, HttpProcessingError):
        raise _invalid_multipart() from None
    raise ApiError(
        422, "invalid_input", f"O formulário não tem o campo `{UPLOAD_FIELD}` com o .zip."
    )
