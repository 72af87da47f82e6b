"""What a turn is given (dependencies, config) and what it reports back (outcome)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from conversation.dead_letters import DeadLetters, NoDeadLetters
from conversation.handoff.request import asks_for_person
from conversation.lease import ConversationLeases
from conversation.media.reader import MediaReader
from conversation.metrics import NO_TURN_METRICS, TurnMetrics
from conversation.opt_out import DEFAULT_OPT_WORDS, OptWords
from core.object_store import ObjectStore
from delivery.contract import Sender
from delivery.presence import NO_PRESENCE, Presence
from hours.cache import BusinessHoursCache
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.usage import UsageStore
from turn.activations import ActivationRecorder
from turn.agent_loop import MAX_TOOL_CALLS_PER_ANSWER, ToolCallRecord
from turn.model import ModelUsage
from turn.model_input import InputCaps
from turn.prompt import PrefixCache
from turn.providers.registry import ModelRegistry
from turn.skill_catalog import SkillCatalogCache
from turn.tools.page_cache import StoredPageCache
from turn.tools.registry import turn_tools


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class TurnConfig:
    default_persona: str
    max_steps: int = 4
    max_tool_calls_per_answer: int = MAX_TOOL_CALLS_PER_ANSWER
    # skill_manage calls that store something, per turn (a burst's one model turn).
    max_skill_writes: int = 5
    max_injected_skills: int = 3
    reference_max_bytes: int = 16_384
    input_caps: InputCaps = field(default_factory=InputCaps)
    history_limit: int = 10
    # Bursts one job answers before it leaves the rest to the conversation's next job.
    max_batches_per_job: int = 20
    # The size caps of the skills the agent writes, shared with uploads.
    package_limits: PackageLimits = DEFAULT_LIMITS
    # The customer's opt-out / opt-in words (conversation.opt_out): confirmed, never answered.
    opt_words: OptWords = DEFAULT_OPT_WORDS
    # Follow-ups scheduled and not yet sent, per conversation (schedule_followup).
    followups_per_conversation: int = 3


@dataclass
class TurnDeps:
    pool: Any  # asyncpg.Pool
    store: ObjectStore
    models: ModelRegistry  # the agent's (provider, model name) -> Model
    sender: Sender
    recorder: ActivationRecorder
    catalog: SkillCatalogCache
    config: TurnConfig
    leases: ConversationLeases
    usage: UsageStore
    clock: Callable[[], datetime] = utc_now
    metrics: TurnMetrics = NO_TURN_METRICS
    dead_letters: DeadLetters = field(default_factory=NoDeadLetters)
    page_cache: StoredPageCache = field(default_factory=StoredPageCache)
    prefixes: PrefixCache = field(default_factory=lambda: PrefixCache(turn_tools()))
    # Whether a burst asks for a person (conversation.handoff.request): a handoff before any
    # model call.
    asks_for_person: Callable[[str], bool] = asks_for_person
    # Each org's business hours (hours.cache): the after-hours acknowledgement and away message.
    hours: BusinessHoursCache = field(default_factory=BusinessHoursCache)
    # Reads the media of a burst's media messages (None: described only, as before).
    media: MediaReader | None = None
    # The customer's message read and the typing indicator while the model answers.
    presence: Presence = NO_PRESENCE


class MessageOutcome(StrEnum):
    """What became of a job's own message."""

    REPLIED = "replied"  # answered by this job
    REDELIVERED = "redelivered"  # its reply, committed before, was delivered now
    QUEUED = "queued"  # the conversation's lease holder answers or answered it
    STORED = "stored"  # kept as context, no reply expected


@dataclass(frozen=True)
class TurnOutcome:
    """What happened to one job's message, for logs, the demo transcript and tests."""

    # stored: kept as context, no reply expected (a non-text message on a number that does
    # not answer those); queued: the conversation's lease holder answers it.
    status: MessageOutcome
    inbound_id: uuid.UUID
    reply: str | None = None
    matched: tuple[tuple[str, uuid.UUID], ...] = ()
    probes: tuple[str, ...] = ()
    capped: tuple[str, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    prefix_sha256: str | None = None
    usage: ModelUsage | None = None  # provider, model, tokens, cache, latency of the turn
    steps: int = 0
    # External ids of the messages this reply answered (a burst may be several).
    answered: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
