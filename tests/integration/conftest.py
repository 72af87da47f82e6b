"""Real services for integration tests: a fresh database, a private `weed mini`, Redis."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext
from pydantic import SecretStr

from core.db import connect, with_database
from core.tenant_key import store_tenant_secret
from dev.processes import free_port
from dev.weed import WeedProcess, start_weed
from tests.integration.console_support import launched_chromium
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha, serving_in_thread
from tests.whatsapp_payloads import ACCESS_TOKEN, WAHA_API_KEY
from webhook.server import start_site
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.resources import Resources, open_resources
from worker.settings import Settings

ADMIN_DATABASE_URL = os.environ.get(
    "SKILLET_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("SKILLET_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
S3_ACCESS_KEY = "skillet-test"
S3_SECRET_KEY = "skillet-test-secret"
# What `skillet migrate` stores for the session's database and every process is given.
TENANT_SECRET = "skillet-test-tenant-secret-0123456789abcdef"

TRUNCATE_ALL = """
do $$ begin
    execute (
        select 'truncate ' || string_agg(format('%I', tablename), ', ')
               || ' restart identity cascade'
        from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations'
    );
end $$
"""


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeedProcess]:
    weed = start_weed(tmp_path_factory.mktemp("weed"), free_port(), S3_ACCESS_KEY, S3_SECRET_KEY)
    yield weed
    weed.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def database_url() -> AsyncIterator[str]:
    """A database of this session's own, migrated by the real runner, dropped at the end."""
    name = f"skillet_test_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(ADMIN_DATABASE_URL)
    await admin.execute(f'create database "{name}"')
    url = with_database(ADMIN_DATABASE_URL, name)
    conn = await connect(url)
    try:
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        await store_tenant_secret(conn, TENANT_SECRET)
    finally:
        await conn.close()
    yield url
    await admin.execute(f'drop database if exists "{name}" with (force)')
    await admin.close()


@pytest.fixture
def settings(database_url: str, s3_server: WeedProcess) -> Settings:
    """Settings for one test: its own arq queue, so tests never take each other's jobs."""
    return Settings(
        database_url=database_url,
        redis_url=REDIS_URL,
        s3_endpoint_url=s3_server.endpoint_url,
        s3_bucket="skillet-test",
        aws_access_key_id=S3_ACCESS_KEY,
        aws_secret_access_key=S3_SECRET_KEY,
        queue_name=f"skillet:test:{uuid.uuid4().hex}",
        poll_delay_s=0.01,
        retry_defer_s=0.0,
        job_completion_wait_s=5,
        activation_shutdown_flush_s=2.0,
        coalesce_ms=0,
        tenant_secret=SecretStr(TENANT_SECRET),
    )


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The CLI reads its Settings from the environment: point it at this test's services."""
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("REDIS_URL", settings.redis_url)
    monkeypatch.setenv("S3_ENDPOINT_URL", settings.s3_endpoint_url)
    monkeypatch.setenv("S3_BUCKET", settings.s3_bucket)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", settings.aws_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", settings.aws_secret_access_key.get_secret_value())
    monkeypatch.setenv("SKILLET_QUEUE_NAME", settings.queue_name)
    monkeypatch.setenv("SKILLET_POLL_DELAY_S", "0.01")
    monkeypatch.setenv("SKILLET_TENANT_SECRET", TENANT_SECRET)
    return settings


@pytest_asyncio.fixture(loop_scope="session")
async def db(settings: Settings) -> AsyncIterator[asyncpg.Connection]:
    """A connection to the test database; every table is emptied after the test."""
    conn = await connect(settings.database_url)
    yield conn
    await conn.execute(TRUNCATE_ALL)
    await conn.close()


@pytest_asyncio.fixture(loop_scope="session")
async def resources(settings: Settings, db: asyncpg.Connection) -> AsyncIterator[Resources]:
    """The worker's real composition root (pool, S3 client, recorder, catalog cache)."""
    opened = await open_resources(settings)
    yield opened
    await opened.close()


@pytest_asyncio.fixture(loop_scope="session")
async def fake_graph() -> AsyncIterator[FakeGraphApi]:
    """Meta's Graph API on a free port of 127.0.0.1 (send endpoint only)."""
    fake = FakeGraphApi(ACCESS_TOKEN)
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v23.0"
    yield fake
    await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="session")
async def fake_waha() -> AsyncIterator[FakeWaha]:
    """WAHA's sendText on a free port of 127.0.0.1."""
    fake = FakeWaha(WAHA_API_KEY)
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}"
    yield fake
    await runner.cleanup()


@pytest.fixture
def cli_graph(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGraphApi]:
    """Meta's Graph API for the CLI's ownership proofs (`channels add` of a Cloud API number),
    served from a thread of its own: the CLI's `main` runs its own event loop. The global
    token sees every number no other token owns."""
    with serving_in_thread(FakeGraphApi(ACCESS_TOKEN), "/v23.0") as fake:
        monkeypatch.setenv("SKILLET_GRAPH_API_BASE_URL", fake.base_url)
        monkeypatch.setenv("SKILLET_WHATSAPP_ACCESS_TOKEN", ACCESS_TOKEN)
        yield fake


@pytest.fixture
def whatsapp_settings(
    settings: Settings, fake_graph: FakeGraphApi, fake_waha: FakeWaha
) -> Settings:
    """Settings whose senders talk to the fakes, with fast retries."""
    return settings.model_copy(
        update={
            "graph_api_base_url": fake_graph.base_url,
            "whatsapp_access_token": SecretStr(ACCESS_TOKEN),
            "waha_base_url": fake_waha.base_url,
            "waha_api_key": SecretStr(WAHA_API_KEY),
            "send_backoff_base_s": 0.01,
            "send_backoff_max_s": 0.05,
        }
    )


@pytest_asyncio.fixture(loop_scope="session", scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One headless chromium for every console test of the run (a file may open its own)."""
    async with launched_chromium() as launched:
        yield launched


@pytest_asyncio.fixture(loop_scope="session")
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A desktop-sized pt-BR tab set, closed after each test."""
    opened = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    yield opened
    await opened.close()
