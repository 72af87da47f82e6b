"""No config that carries a key or token prints it: repr(), str() and f-strings of each."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from channels.cloud_api import CloudApiConfig
from channels.connect import Credentials, ProofConfig
from channels.credential_queries import ChannelSecrets, SendCredentials
from channels.waha import WahaConfig
from jobs.queue import redis_settings
from turn.providers.anthropic import AnthropicConfig
from turn.providers.http import JsonEndpoint, RetryPolicy
from turn.providers.openai_compat import OpenAIConfig
from webhook.config import WebhookConfig
from worker.settings import Settings

SECRET = "s3gr3d0-n40-1mpr1m1r"


def _printed(value: object) -> list[str]:
    # "%s" is how the standard library's logging formats its arguments.
    return [repr(value), str(value), f"{value}", f"{value!r}", "%s" % (value,)]  # noqa: UP031


CONFIGS: dict[str, Any] = {
    "anthropic": AnthropicConfig(model="claude", api_key=SECRET),
    "openai": OpenAIConfig(model="gpt", api_key=SECRET),
    "cloud_api": CloudApiConfig(base_url="https://graph.example", access_token=SECRET),
    "waha": WahaConfig(base_url="http://waha:3000", api_key=SECRET),
    "webhook": WebhookConfig(
        app_secret=SECRET, verify_token=SECRET, waha_hmac_key=SECRET, waha_api_key=SECRET
    ),
    "json_endpoint": JsonEndpoint(
        provider="anthropic",
        url="https://api.example/v1/messages",
        headers={"x-api-key": SECRET, "authorization": f"Bearer {SECRET}"},
        policy=RetryPolicy(),
        secrets=(SECRET,),
    ),
    "channel_secrets": ChannelSecrets(access_token=SECRET, waha_api_key=SECRET),
    "send_credentials": SendCredentials(access_token=SECRET, waha_api_key=SECRET),
    "credentials": Credentials(access_token=SECRET, waha_api_key=SECRET, waba_id="1"),
    "proof_config": ProofConfig(
        graph_api_base_url="https://graph.example",
        waha_base_url="http://waha:3000",
        global_access_token=SECRET,
        global_waha_api_key=SECRET,
    ),
    "redis_settings": redis_settings(f"redis://default:{SECRET}@cache.internal:6379/0"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_config_never_prints_its_secret(name: str) -> None:
    config = CONFIGS[name]
    for text in _printed(config):
        assert SECRET not in text
        assert type(config).__name__.lstrip("_") in text  # still a useful repr, not empty


def test_the_configs_still_carry_the_secret_they_hide() -> None:
    # The tests above would pass on a config that lost its secret: it must still be there.
    assert CONFIGS["anthropic"].api_key == SECRET
    assert CONFIGS["cloud_api"].access_token == SECRET
    assert CONFIGS["json_endpoint"].headers["x-api-key"] == SECRET
    assert CONFIGS["redis_settings"].password == SECRET
    assert "cache.internal" in repr(CONFIGS["redis_settings"])


def test_settings_print_no_secret_field_and_no_password_in_any_url() -> None:
    secret = SecretStr(SECRET)
    settings = Settings(
        database_url=f"postgresql://app:{SECRET}@db.internal/prod",
        redis_url=f"redis://:{SECRET}@cache.internal:6379/0",
        s3_endpoint_url=f"https://minio:{SECRET}@s3.internal",
        openai_base_url=f"https://user:{SECRET}@llm.internal/v1",
        waha_base_url=f"http://admin:{SECRET}@waha.internal:3000",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key=secret,
        aws_session_token=secret,
        anthropic_api_key=secret,
        openai_api_key=secret,
        whatsapp_app_secret=secret,
        whatsapp_verify_token=secret,
        waha_hmac_key=secret,
        whatsapp_access_token=secret,
        waha_api_key=secret,
    )
    for text in _printed(settings):
        assert SECRET not in text
        assert "db.internal" in text and "waha.internal" in text
