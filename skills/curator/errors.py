"""Errors of the usage store and the curator.

SkilletError (core.errors)
├── UsageWriteError       a usage increment/pin/restore could not be written (retryable)
├── CuratorRunError       a curator pass failed to read or to persist (retryable); nothing
│                         of the failing org chunk was saved, `.saved` lists the reports
│                         committed before it
├── SkillNotInstalled     pin/unpin/restore of a skill the org does not have installed
└── OrganizationNotFound  a curator run for an org that does not exist
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.errors import SkilletError

if TYPE_CHECKING:
    from skills.curator.rules import CuratorReport


class UsageWriteError(SkilletError):
    code = "usage_write_failed"
    retryable = True


class CuratorRunError(SkilletError):
    code = "curator_run_failed"
    retryable = True

    def __init__(self, message: str, *, saved: Sequence[CuratorReport] = ()) -> None:
        super().__init__(message)
        self.saved = tuple(saved)


class SkillNotInstalled(SkilletError):
    code = "skill_not_installed"


class OrganizationNotFound(SkilletError):
    code = "organization_not_found"
