"""A person's action on a conversation, refused (take over, release, reply, send a template).

SkilletError (core.errors)
├── ConversationNotFound    conversation_not_found: no such conversation in this org
├── ConversationConflict    the conversation's state refuses it now: held_by_other (another
│                           person holds it), outside_service_window (the customer's 24 hours
│                           are over; `extra["templates"]`: what may still be sent),
│                           contact_opted_out (PARAR)
└── ConversationRefused     what was asked is wrong: reply_text_invalid, templates_unsupported,
                            template_not_found, template_not_approved, template_params_mismatch

pt-BR messages that say what to do. The API answers 404, 409 and 422; the CLI prints the code
and the message.
"""

from __future__ import annotations

from typing import Any

from core.errors import SkilletError


class ConversationNotFound(SkilletError):
    code = "conversation_not_found"

    def __init__(self) -> None:
        super().__init__("A conversa não existe nesta organização.")


class ConversationConflict(SkilletError):
    code = "conversation_conflict"

    def __init__(self, code: str, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code)
        # More of the refusal beside its code and message (outside_service_window's templates).
        self.extra = dict(extra or {})


class ConversationRefused(SkilletError):
    code = "conversation_refused"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)
