"""The API's own refusals, and the HTTP status every error code answers with.

SkilletError (core.errors)
└── ApiError     a refusal decided here, with its status: unauthorized (401), forbidden
                 (403), not_found (404), invalid_json / invalid_cursor / invalid_limit (400),
                 invalid_input, invalid_days / invalid_agent_id and the agents' and
                 channels' codes (422), skill_too_large (413), dead_letter_* (404 / 409)
    └── RateLimited   api.rate_limit: too_many_failed_auth / too_many_requests (429, with
                      Retry-After)

The other packages' refusals keep their codes (the CLI's) and get a status by code below;
a package refused by the parser is 422; whatever may pass on a retry (Postgres, S3) is 503.
A 5xx answers with a fixed pt-BR message by code (`public_message`), never the error's own
text, which may quote the driver or the object store; that text goes to the log only.
"""

from __future__ import annotations

from typing import Any

from conversation.errors import ConversationConflict, ConversationNotFound, ConversationRefused
from core.errors import SkilletError
from skills.package import SkillPackageError

# Codes raised by skills/, channels/, events/ and drafts, as the CLI prints them.
_STATUS_BY_CODE = {
    "organization_not_found": 404,
    "skill_not_installed": 404,
    "catalog_skill_not_found": 404,
    "draft_not_found": 404,
    "skill_already_installed": 409,
    "skill_name_reserved": 409,
    "skill_base_moved": 409,
    "base_required": 422,
    "skill_name_mismatch": 422,
    "skill_version_not_found": 404,
    "skill_file_not_found": 404,
    "draft_base_moved": 409,
    "proposal_not_found": 404,
    "suggestion_not_found": 404,
    "suggestion_value_not_found": 404,
    "proposal_decided": 409,
    "proposal_base_moved": 409,
    "rehearsal_busy": 429,
    "rehearsal_days_invalid": 422,
    "confirmation_required": 409,
    "events_url_refused": 422,
    "events_secret_invalid": 422,
    "events_secret_missing": 422,
    "business_hours_invalid": 422,
    "timezone_unknown": 422,
    "closed_dates_invalid": 422,
    "after_hours_invalid": 422,
    "channel_not_verified": 422,
    "channel_claimed_elsewhere": 409,
    "channel_exists": 409,
    "invalid_credentials": 422,
    "invalid_access_token": 422,
    "invalid_waba_id": 422,
    "invalid_waha_base_url": 422,
    "invalid_waha_api_key": 422,
}


class ApiError(SkilletError):
    code = "api_error"

    def __init__(
        self, status: int, code: str, message: str, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        # More of the refusal's body beside error and message (e.g. outside_service_window's
        # `templates`: what may still be sent).
        self.extra = dict(extra or {})


def status_of(exc: SkilletError) -> int:
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, ConversationNotFound):
        return 404
    if isinstance(exc, ConversationConflict):
        return 409
    if isinstance(exc, ConversationRefused):
        return 422
    if isinstance(exc, SkillPackageError):
        return 422
    if exc.retryable:
        return 503
    return _STATUS_BY_CODE.get(exc.code, 500)


_PUBLIC_MESSAGES = {
    "database_unavailable": "O banco de dados não respondeu; tente de novo em alguns segundos.",
    "database_rejected": "O banco de dados recusou este pedido; confira os dados enviados. "
    "Se o erro continuar, avise o suporte.",
    "storage_unavailable": "O armazenamento de arquivos não respondeu; tente de novo em "
    "alguns segundos.",
}
INTERNAL_ERROR_MESSAGE = "Erro interno; tente de novo."


def public_message(exc: SkilletError) -> str:
    """What the caller reads: a refusal's own message; for a failure (5xx) a fixed text."""
    if isinstance(exc, ApiError) or status_of(exc) < 500:
        return exc.message
    return _PUBLIC_MESSAGES.get(exc.code, INTERNAL_ERROR_MESSAGE)


def not_found(code: str, message: str) -> ApiError:
    return ApiError(404, code, message)


def invalid(code: str, message: str) -> ApiError:
    return ApiError(422, code, message)


def conflict(code: str, message: str, extra: dict[str, Any] | None = None) -> ApiError:
    return ApiError(409, code, message, extra)
