"""What `skillet dev up` hands to later commands: `{dev_dir}/dev.env`.

It holds only what `up` chose itself, never what the user configured (a configured URL may
carry a password): the URLs of the servers it started on ports of its own (forced embedded
servers) and the dev S3 keys when none are configured. Every command but `dev up` reads it
under the environment: a variable that is set wins over the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from worker.settings import Settings

FILE_NAME = "dev.env"
# The keys `dev up` starts weed with when none are configured; nowhere else are they a default.
DEV_ACCESS_KEY_ID = "skillet-dev"
DEV_SECRET_ACCESS_KEY = "skillet-dev-secret"
URL_VARIABLES = {"postgres": "DATABASE_URL", "redis": "REDIS_URL", "s3": "S3_ENDPOINT_URL"}


def dev_env_path(dev_dir: str | Path) -> Path:
    return Path(dev_dir) / FILE_NAME


def render_dev_env(values: Mapping[str, str]) -> str:
    """`NAME=value` lines; a value that would span lines or need quoting is refused."""
    for name, value in values.items():
        if not value or any(ch in value for ch in "\r\n\"'\\# \t"):
            raise ValueError(f"{name}: a dev.env value must be one plain word")
    return "".join(f"{name}={value}\n" for name, value in sorted(values.items()))


def write_dev_env(dev_dir: Path, values: Mapping[str, str]) -> Path | None:
    """Write the file (owner-only: it may hold keys), or remove it when there is nothing."""
    path = dev_env_path(dev_dir)
    if not values:
        path.unlink(missing_ok=True)
        return None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(render_dev_env(values))
    return path


def load_settings(*, read_dev_env: bool = True) -> Settings:
    """Settings from the environment, over `dev.env` when `dev up` left one."""
    settings = Settings()
    path = dev_env_path(settings.dev_dir)
    if not read_dev_env or not path.is_file():
        return settings
    # pydantic-settings' documented per-call dotenv file; its mypy plugin does not list it.
    return Settings(_env_file=path)  # type: ignore[call-arg]
