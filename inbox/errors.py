"""Errors of storing an inbound message.

SkilletError (core.errors)
└── UnknownOrganization   the message names an org that does not exist (not retryable)
"""

from __future__ import annotations

from core.errors import SkilletError


class UnknownOrganization(SkilletError):
    code = "unknown_organization"
    retryable = False
