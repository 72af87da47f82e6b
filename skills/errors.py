"""The error base every skillet package derives from.

SkilletError (code, retryable)
├── StorageError            skills.storage: the object store failed (retryable)
├── SkillPackageError       skills.package: an uploaded package is refused
├── (catalog refusals)      skills.catalog_errors: unknown org, already installed, not
│                           installed, not in the catalog, bad catalog folder
└── DatabaseUnavailable     a Postgres call failed for a transient reason (retryable)
"""

from __future__ import annotations


class SkilletError(Exception):
    """Base error: a stable machine `code`, a human message, and whether a retry may help."""

    code: str = "skillet_error"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None, retryable: bool | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if retryable is not None:
            self.retryable = retryable

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class StorageError(SkilletError):
    code = "storage_unavailable"
    retryable = True


class DatabaseUnavailable(SkilletError):
    code = "database_unavailable"
    retryable = True
