"""Building the worker's WhatsApp sender from Settings (part of the composition root)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import aiohttp
from pydantic import SecretStr

from channels.cloud_api import CloudApiConfig, CloudApiSender
from channels.connect import ProofConfig
from channels.dispatch import ChannelSender, FileSource, PoolCredentials
from channels.http import RetryPolicy
from channels.presence import ChannelPresence, OnFailure, PresenceConfig
from channels.waha import WahaConfig, WahaSender
from core.channel_kind import ChannelKind
from delivery.contract import LoggingSender
from delivery.presence import NO_PRESENCE, Presence
from worker.settings import Settings


def http_session(settings: Settings) -> aiohttp.ClientSession:
    """The HTTP client every sender shares; the composition root closes it."""
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=settings.send_timeout_s),
        raise_for_status=False,
    )


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None


def build_sender(
    settings: Settings,
    http: aiohttp.ClientSession,
    pool: Any = None,
    files: FileSource | None = None,
) -> ChannelSender:
    """Cloud API and WAHA senders behind one Sender that picks by the reply's channel; with
    `pool` (the worker's), each number's own credentials; with `files` (the skills' object
    store), a reply's file parts."""
    cloud_api, waha = kind_senders(settings, http)
    return ChannelSender(
        {ChannelKind.CLOUD_API.value: cloud_api, ChannelKind.WAHA.value: waha},
        unrouted=LoggingSender() if settings.unrouted_replies == "log" else None,
        window=timedelta(seconds=settings.customer_service_window_s),
        credentials=None if pool is None else PoolCredentials(pool),
        files=files,
    )


def build_presence(
    settings: Settings, http: aiohttp.ClientSession, pool: Any, on_failure: OnFailure
) -> Presence:
    """The read marks and typing indicator (NO_PRESENCE when both settings are off)."""
    if not (settings.read_receipts or settings.typing_indicator):
        return NO_PRESENCE
    cloud_api, waha = kind_senders(settings, http)
    config = PresenceConfig(
        read_receipts=settings.read_receipts,
        typing_indicator=settings.typing_indicator,
        timeout_s=settings.presence_timeout_s,
    )
    return ChannelPresence(pool, cloud_api, waha, config, on_failure=on_failure)


def kind_senders(
    settings: Settings, http: aiohttp.ClientSession
) -> tuple[CloudApiSender, WahaSender]:
    policy = RetryPolicy(
        max_attempts=settings.send_max_attempts,
        backoff_base_s=settings.send_backoff_base_s,
        backoff_max_s=settings.send_backoff_max_s,
        retry_after_max_s=settings.send_retry_after_max_s,
    )
    cloud_api = CloudApiSender(
        http,
        CloudApiConfig(
            base_url=settings.graph_api_base_url,
            access_token=_secret(settings.whatsapp_access_token),
            reply_context=settings.reply_with_context,
        ),
        policy,
    )
    waha = WahaSender(
        http,
        WahaConfig(
            base_url=settings.waha_base_url,
            api_key=_secret(settings.waha_api_key),
            reply_context=settings.reply_with_context,
            allow_private=settings.events_allow_private_urls,
        ),
        policy,
    )
    return cloud_api, waha


def proof_config(settings: Settings) -> ProofConfig:
    """Where a number's ownership is proven (channels.connect), with the global credentials
    as the fallback of a deployment with one business."""
    return ProofConfig(
        graph_api_base_url=settings.graph_api_base_url,
        waha_base_url=settings.waha_base_url,
        global_access_token=_secret(settings.whatsapp_access_token),
        global_waha_api_key=_secret(settings.waha_api_key),
    )
