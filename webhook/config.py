"""What the webhook needs to know: its secrets and limits (built from Settings by the CLI)."""

from __future__ import annotations

from dataclasses import dataclass, field

from inbox.reactions import DEFAULT_NEGATIVE_REACTIONS, negative_set


@dataclass(frozen=True)
class WebhookConfig:
    # Meta app secret: X-Hub-Signature-256 of every Cloud API POST. None: endpoint refuses (503).
    app_secret: str | None = field(default=None, repr=False)
    # The token typed into Meta's webhook settings, echoed back by the GET handshake.
    verify_token: str | None = field(default=None, repr=False)
    # WAHA's webhook hmac.key for the sessions whose channel has no key of its own (those are
    # in the database, see webhook.waha_keys). None: such sessions are refused (503).
    waha_hmac_key: str | None = field(default=None, repr=False)
    max_body_bytes: int = 1_048_576  # larger bodies get 413 before anything is parsed
    # Each job starts this long after its message arrived: a burst gets one reply.
    coalesce_ms: int = 0
    # Where to ask WAHA for the phone behind a never-seen `@lid` (None: do not ask).
    waha_base_url: str | None = None
    waha_api_key: str | None = field(default=None, repr=False)
    lid_lookup_timeout_s: float = 2.0
    # The workers transcribe voice notes (SKILLET_TRANSCRIBE_BASE_URL set) or ask for text
    # (SKILLET_VOICE_ASK_TO_TYPE): a voice note is then always answered.
    transcribes_voice: bool = False
    # The reactions that count against the skills of the reply they react to, as compared
    # (inbox.reactions.negative_set of SKILLET_NEGATIVE_REACTIONS).
    negative_reactions: frozenset[str] = field(
        default_factory=lambda: negative_set(DEFAULT_NEGATIVE_REACTIONS)
    )
