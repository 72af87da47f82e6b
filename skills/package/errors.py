"""The refusal raised for an uploaded skill package, with its stable codes (re-exported by
skills.package.parser, which is where callers import it from).

    SkilletError
    └── SkillPackageError   code: one PackageErrorCode value; message: pt-BR, says what to fix
"""

from __future__ import annotations

from enum import StrEnum

from core.errors import SkilletError


class PackageErrorCode(StrEnum):
    NOT_A_ZIP = "skill_not_a_zip"
    MD_MISSING = "skill_md_missing"
    FRONTMATTER_INVALID = "skill_frontmatter_invalid"
    BODY_TOO_LONG = "skill_body_too_long"
    UNSAFE_PATH = "skill_unsafe_path"
    EXTENSION_NOT_ALLOWED = "skill_extension_not_allowed"
    TOO_MANY_FILES = "skill_too_many_files"
    FILE_TOO_LARGE = "skill_file_too_large"
    TOO_LARGE = "skill_too_large"
    DUPLICATE_ENTRY = "skill_duplicate_entry"


class SkillPackageError(SkilletError):
    """An uploaded package is refused; `code` is a PackageErrorCode value, never retryable."""

    def __init__(self, message: str, *, code: PackageErrorCode) -> None:
        # Stored as a plain str so `.code` compares, prints and serializes like every other code.
        super().__init__(message, code=str(code), retryable=False)
