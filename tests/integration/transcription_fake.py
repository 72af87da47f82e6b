"""A local HTTP server speaking OpenAI's transcription wire (multipart in, JSON out)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import BodyPartReader, web


@dataclass
class Transcription:
    """One request as the server read it."""

    data: bytes
    file_name: str
    content_type: str
    fields: dict[str, str]
    authorization: str


@dataclass
class FakeTranscriber:
    """POST /v1/audio/transcriptions: `text` answers every file, or `statuses` first (in
    order: 503 is an outage, 400 a refusal)."""

    text: str = ""
    statuses: list[int] = field(default_factory=list)
    received: list[Transcription] = field(default_factory=list)
    base_url: str = ""

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self.transcriptions)
        return app

    async def transcriptions(self, request: web.Request) -> web.Response:
        reader = await request.multipart()
        data, file_name, content_type = b"", "", ""
        fields: dict[str, str] = {}
        while (part := await reader.next()) is not None:
            assert isinstance(part, BodyPartReader)
            if part.name == "file":
                data = await part.read()
                file_name = part.filename or ""
                content_type = part.headers.get("Content-Type", "")
            else:
                fields[part.name or ""] = await part.text()
        self.received.append(
            Transcription(
                data, file_name, content_type, fields, request.headers.get("Authorization", "")
            )
        )
        if self.statuses:
            status = self.statuses.pop(0)
            error = {"message": "unavailable", "type": "server_error"}
            return web.json_response({"error": error}, status=status)
        if not data or fields.get("model") is None:
            return web.json_response({"error": {"message": "file and model required"}}, status=400)
        return web.json_response({"text": self.text})
