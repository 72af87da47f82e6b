"""Hostile skill uploads over real HTTP: multipart bodies we cannot read are 400, and the
upload cap counts every byte of the body (every part, its headers, the framing), however
it is split or chunked, and answers 413 as soon as the cap is crossed, while the client is
still sending."""

from __future__ import annotations

import asyncio
import io
import uuid
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest
import pytest_asyncio

from api.bodies import MULTIPART_OVERHEAD_BYTES
from api.keys import Role
from skills.package.limits import BYTES_PER_KIB, BYTES_PER_MIB, PackageLimits
from tests.hostile.refusals import assert_refused
from tests.integration.api_support import (
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.support import create_org
from tests.package_builders import skill_md_text, skill_zip, zip_files
from worker.resources import Resources
from worker.settings import Settings

pytestmark = pytest.mark.integration

# A small deployment: 64 KiB of package, so the upload cap is 608 KiB and tests stay quick.
LIMITS = PackageLimits(max_total_bytes=64 * BYTES_PER_KIB, max_file_bytes=64 * BYTES_PER_KIB)
CAP_BYTES = LIMITS.max_upload_bytes + MULTIPART_OVERHEAD_BYTES  # a multipart body, all of it
BOUNDARY = "limite-hostil"
MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
CHUNK_BYTES = 64 * BYTES_PER_KIB
_INVALID_MD = "skill_frontmatter_invalid"


@dataclass(frozen=True)
class Editor:
    org: uuid.UUID
    key: str


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, package_limits=LIMITS) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def editor(db: asyncpg.Connection) -> Editor:
    org = await create_org(db, "Loja Hostil")
    return Editor(org, await create_key(db, org, Role.EDITOR))


def _part(name: str, data: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"


def _form(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


async def _last_refusal(db: asyncpg.Connection, org: uuid.UUID) -> tuple[str, str, object]:
    [*_, row] = await audit_rows(db, org)
    return row["action"], row["outcome"], row["detail"]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data", b"garbage"),  # no boundary
        (MULTIPART["Content-Type"], b"garbage"),  # no part
        (MULTIPART["Content-Type"], f"--{BOUNDARY}\r\nnot a header\r\n\r\nx".encode()),
        (MULTIPART["Content-Type"], f"--{BOUNDARY}\r\n".encode() + b"x" * 100),  # cut short
        (MULTIPART["Content-Type"], b""),
    ],
    ids=["no-boundary", "garbage", "bad-part-header", "cut-short", "empty"],
)
async def test_a_multipart_body_we_cannot_read_is_400_and_audited(
    api: ApiClient, db: asyncpg.Connection, editor: Editor, content_type: str, body: bytes
) -> None:
    before = await org_snapshot(db, editor.org)
    answer = await api.call(
        "POST", "/v1/skills", editor.key, data=body, headers={"Content-Type": content_type}
    )
    assert_refused(answer, 400, "invalid_multipart")
    assert await org_snapshot(db, editor.org) == before
    refusal = ("skill.import", "refused", {"code": "invalid_multipart"})
    assert await _last_refusal(db, editor.org) == refusal


async def test_a_multipart_with_other_fields_and_the_file_still_imports(
    api: ApiClient, editor: Editor
) -> None:
    body = _form(_part("nota", b"primeira parte"), _part("file", skill_zip("frete"), "s.zip"))
    answer = await api.call("POST", "/v1/skills", editor.key, data=body, headers=MULTIPART)
    assert answer.status == 200, answer.body
    assert (answer.body["name"], answer.body["created"]) == ("frete", True)


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), CHUNK_BYTES):
        yield body[start : start + CHUNK_BYTES]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(
    "parts",
    [
        # A first, non-file part past the cap; the file itself is tiny.
        lambda: [_part("nota", b"x" * (CAP_BYTES + 1)), _part("file", skill_zip("a"), "a.zip")],
        # Many parts, each small, that pass the cap together.
        lambda: [
            _part(f"p{n}", b"y" * (32 * BYTES_PER_KIB))
            for n in range(CAP_BYTES // (32 * BYTES_PER_KIB) + 1)
        ],
        # Part headers alone: one part whose header line is most of the body.
        lambda: [
            f"--{BOUNDARY}\r\nX-Pad: {'z' * CAP_BYTES}\r\n"
            'Content-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\n'.encode()
            + skill_zip("a")
            + b"\r\n"
        ],
    ],
    ids=["big-first-part", "many-small-parts", "big-part-header"],
)
async def test_every_byte_of_a_multipart_counts_toward_the_cap(
    api: ApiClient, db: asyncpg.Connection, editor: Editor, parts: object, chunked: bool
) -> None:
    assert callable(parts)
    body = _form(*parts())
    assert len(body) > CAP_BYTES
    before = await org_snapshot(db, editor.org)
    data = _chunks(body) if chunked else body
    answer = await api.call("POST", "/v1/skills", editor.key, data=data, headers=MULTIPART)
    assert_refused(answer, 413, "skill_too_large")
    assert await org_snapshot(db, editor.org) == before
    refusal = ("skill.import", "refused", {"code": "skill_too_large"})
    assert await _last_refusal(db, editor.org) == refusal


async def _send_until(
    writer: asyncio.StreamWriter, done: asyncio.Task[bytes], limit_bytes: int, pause_s: float
) -> int:
    """Chunks of one endless part until `done` (something came back) or `limit_bytes`; the
    bytes sent. A connection the server closed ends it too."""
    chunk = b"x" * CHUNK_BYTES
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    try:
        while sent < limit_bytes and not done.done():
            writer.write(frame)
            await writer.drain()
            sent += len(chunk)
            await asyncio.sleep(pause_s)  # 0: just the server's turn, as a network gives it
    except (ConnectionResetError, BrokenPipeError):
        pass
    return sent


async def test_a_chunked_body_past_the_cap_is_answered_at_once_and_not_read_on(
    api: ApiClient, editor: Editor
) -> None:
    """A raw HTTP/1.1 client streams one non-file part, chunked, no Content-Length, meaning
    to send 64 MiB: the 413 arrives when little more than the cap is sent. It then keeps
    sending, paced (at most 12.8 MiB/s): the server drops that for LINGER_AFTER_ANSWER_S and
    closes the connection, long before the 96 MiB more it would otherwise swallow."""
    host, port = api.base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        f"POST /v1/skills HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {editor.key}\r\n"
        f"Content-Type: {MULTIPART['Content-Type']}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    first = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="nota"\r\n\r\n'.encode()
    writer.write(head.encode() + f"{len(first):x}\r\n".encode() + first + b"\r\n")
    try:
        answer = asyncio.create_task(reader.readuntil(b"\r\n\r\n"))
        sent = await _send_until(writer, answer, 64 * BYTES_PER_MIB, pause_s=0)
        answer_head = await asyncio.wait_for(answer, timeout=10)
        closed = asyncio.create_task(reader.read())  # the answer's body, then EOF or a reset
        sent_after = await _send_until(writer, closed, 96 * BYTES_PER_MIB, pause_s=0.005)
        await asyncio.wait_for(asyncio.gather(closed, return_exceptions=True), timeout=10)
    finally:
        writer.close()
    assert answer_head.startswith(b"HTTP/1.1 413 "), answer_head
    # Answered at the cap plus what socket buffers held: far from the 64 MiB meant to go.
    assert sent < 16 * BYTES_PER_MIB, sent
    assert closed.done() and sent_after < 48 * BYTES_PER_MIB, sent_after
    print(
        f"413 after {sent / BYTES_PER_MIB:.1f} MiB sent (cap {CAP_BYTES / BYTES_PER_MIB:.2f} "
        f"MiB); closed after {sent_after / BYTES_PER_MIB:.1f} MiB more"
    )


def _zip_with_raw_name(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", skill_md_text("frete"))
        info = zipfile.ZipInfo("placeholder")
        info.filename = name  # written byte for byte, NUL included
        archive.writestr(info, "texto")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("package", "code"),
    [
        (lambda: _zip_with_raw_name("references/a\x00b.md"), "skill_unsafe_path"),
        (lambda: zip_files({"SKILL.md": skill_md_text("frete", body="Oi\x00")}), _INVALID_MD),
        (lambda: zip_files({"SKILL.md": skill_md_text("frete", description="a\x00")}), _INVALID_MD),
    ],
    ids=["nul-in-entry-name", "nul-in-body", "nul-in-description"],
)
async def test_a_nul_inside_a_package_is_422_with_its_code(
    api: ApiClient, db: asyncpg.Connection, editor: Editor, package: object, code: str
) -> None:
    assert callable(package)
    before = await org_snapshot(db, editor.org)
    body = _form(_part("file", package(), "s.zip"))
    answer = await api.call("POST", "/v1/skills", editor.key, data=body, headers=MULTIPART)
    assert_refused(answer, 422, code)
    assert await org_snapshot(db, editor.org) == before
    assert await _last_refusal(db, editor.org) == ("skill.import", "refused", {"code": code})
