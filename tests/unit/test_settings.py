"""Unit tests of worker.settings: env vars read, typos refused, secrets hidden, frozen."""

from __future__ import annotations

import os

import pytest
from pydantic import SecretStr, ValidationError

from worker.settings import Settings

UNPREFIXED = (
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT_URL",
    "S3_BUCKET",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)
SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY-segredo"


@pytest.fixture(autouse=True)
def no_env_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's env must not decide what these tests see."""
    for name in UNPREFIXED:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name in list(os.environ):
        if name.upper().startswith("SKILLET_"):
            monkeypatch.delenv(name, raising=False)


def test_infrastructure_endpoints_come_from_their_conventional_env_vars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://app@db.internal:5432/prod")
    monkeypatch.setenv("REDIS_URL", "redis://cache.internal:6379/2")
    monkeypatch.setenv("S3_ENDPOINT_URL", "https://s3.example.com")
    monkeypatch.setenv("S3_BUCKET", "skills-prod")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    settings = Settings()
    assert settings.database_url == "postgresql://app@db.internal:5432/prod"
    assert settings.redis_url == "redis://cache.internal:6379/2"
    assert settings.s3_endpoint_url == "https://s3.example.com"
    assert settings.s3_bucket == "skills-prod"
    assert settings.aws_access_key_id == "AKIAEXAMPLE"
    assert isinstance(settings.aws_secret_access_key, SecretStr)
    assert settings.aws_secret_access_key.get_secret_value() == SECRET


def test_the_other_knobs_come_from_skillet_prefixed_env_vars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKILLET_MAX_JOBS", "7")
    monkeypatch.setenv("SKILLET_QUEUE_NAME", "skillet:test")
    monkeypatch.setenv("SKILLET_MODEL_MAX_STEPS", "6")
    monkeypatch.setenv("SKILLET_LOG_FORMAT", "json")
    monkeypatch.setenv("SKILLET_ACTIVATION_SHUTDOWN_FLUSH_S", "1.5")
    settings = Settings()
    assert settings.max_jobs == 7
    assert settings.queue_name == "skillet:test"
    assert settings.model_max_steps == 6
    assert settings.log_format == "json"
    assert settings.activation_shutdown_flush_s == 1.5


def test_an_unprefixed_knob_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_JOBS", "99")
    assert Settings().max_jobs == Settings.model_fields["max_jobs"].default


def test_keyword_overrides_by_field_name_win_over_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://from-env:6379/0")
    monkeypatch.setenv("SKILLET_MAX_JOBS", "7")
    settings = Settings(redis_url="redis://override:6379/0", max_jobs=3)
    assert settings.redis_url == "redis://override:6379/0"
    assert settings.max_jobs == 3


def test_a_misspelled_keyword_argument_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(max_jobz=3)  # type: ignore[call-arg]
    assert caught.value.errors()[0]["type"] == "extra_forbidden"
    assert caught.value.errors()[0]["loc"] == ("max_jobz",)


def test_an_invalid_env_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLET_MAX_JOBS", "muitos")
    with pytest.raises(ValidationError):
        Settings()


def test_the_secret_key_never_appears_in_repr_or_str(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    from_env = Settings()
    from_kwargs = Settings(aws_access_key_id="AKIAEXAMPLE", aws_secret_access_key=SecretStr(SECRET))
    for settings in (from_env, from_kwargs):
        assert SECRET not in repr(settings)
        assert SECRET not in str(settings)
        assert SECRET not in repr(settings.aws_secret_access_key)
        assert settings.aws_secret_access_key is not None
        assert settings.aws_secret_access_key.get_secret_value() == SECRET


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.max_jobs = 50
    with pytest.raises(ValidationError):
        settings.database_url = "postgresql://elsewhere/db"
    assert settings.max_jobs == Settings.model_fields["max_jobs"].default


@pytest.mark.parametrize("seconds", [61, 3600])
def test_a_health_check_interval_above_a_minute_is_refused(seconds: int) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(health_check_interval_s=seconds)
    assert caught.value.errors()[0]["loc"] == ("health_check_interval_s",)


def test_a_health_check_interval_of_a_minute_is_accepted() -> None:
    assert Settings(health_check_interval_s=60).health_check_interval_s == 60


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_jobs", 0),
        ("model_max_steps", 0),
        ("log_format", "xml"),
        ("poll_delay_s", 0),
        ("events_retention_days", 0),
    ],
)
def test_out_of_range_values_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        Settings(**{field: value})  # type: ignore[arg-type]


def test_settled_events_are_kept_thirty_days_unless_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().events_retention_days == 30
    monkeypatch.setenv("SKILLET_EVENTS_RETENTION_DAYS", "7")
    assert Settings().events_retention_days == 7


def test_a_password_inside_a_connection_url_is_not_printed() -> None:
    settings = Settings(
        database_url="postgresql://app:db-senha-123@db.internal/prod",
        redis_url="redis://:redis-senha-456@cache.internal:6379/0",
    )
    for text in (repr(settings), str(settings)):
        assert "db-senha-123" not in text
        assert "redis-senha-456" not in text


def test_the_admin_api_listens_on_loopback_8081_unless_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (Settings().api_host, Settings().api_port) == ("127.0.0.1", 8081)
    monkeypatch.setenv("SKILLET_API_HOST", "0.0.0.0")
    monkeypatch.setenv("SKILLET_API_PORT", "9081")
    assert (Settings().api_host, Settings().api_port) == ("0.0.0.0", 9081)
    with pytest.raises(ValidationError):
        Settings(api_port=70_000)


def test_package_limits_default_to_the_seed_and_come_from_their_env_vars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from skills.package.limits import DEFAULT_LIMITS, PackageLimits

    assert Settings().package_limits() == DEFAULT_LIMITS == PackageLimits(64, 5 << 20, 1 << 20)
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_FILES", "128")
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_BYTES", str(8 << 20))
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_FILE_BYTES", str(2 << 20))
    assert Settings().package_limits() == PackageLimits(128, 8 << 20, 2 << 20)
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_FILE_BYTES", str(9 << 20))
    with pytest.raises(ValidationError, match="package_max_file_bytes"):
        Settings()
