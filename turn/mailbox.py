"""Per-conversation arrival order in Redis: who is waiting to be answered, and in what order.

The enqueuer adds each message (score = arrival time in ms, payload kept alongside), before
its job exists; the lease holder reads the whole mailbox, so it answers in arrival order
even a message whose own job has not run yet (or ran on a worker that crashed).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# Idle mailboxes vanish on their own; an active one is refreshed on every add.
MAILBOX_TTL_S = 7 * 24 * 3600


@dataclass(frozen=True)
class ConversationKey:
    organization_id: uuid.UUID
    channel: str
    contact_id: str

    @property
    def _base(self) -> str:
        return f"skillet:conv:{self.organization_id}:{self.channel}:{self.contact_id}"

    @property
    def order_key(self) -> str:
        return f"{self._base}:order"

    @property
    def payload_key(self) -> str:
        return f"{self._base}:payload"

    @property
    def lease_key(self) -> str:
        return f"{self._base}:lease"


@dataclass(frozen=True)
class MailboxEntry:
    message_id: str
    text: str
    sent_at: datetime
    received_at: datetime
    kind: str = "text"
    expects_reply: bool = True

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "text": self.text,
            "sent_at": self.sent_at.isoformat(),
        }
        if self.kind != "text" or not self.expects_reply:
            data.update(kind=self.kind, expects_reply=self.expects_reply)
        return json.dumps(data)

    @classmethod
    def from_json(cls, raw: str | bytes, received_ms: float) -> MailboxEntry:
        data = json.loads(raw)
        return cls(
            message_id=str(data["message_id"]),
            text=str(data["text"]),
            sent_at=datetime.fromisoformat(data["sent_at"]),
            received_at=datetime.fromtimestamp(received_ms / 1000, UTC),
            kind=str(data.get("kind", "text")),
            expects_reply=bool(data.get("expects_reply", True)),
        )


# Order and payloads together; order entries that lost their payload are dropped.
_READ_MAILBOX = """
local ranked = redis.call('zrange', KEYS[1], 0, -1, 'withscores')
local out = {}
for i = 1, #ranked, 2 do
    local payload = redis.call('hget', KEYS[2], ranked[i])
    if payload then
        table.insert(out, {ranked[i], ranked[i + 1], payload})
    else
        redis.call('zrem', KEYS[1], ranked[i])
    end
end
return out
"""


class Mailbox:
    def __init__(self, redis: Any) -> None:
        self._redis = redis

    async def add(self, key: ConversationKey, entry: MailboxEntry) -> datetime:
        """Idempotent: a redelivery keeps the first arrival time and payload.

        Returns the arrival time on record, the one every reader orders by.
        """
        score_ms = entry.received_at.timestamp() * 1000
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key.order_key, {entry.message_id: score_ms}, nx=True)
            pipe.hsetnx(key.payload_key, entry.message_id, entry.to_json())
            pipe.expire(key.order_key, MAILBOX_TTL_S)
            pipe.expire(key.payload_key, MAILBOX_TTL_S)
            pipe.zscore(key.order_key, entry.message_id)
            *_, stored_ms = await pipe.execute()
        return datetime.fromtimestamp(float(stored_ms) / 1000, UTC)

    async def entries(self, key: ConversationKey) -> list[MailboxEntry]:
        """Everything waiting, oldest arrival first (one round trip)."""
        ranked = await self._redis.eval(_READ_MAILBOX, 2, key.order_key, key.payload_key)
        return [MailboxEntry.from_json(raw, float(score)) for _, score, raw in ranked]

    async def remove(self, key: ConversationKey, message_ids: list[str]) -> None:
        if not message_ids:
            return
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zrem(key.order_key, *message_ids)
            pipe.hdel(key.payload_key, *message_ids)
            await pipe.execute()

    async def size(self, key: ConversationKey) -> int:
        return int(await self._redis.zcard(key.order_key))
