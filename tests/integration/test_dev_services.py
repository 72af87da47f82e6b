"""The dev services launcher against real processes: weed mini, redis-server, Postgres."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aioboto3
import asyncpg
import pytest
import pytest_asyncio
from aiohttp import web
from botocore.exceptions import ClientError
from pydantic import SecretStr

from core.db import with_database
from dev.env import DEV_ACCESS_KEY_ID, DEV_SECRET_ACCESS_KEY, load_settings
from dev.processes import DevServicesError, free_port
from dev.services import down, ensure_bucket, status, up
from dev.urls import admin_database_url
from dev.weed import WeedProcess, start_weed
from webhook.server import start_site
from worker.resources import s3_client
from worker.settings import Settings

pytestmark = pytest.mark.integration

ADMIN_DATABASE_URL = os.environ.get(
    "SKILLET_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("SKILLET_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
ACCESS_KEY = "dev-services-test"
SECRET_KEY = "dev-services-test-secret"


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _s3_client(endpoint_url: str, access_key: str, secret_key: str) -> Any:
    return aioboto3.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
    )


async def test_start_weed_serves_s3_with_its_credentials_and_stops(tmp_path: Path) -> None:
    weed: WeedProcess = start_weed(tmp_path, free_port(), ACCESS_KEY, SECRET_KEY)
    try:
        assert weed.alive()
        assert (tmp_path / "data").is_dir()
        async with _s3_client(weed.endpoint_url, ACCESS_KEY, SECRET_KEY) as s3:
            await s3.create_bucket(Bucket="dev-services")
            await s3.put_object(Bucket="dev-services", Key="a/b.txt", Body=b"ola")
            response = await s3.get_object(Bucket="dev-services", Key="a/b.txt")
            async with response["Body"] as body:
                assert await body.read() == b"ola"
        async with _s3_client(weed.endpoint_url, ACCESS_KEY, "wrong-secret") as s3:
            with pytest.raises(ClientError):
                await s3.get_object(Bucket="dev-services", Key="a/b.txt")
    finally:
        weed.stop()
    assert not weed.alive()
    assert not _port_open(weed.ports.s3)
    assert not _port_open(weed.ports.master)


@pytest_asyncio.fixture(loop_scope="session")
async def dev_settings(tmp_path: Path) -> AsyncIterator[Settings]:
    """Machine Postgres/Redis, a fresh database name, S3 on a free port, dev_dir in tmp."""
    name = f"skillet_devtest_{uuid.uuid4().hex[:12]}"
    settings = Settings(
        database_url=with_database(ADMIN_DATABASE_URL, name),
        redis_url=REDIS_URL,
        s3_endpoint_url=f"http://127.0.0.1:{free_port()}",
        s3_bucket="skillet-devtest",
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SecretStr(SECRET_KEY),
        dev_dir=str(tmp_path / "dev"),
    )
    yield settings
    await down(settings)  # stops the weed this test's `up` started, if the test did not
    admin = await asyncpg.connect(admin_database_url(settings.database_url))
    try:
        await admin.execute(f'drop database if exists "{name}" with (force)')
    finally:
        await admin.close()


async def test_up_reuses_what_answers_starts_the_rest_and_down_stops_only_that(
    dev_settings: Settings,
) -> None:
    first = await up(dev_settings)
    assert first["postgres"]["action"] == "reused"
    assert first["postgres"]["database"] == "created"
    assert first["redis"]["action"] == "reused"
    assert first["s3"]["action"] == "started"
    assert first["s3"]["bucket"] == "created"

    again = await up(dev_settings)
    assert {service: entry["action"] for service, entry in again.items()} == {
        "postgres": "reused",
        "redis": "reused",
        "s3": "reused",
    }
    assert again["postgres"]["database"] == "exists"
    assert again["s3"]["bucket"] == "exists"

    report = await status(dev_settings)
    assert all(entry["answers"] for entry in report.values())
    assert report["s3"]["started_by_skillet"] is True
    assert report["postgres"]["started_by_skillet"] is False

    stopped = await down(dev_settings)
    assert stopped["s3"]["action"] == "stopped"
    assert stopped["postgres"]["action"] == "not started by skillet"
    assert stopped["redis"]["action"] == "not started by skillet"

    after = await status(dev_settings)
    assert after["s3"]["answers"] is False
    assert after["postgres"]["answers"] is True
    assert after["redis"]["answers"] is True


async def test_up_starts_redis_when_none_answers(tmp_path: Path) -> None:
    settings = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", dev_dir=str(tmp_path))
    try:
        started = await up(settings, services=("redis",))
        assert started["redis"]["action"] == "started"
        assert (await status(settings))["redis"]["answers"] is True
    finally:
        stopped = await down(settings)
    assert stopped["redis"]["action"] == "stopped"
    assert (await status(settings))["redis"]["answers"] is False


async def test_an_s3_that_answers_but_cannot_store_is_refused_with_a_clear_reason() -> None:
    # Like a `weed` whose checkout was deleted under it: bucket checks answer, writes hang.
    async def bucket(request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return web.Response(status=200)

    app = web.Application()
    app.router.add_route("HEAD", "/{bucket}", bucket)
    app.router.add_put("/{bucket}/{key:.*}", hang)
    runner, port = await start_site(app, "127.0.0.1", 0, shutdown_timeout_s=0.1)
    try:
        settings = Settings(
            s3_endpoint_url=f"http://127.0.0.1:{port}",
            aws_access_key_id="probe",
            aws_secret_access_key=SecretStr("probe-secret-key"),
            s3_bucket="probe",
        )
        with pytest.raises(DevServicesError, match="S3 answers but stored nothing in 1 s"):
            await ensure_bucket(settings, probe_timeout_s=1)
    finally:
        await runner.cleanup()


async def test_up_without_keys_starts_weed_with_the_dev_keys_and_hands_them_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(s3_endpoint_url=f"http://127.0.0.1:{free_port()}", dev_dir=str(tmp_path))
    assert settings.aws_access_key_id is None
    try:
        report = await up(settings, services=("s3",))
        assert report["s3"]["action"] == "started" and report["s3"]["bucket"] == "created"
        assert (tmp_path / "dev.env").read_text() == (
            f"AWS_ACCESS_KEY_ID={DEV_ACCESS_KEY_ID}\nAWS_SECRET_ACCESS_KEY={DEV_SECRET_ACCESS_KEY}\n"
        )
        # A later command (same dev dir, nothing in the environment) stores with them.
        monkeypatch.setenv("SKILLET_DEV_DIR", str(tmp_path))
        monkeypatch.setenv("S3_ENDPOINT_URL", settings.s3_endpoint_url)
        later = load_settings()
        assert later.aws_access_key_id == DEV_ACCESS_KEY_ID
        async with s3_client(later) as client:
            await client.put_object(Bucket=later.s3_bucket, Key="k", Body=b"ola")
        # Without them the server refuses (it accepts only the dev keys).
        async with _s3_client(settings.s3_endpoint_url, "other", "other-secret") as s3:
            with pytest.raises(ClientError):
                await s3.get_object(Bucket=later.s3_bucket, Key="k")
    finally:
        await down(settings)
    assert not (tmp_path / "dev.env").exists()
