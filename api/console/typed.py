"""A refused form comes back as it was typed, its refusal beside the field it names.

A page shown after a refused POST gets two helpers: `kept(action, name, default)` is what
the person typed in field `name` of the form posting to `action` (`default`, the stored
value, for every other form of the page), and `field_error(action, name)` is the refusal
beside that field when its code names it (`FIELD_OF_CODE`); a code that names no field stays
in the page's refusal box on top. A file field is never typed back (a browser cannot set one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from markupsafe import Markup

# The form field a refusal's code is about (the console's forms name their fields as the
# API's bodies do).
FIELD_OF_CODE: Final = {
    "business_hours_invalid": "business_hours",
    "timezone_unknown": "timezone",
    "closed_dates_invalid": "closed_dates",
    "after_hours_invalid": "after_hours",
    "channel_not_verified": "address",
    "channel_exists": "address",
    "channel_claimed_elsewhere": "address",
    "invalid_address": "address",
    "invalid_credentials": "access_token",
    "invalid_access_token": "access_token",
    "invalid_waba_id": "waba_id",
    "invalid_waha_base_url": "waha_base_url",
    "invalid_waha_api_key": "waha_api_key",
    "invalid_email": "email",
    "email_taken": "email",
    "invalid_name": "name",
    "person_name": "name",
    "invalid_prompt": "system_prompt",
    "invalid_model": "model_name",
    "invalid_handoff_text": "handoff_ack",
    "reply_text_invalid": "text",
    "outside_service_window": "text",
    "template_params_mismatch": "params",
    "template_not_found": "template",
    "template_not_approved": "template",
}


@dataclass(frozen=True)
class Posted:
    """The refused POST: where it went, what it carried, the field its refusal names."""

    action: str
    fields: dict[str, str]
    field: str | None
    message: str


def posted(action: str, form: Any, code: str, message: str) -> Posted:
    fields = {k: v for k, v in (form or {}).items() if isinstance(v, str)}
    return Posted(action, fields, FIELD_OF_CODE.get(code), message)


def helpers(refused: Posted | None) -> dict[str, Callable[..., Any]]:
    """`kept` and `field_error` for a page's templates (inert when nothing was refused)."""

    def kept(action: str, name: str, default: object = "") -> str:
        if refused is not None and refused.action == action and name in refused.fields:
            return refused.fields[name]
        return "" if default is None else str(default)

    def field_error(action: str, name: str) -> Markup:
        if refused is None or not beside_a_field(refused):
            return Markup("")
        if refused.action != action or refused.field != name:
            return Markup("")
        return Markup('<p class="campo-erro" id="erro-{}" role="alert">{}</p>').format(
            name, refused.message
        )

    return {"kept": kept, "field_error": field_error}


def beside_a_field(refused: Posted | None) -> bool:
    """Whether the refusal is shown beside a field the refused form carried."""
    return refused is not None and refused.field is not None and refused.field in refused.fields
