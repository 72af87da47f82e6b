"""What a tool is: a name, a description, a pydantic `Args` model and an async `run`.

A tool never raises for anything the model did: a refusal is a `ToolResult.error` whose
pt-BR message names the rule, so the model can correct itself in the same turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from core.object_store import ObjectStore
from delivery.outbound_choices import OutboundChoices
from delivery.outbound_file import OutboundFile
from skills.models import LoadedSkill
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.usage import UsageStore
from turn.tools.followup_book import FollowupBook
from turn.tools.page_cache import StoredPageCache


@dataclass(frozen=True)
class ToolResult:
    """What goes back to the model; `error_code` set means `content` is a teaching message."""

    content: str
    error_code: str | None = None

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        return cls(content=f"[erro {code}] {message}", error_code=code)


@dataclass
class TurnLedger:
    """What one turn's tools did: writes spent (skill_manage calls that store something),
    skills whose files were read (counted as views by the reply's commit) and whether the
    model handed the conversation to a person (handoff_to_human)."""

    max_writes: int
    writes: int = 0
    viewed: list[str] = field(default_factory=list)
    # (skill, path) of each read_skill_reference read: per-file counts, by the reply's commit.
    read_files: list[tuple[str, str]] = field(default_factory=list)
    # A file's content (sha256) -> bytes of it shown contiguously from its start: by content,
    # so a file carried unchanged into the next version stays read.
    read_until: dict[str, int] = field(default_factory=dict)
    # Set by handoff_to_human: the reply's commit hands the conversation to a person.
    handoff_reason: str | None = None
    # send_skill_file's choices: committed with the reply, sent after its text, in order.
    files: list[OutboundFile] = field(default_factory=list)
    # send_choices' one set: committed with the reply, sent after its text and its files.
    choices: OutboundChoices | None = None

    def record_read(self, sha256: str, start: int, end: int) -> None:
        if start <= self.read_until.get(sha256, 0):
            self.read_until[sha256] = max(self.read_until.get(sha256, 0), end)

    def read_whole(self, sha256: str, size: int) -> bool:
        """Whether this turn showed the model (or the model wrote) every byte of that file."""
        return self.read_until.get(sha256, 0) >= size

    def take_write(self) -> bool:
        """Count one write; False once the turn has used them all."""
        if self.writes >= self.max_writes:
            return False
        self.writes += 1
        return True


@dataclass(frozen=True)
class ToolContext:
    """One turn's view for its tools. The org comes from the job row, never the model."""

    organization_id: uuid.UUID
    pool: Any  # asyncpg.Pool
    store: ObjectStore
    usage: UsageStore
    matched: Sequence[LoadedSkill]  # skills injected this turn (read_skill_reference)
    installed: Sequence[LoadedSkill]  # the org's index (skill_view)
    max_read_bytes: int  # one file served to the model
    ledger: TurnLedger
    conversation_id: uuid.UUID | None = None
    job_id: str = ""
    package_limits: PackageLimits = DEFAULT_LIMITS  # the caps of what skill_manage writes
    # The worker's pages already read (shared by its turns); a fresh one keeps them per turn.
    page_cache: StoredPageCache = field(default_factory=StoredPageCache)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    # Follow-ups scheduled and not yet sent, per conversation (schedule_followup).
    max_followups: int = 3
    # Where schedule_followup books them: the conversation's (None outside a conversation).
    followups: FollowupBook | None = None


ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True)
class Tool(Generic[ArgsT]):
    """One tool. Its module defines `TOOL = Tool(...)`; the registry finds it there."""

    name: str
    description: str
    args: type[ArgsT]
    run: Callable[[ToolContext, ArgsT], Awaitable[ToolResult]]
