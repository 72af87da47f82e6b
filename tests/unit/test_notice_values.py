"""The console's notifications, pure: the count names each conversation once, a notice never
carries a message's text, and the sound is the small file tools/notice_sound.py makes."""

from __future__ import annotations

import importlib.util
import struct
import uuid
import wave
from datetime import UTC, datetime
from pathlib import Path

from api.console.notices import notices_body
from api.notice_queries import NoticeRow

ROOT = Path(__file__).resolve().parents[2]
SOUND = ROOT / "api" / "console" / "static" / "aviso.wav"


def test_the_count_names_each_conversation_once() -> None:
    one, two = uuid.uuid4(), uuid.uuid4()
    at = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    rows = [
        NoticeRow(one, "5511912345678", "Ana", "message", at),
        NoticeRow(one, "5511912345678", "Ana", "transfer", at),
        NoticeRow(two, "5521987654321", None, "waiting", at),
    ]
    body = notices_body(rows)
    assert body["count"] == 2
    assert body["items"] == [
        {"id": str(one), "kind": "message", "at": at.isoformat(), "who": "Ana · +55 11 91234-5678"},
        {
            "id": str(one),
            "kind": "transfer",
            "at": at.isoformat(),
            "who": "Ana · +55 11 91234-5678",
        },
        {"id": str(two), "kind": "waiting", "at": at.isoformat(), "who": "+55 21 98765-4321"},
    ]
    assert notices_body([]) == {"count": 0, "items": []}
    # A message found on taking a conversation counts, and is never told.
    found = NoticeRow(two, "5521987654321", None, "message", at, told=False)
    assert notices_body([found]) == {"count": 1, "items": []}


def test_the_sound_is_short_small_and_what_the_tool_makes() -> None:
    with wave.open(str(SOUND), "rb") as file:
        assert (file.getnchannels(), file.getsampwidth()) == (1, 2)
        seconds = file.getnframes() / file.getframerate()
        frames = file.readframes(file.getnframes())
    assert 0.1 <= seconds <= 1.0
    assert SOUND.stat().st_size <= 32 * 1024
    spec = importlib.util.spec_from_file_location(
        "notice_sound", ROOT / "tools" / "notice_sound.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    made = tool.samples()
    assert frames == struct.pack(f"<{len(made)}h", *made)
