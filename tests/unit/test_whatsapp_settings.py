"""WhatsApp settings: secrets from env stay hidden; the webhook and senders get plain values."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from cli.channels import webhook_config
from worker.settings import Settings

SECRET = "app-secret-que-nao-pode-vazar"


def test_secrets_come_from_env_and_stay_out_of_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLET_WHATSAPP_APP_SECRET", SECRET)
    monkeypatch.setenv("SKILLET_WAHA_HMAC_KEY", "chave-waha")
    monkeypatch.setenv("SKILLET_WHATSAPP_ACCESS_TOKEN", "token-graph")
    monkeypatch.setenv("SKILLET_GRAPH_API_BASE_URL", "http://127.0.0.1:9/v23.0")
    settings = Settings()
    assert isinstance(settings.whatsapp_app_secret, SecretStr)
    assert settings.graph_api_base_url == "http://127.0.0.1:9/v23.0"
    for text in (repr(settings), str(settings)):
        assert SECRET not in text and "chave-waha" not in text and "token-graph" not in text
    config = webhook_config(settings)
    assert (config.app_secret, config.waha_hmac_key, config.verify_token) == (
        SECRET,
        "chave-waha",
        None,
    )
    assert SECRET not in repr(config)


def test_an_empty_secret_counts_as_unset() -> None:
    config = webhook_config(Settings(whatsapp_app_secret=SecretStr(""), waha_hmac_key=None))
    assert config.app_secret is None and config.waha_hmac_key is None


def test_defaults_keep_the_webhook_closed_and_replies_unrouted_to_the_log() -> None:
    settings = Settings()
    assert settings.whatsapp_app_secret is None and settings.waha_hmac_key is None
    assert settings.unrouted_replies == "log"
    assert settings.customer_service_window_s == 24 * 3600


def test_unknown_unrouted_policy_is_refused() -> None:
    with pytest.raises(ValidationError):
        Settings(unrouted_replies="drop")
