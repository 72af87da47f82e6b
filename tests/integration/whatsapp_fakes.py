"""Local HTTP servers playing Meta's Graph API and WAHA, for the senders and the e2e test."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

from channels.text import utf16_len


@dataclass
class Answer:
    status: int
    body: Any = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class _FakeApi:
    """Records every request; answers from `script` first (in order), then like the real API."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: list[Answer] = []
        self.base_url = ""  # set once serving

    def app(self) -> web.Application:
        raise NotImplementedError

    async def _scripted(self, request: web.Request) -> tuple[Any, web.Response | None]:
        body = await request.json()
        self.received.append(Received(request.path, dict(request.headers), body))
        if not self.script:
            return body, None
        answer = self.script.pop(0)
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        return body, web.json_response(answer.body, status=answer.status, headers=answer.headers)


class FakeGraphApi(_FakeApi):
    """POST /{version}/{phone_number_id}/messages with Meta's checks on token and text size,
    and GET /{version}/{phone_number_id} (the phone number object), both answering only a
    token that may see the number.

    `access_token` (the deployment's system user) sees every number no other token owns;
    `own(token, number)` gives a business's token its number (then only that token sees
    it); `revoke(token)` makes Meta refuse it (error 190) from then on."""

    def __init__(self, access_token: str) -> None:
        super().__init__()
        self.access_token = access_token
        self.delivered: list[tuple[str, str, str]] = []  # (phone_number_id, to, text)
        # The WABA's templates as Meta lists them (name, language, status, category,
        # components), served page by page; and the template messages sent.
        self.waba_templates: dict[str, list[dict[str, Any]]] = {}
        self.templates_page_size = 2
        self.template_pages_served = 0
        self.templates_sent: list[tuple[str, str, str, str, list[str]]] = []
        self.template_page_extra: dict[str, Any] = {}  # merged into every page (hostile tests)
        self.owners: dict[str, str] = {}  # phone_number_id -> the token of its WABA
        self.display_phones: dict[str, str] = {}
        self.revoked: set[str] = set()
        self.sent_with: list[str] = []  # the bearer token of each delivered message
        self.lookups: list[tuple[str, str]] = []  # (phone_number_id, token) of each GET
        # Media customers sent: media id -> (bytes, mime type); GET /{version}/{media_id}
        # answers Meta's media object, its `url` the download on this server's host.
        self.media: dict[str, tuple[bytes, str]] = {}
        self.media_downloads: list[tuple[str, str]] = []  # (media id, token) of each download
        self.media_host = ""  # set: the download URL names this host instead (untrusted)
        self.media_outages = 0  # downloads answered 503 before the real answer
        # Media the business uploaded (POST /{phone_number_id}/media, multipart): media id ->
        # (phone_number_id, the `type` field, file name, bytes); and every accepted send in
        # order, ("text", body) or (its type, its media object), uploads as ("upload", id).
        self.uploads: dict[str, tuple[str, str, str, bytes]] = {}
        self.upload_outages = 0  # uploads answered 503 before the real answer
        self.sends: list[tuple[str, Any]] = []
        # Set: Meta refuses every interactive message with this (code, message).
        self.interactive_refusal: tuple[int, str] | None = None
        # Read marks (POST /messages `status: read`): (phone_number_id, message_id, typing);
        # and every accepted read mark and text in order, ("read", message_id) or
        # ("text", body), so what the customer saw first shows.
        self.read_marks: list[tuple[str, str, bool]] = []
        self.timeline: list[tuple[str, str]] = []
        self.read_arrived = asyncio.Event()  # set by the first read mark (on its own loop)

    def own(self, token: str, phone_number_id: str, display_phone: str | None = None) -> None:
        self.owners[phone_number_id] = token
        if display_phone is not None:
            self.display_phones[phone_number_id] = display_phone

    def revoke(self, token: str) -> None:
        self.revoked.add(token)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{version}/{phone_number_id}/messages", self.messages)
        app.router.add_post("/{version}/{phone_number_id}/media", self.upload)
        app.router.add_get("/{version}/{waba_id}/message_templates", self.message_templates)
        app.router.add_get("/{version}/{phone_number_id}", self.phone_number)
        app.router.add_get("/media-download/{media_id}", self.media_download)
        return app

    def _media_object(self, request: web.Request, media_id: str) -> web.Response:
        token = self._token(request)
        self.lookups.append((media_id, token or ""))
        if token is None or token not in {self.access_token, *self.owners.values()}:
            return _graph_error(401, 190, "Invalid OAuth access token")
        data, mime = self.media[media_id]
        host = self.media_host or request.host
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "url": f"http://{host}/media-download/{media_id}",
                "mime_type": mime,
                "sha256": "fake",
                "file_size": len(data),
                "id": media_id,
            }
        )

    async def media_download(self, request: web.Request) -> web.Response:
        media_id = request.match_info["media_id"]
        token = self._token(request)
        self.media_downloads.append((media_id, token or ""))
        if self.media_outages:
            self.media_outages -= 1
            return web.Response(status=503)
        if token is None or token not in {self.access_token, *self.owners.values()}:
            return web.Response(status=401)
        data, mime = self.media[media_id]
        return web.Response(body=data, content_type=mime.split(";")[0])

    def _token(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        return header.removeprefix("Bearer ") if header.startswith("Bearer ") else None

    def _refusal(self, token: str | None, phone_number_id: str, method: str) -> web.Response | None:
        """Meta's answer to a token that may not touch the number (None: it may)."""
        known = {self.access_token, *self.owners.values()}
        if token is None or token not in known:
            return _graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")
        if token in self.revoked:
            return _graph_error(
                401, 190, "Error validating access token: The session has been invalidated"
            )
        owner = self.owners.get(phone_number_id, self.access_token)
        if token != owner:
            return _graph_error(
                400,
                100,
                f"Unsupported {method} request. Object with ID '{phone_number_id}' does not "
                "exist, cannot be loaded due to missing permissions, or does not support this "
                "operation.",
                kind="GraphMethodException",
                subcode=33,
            )
        return None

    async def phone_number(self, request: web.Request) -> web.Response:
        number = request.match_info["phone_number_id"]
        if number in self.media:
            return self._media_object(request, number)
        token = self._token(request)
        self.lookups.append((number, token or ""))
        refused = self._refusal(token, number, "get")
        if refused is not None:
            return refused
        return web.json_response(
            {
                "verified_name": "Loja Teste",
                "code_verification_status": "VERIFIED",
                "display_phone_number": self.display_phones.get(number, "+55 11 4000-0000"),
                "quality_rating": "GREEN",
                "platform_type": "CLOUD_API",
                "throughput": {"level": "STANDARD"},
                "id": number,
            }
        )

    async def upload(self, request: web.Request) -> web.Response:
        """Meta's media upload: multipart `messaging_product=whatsapp`, `type` (the MIME
        type) and `file`; answers {"id": media id}, Meta's per-type size limits kept."""
        number = request.match_info["phone_number_id"]
        refused = self._refusal(self._token(request), number, "post")
        if refused is not None:
            return refused
        if self.upload_outages:
            self.upload_outages -= 1
            return web.Response(status=503)
        fields: dict[str, str] = {}
        data, filename = b"", ""
        async for part in await request.multipart():
            if not isinstance(part, aiohttp.BodyPartReader):
                continue
            if part.name == "file":
                filename, data = part.filename or "", await part.read()
            elif part.name is not None:
                fields[part.name] = await part.text()
        mime = fields.get("type", "")
        if fields.get("messaging_product") != "whatsapp" or not mime or not data:
            return _graph_error(400, 100, "Invalid parameter")
        if mime not in _UPLOAD_TYPES:
            return _graph_error(
                400, 100, "Param file must be a file with one of the following types: ..."
            )
        limit = _UPLOAD_LIMITS.get(mime.split("/")[0] if mime.startswith("image") else mime)
        if len(data) > (limit or _UPLOAD_LIMITS["document"]):
            return _graph_error(400, 131053, "Media upload error")
        media_id = f"media.up.{len(self.uploads) + 1}"
        self.uploads[media_id] = (number, mime, filename, data)
        self.sends.append(("upload", media_id))
        return web.json_response({"id": media_id})

    def _media_message(self, token: str | None, body: dict[str, Any]) -> web.Response:
        kind = body["type"]
        media = body.get(kind)
        if not isinstance(media, dict) or media.get("id") not in self.uploads:
            return _graph_error(400, 100, f"Invalid parameter: {kind}.id")
        if kind == "audio" and "caption" in media:
            return _graph_error(400, 100, "Param audio['caption'] is not a valid parameter")
        self.sends.append((kind, media))
        self.sent_with.append(token or "")
        wamid = f"wamid.media.{len(self.sends)}"
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                "messages": [{"id": wamid}],
            }
        )

    async def messages(self, request: web.Request) -> web.Response:
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        token = self._token(request)
        refused = self._refusal(token, request.match_info["phone_number_id"], "post")
        if refused is not None:
            return refused
        if body.get("status") == "read" and body.get("messaging_product") == "whatsapp":
            return self._read_mark(request.match_info["phone_number_id"], body)
        if body.get("type") == "template" and body.get("messaging_product") == "whatsapp":
            self.sent_with.append(token or "")
            return self._template_message(request.match_info["phone_number_id"], body)
        if (
            body.get("type") in ("document", "image", "audio")
            and body.get("messaging_product") == "whatsapp"
        ):
            return self._media_message(token, body)
        if body.get("type") == "interactive" and body.get("messaging_product") == "whatsapp":
            return self._interactive_message(token, body)
        text = body.get("text", {}).get("body", "")
        if body.get("messaging_product") != "whatsapp" or body.get("type") != "text" or not text:
            return _graph_error(400, 100, "Invalid parameter")
        if utf16_len(text) > 4096:
            return _graph_error(400, 100, "Param text['body'] must be at most 4096 characters long")
        self.delivered.append((request.match_info["phone_number_id"], body["to"], text))
        self.sends.append(("text", text))
        self.timeline.append(("text", text))
        self.sent_with.append(token or "")
        wamid = f"wamid.out.{len(self.delivered)}"
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                "messages": [{"id": wamid}],
            }
        )

    def _interactive_message(self, token: str | None, body: dict[str, Any]) -> web.Response:
        """Meta's reply buttons (`button`: 1-3, titles up to 20, unique) and lists (`list`:
        up to 10 rows in all, row titles up to 24, descriptions up to 72, ids up to 200, the
        button up to 20); anything else 131009 (parameter value is not valid)."""
        interactive = body.get("interactive") or {}
        if self.interactive_refusal is not None:  # e.g. (131051, "Unsupported message type")
            return _graph_error(400, *self.interactive_refusal)
        refused = _interactive_refusal(interactive)
        if refused is not None:
            return _graph_error(400, 131009, f"Parameter value is not valid: {refused}")
        self.sends.append(("interactive", interactive))
        self.timeline.append(("interactive", interactive.get("type", "")))
        self.sent_with.append(token or "")
        wamid = f"wamid.interactive.{len(self.sends)}"
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                "messages": [{"id": wamid}],
            }
        )

    def _read_mark(self, phone_number_id: str, body: dict[str, Any]) -> web.Response:
        """Meta's mark-as-read, with the typing indicator when `typing_indicator` is
        {"type": "text"} (the only type); answers {"success": true}."""
        message_id = body.get("message_id")
        typing = body.get("typing_indicator")
        if not isinstance(message_id, str) or not message_id.startswith("wamid."):
            return _graph_error(400, 100, "Invalid parameter: message_id")
        if typing is not None and typing != {"type": "text"}:
            return _graph_error(400, 100, "Invalid parameter: typing_indicator")
        self.read_marks.append((phone_number_id, message_id, typing is not None))
        self.timeline.append(("read", message_id))
        self.read_arrived.set()
        return web.json_response({"success": True})

    def _template_message(self, phone_number_id: str, body: dict[str, Any]) -> web.Response:
        """Meta's checks: the template exists in that language and is approved, with as many
        body parameters as its placeholders (132001, 132000)."""
        template = body.get("template") or {}
        name, language = template.get("name"), (template.get("language") or {}).get("code")
        known = [
            t
            for waba in self.waba_templates.values()
            for t in waba
            if (t["name"], t["language"]) == (name, language) and t["status"] == "APPROVED"
        ]
        if not known:
            return _graph_error(404, 132001, "Template name does not exist in the translation")
        components = template.get("components") or []
        params = [p["text"] for c in components if c.get("type") == "body" for p in c["parameters"]]
        text = next((c.get("text", "") for c in known[0]["components"] if c["type"] == "BODY"), "")
        if len(params) != text.count("{{"):
            return _graph_error(400, 132000, "Number of parameters does not match")
        self.templates_sent.append((phone_number_id, body["to"], name, language, params))
        wamid = f"wamid.tpl.{len(self.templates_sent)}"
        return web.json_response({"messaging_product": "whatsapp", "messages": [{"id": wamid}]})

    async def message_templates(self, request: web.Request) -> web.Response:
        """GET /{waba_id}/message_templates: `after` cursors, `paging.next` while more."""
        token = self._token(request)
        if token not in {self.access_token, *self.owners.values()} or token in self.revoked:
            return _graph_error(401, 190, "Invalid OAuth access token")
        waba = request.match_info["waba_id"]
        if waba not in self.waba_templates:
            return _graph_error(400, 100, f"Unsupported get request. Object {waba} not found")
        self.template_pages_served += 1
        start = int(request.query.get("after", "0"))
        listed = self.waba_templates[waba]
        page = listed[start : start + self.templates_page_size]
        answer: dict[str, Any] = {
            **self.template_page_extra,
            "data": page,
            "paging": {"cursors": {"before": str(start)}},
        }
        end = start + len(page)
        if end < len(listed):
            answer["paging"]["cursors"]["after"] = str(end)
            answer["paging"]["next"] = str(request.url.update_query({"after": str(end)}))
        return web.json_response(answer)


def meta_template(
    name: str, body: str, *, status: str = "APPROVED", language: str = "pt_BR"
) -> dict[str, Any]:
    """One entry of `message_templates` as Meta lists it."""
    return {
        "name": name,
        "language": language,
        "status": status,
        "category": "UTILITY",
        "id": f"tpl-{name}-{language}",
        "components": [{"type": "BODY", "text": body}, {"type": "FOOTER", "text": "Loja"}],
    }


class FakeWaha(_FakeApi):
    """POST /api/sendText, GET /api/sessions/{session} and GET /api/{session}/lids/{lid},
    X-Api-Key checked; `sessions` are those GET /api/sessions/{session} knows."""

    def __init__(self, api_key: str) -> None:
        super().__init__()
        self.api_key = api_key
        self.sessions: set[str] = set()
        self.session_lookups: list[str] = []
        self.delivered: list[tuple[str, str, str]] = []  # (session, chatId, text)
        self.phones_by_lid: dict[str, str] = {}  # what the session has learned: lid -> pn
        self.lid_lookups: list[tuple[str, str]] = []  # (session, lid) asked
        self.lid_status = 200
        self.files: dict[str, tuple[bytes, str]] = {}  # GET /api/files/{name}: (bytes, mime)
        self.file_downloads: list[tuple[str, str]] = []  # (name, X-Api-Key) of each download
        # Every accepted send in order: ("sendText", text) or ("sendFile" | "sendImage",
        # (chatId, mimetype, filename, bytes, caption)).
        self.sends: list[tuple[str, Any]] = []
        self.endless_answers = False  # sendText accepts, then streams its answer forever
        # sendSeen / startTyping / stopTyping as they came: (endpoint, chatId, messageIds);
        # and those with every sendText in order: (endpoint, chatId) or ("sendText", text).
        self.presence: list[tuple[str, str, list[str] | None]] = []
        self.timeline: list[tuple[str, str]] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/sendText", self.send_text)
        app.router.add_post("/api/sendFile", self.send_file)
        app.router.add_post("/api/sendImage", self.send_file)
        for endpoint in ("sendSeen", "startTyping", "stopTyping"):
            app.router.add_post(f"/api/{endpoint}", self.chat_presence)
        app.router.add_get("/api/sessions/{session}", self.session)
        app.router.add_get("/api/{session}/lids/{lid}", self.lid)
        app.router.add_get("/api/files/{session}/{name}", self.file)
        return app

    async def file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        key = request.headers.get("X-Api-Key", "")
        self.file_downloads.append((name, key))
        if key != self.api_key:
            return web.json_response({"message": "Unauthorized"}, status=401)
        data, mime = self.files[name]
        return web.Response(body=data, content_type=mime)

    async def session(self, request: web.Request) -> web.Response:
        name = request.match_info["session"]
        self.session_lookups.append(name)
        if request.headers.get("X-Api-Key") != self.api_key:
            return web.json_response({"message": "Unauthorized", "statusCode": 401}, status=401)
        if name not in self.sessions:
            return web.json_response(
                {"statusCode": 404, "message": "Session not found", "error": "Not Found"},
                status=404,
            )
        return web.json_response(
            {
                "name": name,
                "status": "WORKING",
                "config": {"webhooks": []},
                "me": {"id": "5511940000000@c.us", "pushName": "Loja Teste"},
                "engine": {"engine": "NOWEB"},
            }
        )

    async def lid(self, request: web.Request) -> web.Response:
        if request.headers.get("X-Api-Key") != self.api_key:
            return web.json_response({"message": "Unauthorized"}, status=401)
        session, lid = request.match_info["session"], request.match_info["lid"]
        self.lid_lookups.append((session, lid))
        if self.lid_status != 200:
            return web.json_response({"message": "boom"}, status=self.lid_status)
        return web.json_response({"lid": lid, "pn": self.phones_by_lid.get(lid)})

    async def send_text(self, request: web.Request) -> web.Response:
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        if request.headers.get("X-Api-Key") != self.api_key:
            return web.json_response({"message": "Unauthorized"}, status=401)
        self.delivered.append((body["session"], body["chatId"], body["text"]))
        self.sends.append(("sendText", body["text"]))
        self.timeline.append(("sendText", body["text"]))
        if self.endless_answers:
            return await _endless(request)
        return web.json_response({"id": f"true_{body['chatId']}_{len(self.delivered)}"}, status=201)

    async def chat_presence(self, request: web.Request) -> web.Response:
        """/api/sendSeen ({"session", "chatId", "messageIds"?}), /api/startTyping and
        /api/stopTyping ({"session", "chatId"}): WAHA's ChatRequest / SendSeenRequest."""
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        if request.headers.get("X-Api-Key") != self.api_key:
            return web.json_response({"message": "Unauthorized"}, status=401)
        chat, session = body.get("chatId"), body.get("session")
        if not isinstance(chat, str) or not chat.endswith("@c.us") or not session:
            return web.json_response({"statusCode": 400, "message": "chatId"}, status=400)
        endpoint = request.path.rsplit("/", 1)[-1]
        ids = body.get("messageIds")
        self.presence.append((endpoint, chat, ids if isinstance(ids, list) else None))
        self.timeline.append((endpoint, chat))
        return web.json_response({}, status=201)

    async def send_file(self, request: web.Request) -> web.Response:
        """/api/sendFile and /api/sendImage with the file's bytes: {"session", "chatId",
        "file": {"mimetype", "filename", "data": base64}, "caption"}."""
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        if request.headers.get("X-Api-Key") != self.api_key:
            return web.json_response({"message": "Unauthorized"}, status=401)
        file = body.get("file") or {}
        if not file.get("mimetype") or not file.get("data") or body.get("session") is None:
            return web.json_response({"statusCode": 400, "message": "file is required"}, status=400)
        data = base64.b64decode(file["data"], validate=True)
        endpoint = request.path.rsplit("/", 1)[-1]
        sent = (body["chatId"], file["mimetype"], file.get("filename"), data, body.get("caption"))
        self.sends.append((endpoint, sent))
        return web.json_response({"id": f"true_{body['chatId']}_file{len(self.sends)}"}, status=201)


FakeT = TypeVar("FakeT", bound=_FakeApi)

# The types Meta's upload takes (its supported media table): no other document type.
_UPLOAD_TYPES = frozenset(
    {
        "audio/aac",
        "audio/amr",
        "audio/mpeg",
        "audio/mp4",
        "audio/ogg",
        "image/jpeg",
        "image/png",
        "image/webp",
        "video/3gp",
        "video/mp4",
        "text/plain",
        "application/pdf",
        "application/msword",
        "application/vnd.ms-excel",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    }
)
# Meta's upload limits: images, audio types and documents (anything else).
_UPLOAD_LIMITS = {
    "image": 5 * 1024 * 1024,
    "audio/ogg": 16 * 1024 * 1024,
    "audio/mpeg": 16 * 1024 * 1024,
    "audio/mp4": 16 * 1024 * 1024,
    "audio/aac": 16 * 1024 * 1024,
    "audio/amr": 16 * 1024 * 1024,
    "document": 100 * 1024 * 1024,
}


def _interactive_refusal(interactive: dict[str, Any]) -> str | None:
    """What Meta would refuse in an interactive `button` or `list` (None: it takes it)."""
    text = (interactive.get("body") or {}).get("text") or ""
    if not text or len(text) > 1024:
        return "body.text"
    action = interactive.get("action") or {}
    if interactive.get("type") == "button":
        buttons = [b.get("reply") or {} for b in action.get("buttons") or []]
        titles = [b.get("title") or "" for b in buttons]
        if not 1 <= len(buttons) <= 3 or any(not t or len(t) > 20 for t in titles):
            return "action.buttons"
        if len(set(titles)) != len(titles) or any(len(b.get("id") or "") > 256 for b in buttons):
            return "action.buttons"
        return None
    if interactive.get("type") == "list":
        rows = [r for section in action.get("sections") or [] for r in section.get("rows") or []]
        button = action.get("button") or ""
        if not 1 <= len(rows) <= 10 or not button or len(button) > 20:
            return "action.sections"
        for row in rows:
            if not row.get("title") or len(row["title"]) > 24:
                return "action.sections.rows.title"
            if len(row.get("description") or "") > 72 or len(row.get("id") or "") > 200:
                return "action.sections.rows"
        return None
    return "interactive.type"


def _graph_error(
    status: int,
    code: int,
    message: str,
    *,
    kind: str = "OAuthException",
    subcode: int | None = None,
) -> web.Response:
    error: dict[str, Any] = {"message": message, "type": kind, "code": code, "fbtrace_id": "fake"}
    if subcode is not None:
        error["error_subcode"] = subcode
    return web.json_response({"error": error}, status=status)


@contextlib.contextmanager
def serving_in_thread(fake: FakeT, path: str = "") -> Iterator[FakeT]:
    """Serve `fake` from a loop of its own thread: a synchronous test calls the CLI's
    `main`, whose own asyncio.run would otherwise wait on a loop that is not running."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    runner: web.AppRunner | None = None

    async def start() -> None:
        nonlocal runner
        runner = web.AppRunner(fake.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        fake.base_url = f"http://127.0.0.1:{port}{path}"
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    started.wait(10)
    try:
        yield fake
    finally:
        if runner is not None:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


async def _endless(request: web.Request) -> web.StreamResponse:
    """201 and a JSON body that never ends (64 KiB each 20 ms), until the client goes."""
    response = web.StreamResponse(status=201, headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'{"id": "true_endless", "pad": "')
    with contextlib.suppress(ConnectionError):
        while True:
            await response.write(b"x" * 65_536)
            await asyncio.sleep(0.02)
    return response
