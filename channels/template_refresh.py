"""Which token and WABA a number's template sync uses, refused clearly when it has none.

The sync itself is three steps with no connection held across the network: read the number
and its token (a connection), list the WABA's templates (channels.template_sync, HTTP only),
store them (a connection, channels.template_queries.replace_templates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from channels.models import Channel
from channels.template_sync import TemplateSyncError
from core.channel_kind import ChannelKind


@dataclass(frozen=True)
class SyncTarget:
    waba_id: str
    access_token: str = field(repr=False)


def sync_target(channel: Channel, own_token: str | None, global_token: str | None) -> SyncTarget:
    """The WABA and token of `channel`'s sync: its own token, else the deployment's."""
    if channel.kind is not ChannelKind.CLOUD_API:
        raise TemplateSyncError(
            "Números WAHA não têm templates do WhatsApp: só a Cloud API da Meta os tem.",
            code="templates_unsupported",
            retryable=False,
        )
    if not channel.waba_id:
        raise TemplateSyncError(
            f"O número {channel.address} não tem WABA id: configure com `skillet channels set "
            f"--kind cloud_api --address {channel.address} --waba-id ID` (ou PATCH "
            "/v1/channels/cloud_api/{address} com waba_id).",
            code="waba_id_missing",
            retryable=False,
        )
    token = own_token or global_token
    if not token:
        raise TemplateSyncError(
            "Não há token de acesso para este número: dê um com --access-token-file ou "
            "defina SKILLET_WHATSAPP_ACCESS_TOKEN.",
            code="access_token_missing",
            retryable=False,
        )
    return SyncTarget(channel.waba_id, token)
