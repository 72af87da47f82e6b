"""The error base every skillet package derives from.

SkilletError (code, retryable)
├── StorageError            the object store failed (retryable)
├── DatabaseUnavailable     a Postgres call failed for a transient reason (retryable)
├── DatabaseRejected        Postgres refused a statement on its content; no retry mends it
├── SkillPackageError       skills.package.parser: an uploaded package is refused
├── AuthoringError          skills.authoring_rules: a skill_manage/skill_view call refused
├── DraftError              skills.drafts: a draft cannot be approved or rejected
└── (catalog refusals)      skills.catalog_errors: unknown org, already installed, not
                            installed, not in the catalog, bad catalog folder

Driver errors are translated where we call the driver (`core.db_errors.db_errors`).
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


class DatabaseRejected(SkilletError):
    code = "database_rejected"
    retryable = False
