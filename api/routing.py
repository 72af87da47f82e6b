"""What a route is: method, path, the least role that may call it, its audit action, handler.

One table of these (api.app.ROUTES) registers the aiohttp routes and writes the OpenAPI
document; a test holds the router and the document equal.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from api.keys import Role
from api.model_prices import ModelPrices
from api.rate_limit import DEFAULT_RATE_LIMITS, Counters, RateLimits
from channels.connect import Prover
from consolidation.backends import LexicalBackend, SimilarityBackend
from core.clock import Clock
from core.errors import SkilletError
from core.object_store import ObjectStore
from core.tenancy import org_connection
from delivery.presence import NO_PRESENCE, Presence
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.usage import UsageStore


@dataclass(frozen=True)
class Principal:
    """The caller, as its key says: one org, one role; `prefix` is the audit actor."""

    organization_id: uuid.UUID
    role: Role
    key_id: uuid.UUID  # a person's id when `person_id` is set
    prefix: str  # a person: `person:<uuid>`
    person_id: uuid.UUID | None = None  # signed in with an e-mail and password
    name: str | None = None  # the person's name (a console session's), for pages


@dataclass(frozen=True)
class ApiDeps:
    """Opened and closed by the process (worker.api_process); the app only uses them."""

    pool: Any  # asyncpg.Pool as skillet_api: row-level security applies
    store: ObjectStore
    queue: Any  # arq.ArqRedis (requeue)
    clock: Clock
    usage: UsageStore
    package_limits: PackageLimits = DEFAULT_LIMITS  # uploads (worker.settings)
    # Failed-authentication and per-key counters (Redis); None limits nothing (api.rate_limit).
    rate_limit_counters: Counters | None = None
    rate_limits: RateLimits = DEFAULT_RATE_LIMITS
    events_allow_private_urls: bool = False  # SKILLET_EVENTS_ALLOW_PRIVATE_URLS
    # Proves a number's ownership before it is connected (channels.connect); None: the API
    # connects no number (channel_not_verified).
    prover: Prover | None = None
    # What a rehearsal replays as the turn does: the per-turn cap (SKILLET_MAX_INJECTED_SKILLS)
    # and its default period (SKILLET_REHEARSAL_DAYS).
    max_injected_skills: int = 3
    rehearsal_days: int = 30
    # What `close_to`, `neighbours` and a draft's approval measure with (similarity.choice;
    # the worker's SKILLET_SIMILARITY_* settings). Lexical unless the process says otherwise.
    similarity: SimilarityBackend = field(default_factory=LexicalBackend)
    # SKILLET_CONSOLE_PUBLIC_URL: invitation links are absolute with it.
    console_public_url: str | None = None
    # SKILLET_MODEL_PRICES: the Painel's cost in R$ (empty: tokens without a cost).
    model_prices: ModelPrices = field(default_factory=dict)
    # Marks read the new customer messages of a conversation an editor or admin opens in the
    # console (delivery.presence; NO_PRESENCE: nothing is marked).
    presence: Presence = NO_PRESENCE


DEPS = web.AppKey("deps", ApiDeps)

Reply = dict[str, Any]
# A route answers JSON (a Reply), or a file it built itself (a stored media's bytes).
Answer = Reply | web.StreamResponse
Handler = Callable[[web.Request, Principal], Awaitable[Answer]]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Handler
    role: Role
    summary: str
    # Dotted audit action of a mutating route (`skill.install`); None for reads.
    action: str | None = None
    status: int = 200  # on success
    # Refusals the callee already wrote to the audit log in a transaction of its own.
    refusals_audited_by_callee: tuple[type[SkilletError], ...] = ()
    # Query parameters and request body, for the OpenAPI document.
    query: tuple[str, ...] = ()
    body: str | None = None  # "json" | "zip"
    tags: tuple[str, ...] = field(default=())
    # A route answering a file, not JSON: its OpenAPI 200 is binary of this type.
    produces: str | None = None

    @property
    def operation_id(self) -> str:
        return self.handler.__name__


def org_db(request: web.Request, principal: Principal) -> Any:
    """A pooled connection bound to the caller's org (async context manager)."""
    return org_connection(request.app[DEPS].pool, principal.organization_id)


def deps_of(request: web.Request) -> ApiDeps:
    return request.app[DEPS]
