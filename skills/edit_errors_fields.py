"""Which field of the skill editor's form a package refusal points at (pure)."""

from __future__ import annotations

from skills.editing_errors import EditField
from skills.package import PackageErrorCode, SkillPackageError
from skills.package.skill_md import KEYWORDS_KEY, PROBE_KEYWORDS_KEY

# Codes about the files of a package, never about SKILL.md's fields.
_FILE_CODES = frozenset(
    {
        PackageErrorCode.UNSAFE_PATH,
        PackageErrorCode.EXTENSION_NOT_ALLOWED,
        PackageErrorCode.TOO_MANY_FILES,
        PackageErrorCode.FILE_TOO_LARGE,
        PackageErrorCode.TOO_LARGE,
        PackageErrorCode.DUPLICATE_ENTRY,
    }
)


def field_of(refusal: SkillPackageError) -> EditField:
    """The field the refusal's code or message names; the body otherwise."""
    if refusal.code in _FILE_CODES:
        return EditField.FILE
    if refusal.code == PackageErrorCode.BODY_TOO_LONG:
        return EditField.BODY
    message = refusal.message
    # Keywords first: the "at least one keyword" message names both keys and is about the
    # keywords.
    if f"metadata.{KEYWORDS_KEY}" in message or "any_keywords" in message:
        return EditField.KEYWORDS
    if PROBE_KEYWORDS_KEY in message or "probe_keywords" in message:
        return EditField.PROBE_KEYWORDS
    if "description" in message:
        return EditField.DESCRIPTION
    if "campo name" in message:
        return EditField.NAME
    return EditField.BODY
