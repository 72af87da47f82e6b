"""The Agent Skills (agentskills.io) fields of a SKILL.md frontmatter kept with a version.

`license`, `compatibility`, `metadata` and `allowed-tools` are optional in the spec and mean
nothing to a WhatsApp turn; they are validated to the spec's shapes and stored with the
version (skill_versions.frontmatter), so an export or a listing can show
them. Shapes: `license` a text; `compatibility` a text of at most MAX_COMPATIBILITY_CHARS
(the spec's 500); `metadata` a map of text to text (a YAML number or boolean value is kept
as the text Python gives it, like skills-ref does: quote `version: "1.0"` to keep it exact;
the SKILL.md bytes are stored as uploaded anyway); `allowed-tools` a text (the spec's
space-separated list; a YAML list of texts is joined with spaces). Every refusal is
`skill_frontmatter_invalid` with a pt-BR message. The value type is skills.models'
SkillFrontmatter (re-exported here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skills.models import SkillFrontmatter
from skills.package.errors import PackageErrorCode, SkillPackageError
from skills.package.limits import (
    MAX_COMPATIBILITY_CHARS,
    MAX_FIELD_CHARS,
    MAX_KEYWORD_LIST_CHARS,
)

# Every top-level key the spec allows; anything else (our legacy `matcher` included) makes a
# SKILL.md that the spec's validator (skills-ref) refuses.
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
_SCALARS = (str, int, float, bool)
# Our keyword lists in `metadata` (read by skills.package.skill_md); each value may take
# MAX_KEYWORD_LIST_CHARS instead of MAX_FIELD_CHARS.
KEYWORDS_KEY = "skillet-keywords"
PROBE_KEYWORDS_KEY = "skillet-probe-keywords"
KEYWORD_METADATA_KEYS = frozenset({KEYWORDS_KEY, PROBE_KEYWORDS_KEY})

__all__ = ["SPEC_FIELDS", "SkillFrontmatter", "nonstandard_keys", "parse_frontmatter_fields"]


def parse_frontmatter_fields(meta: Mapping[Any, Any]) -> SkillFrontmatter:
    return SkillFrontmatter(
        license=_text(meta.get("license"), "license", MAX_FIELD_CHARS),
        compatibility=_text(meta.get("compatibility"), "compatibility", MAX_COMPATIBILITY_CHARS),
        metadata=_metadata(meta.get("metadata")),
        allowed_tools=_allowed_tools(meta.get("allowed-tools")),
    )


def nonstandard_keys(meta: Mapping[Any, Any]) -> tuple[str, ...]:
    """Top-level keys outside the spec, sorted (`matcher` in a legacy SKILL.md)."""
    return tuple(sorted(str(key) for key in meta if key not in SPEC_FIELDS))


def _invalid(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.FRONTMATTER_INVALID)


def _text(raw: object, field_name: str, max_chars: int) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw) > max_chars:
        raise _invalid(
            f"O campo {field_name} do SKILL.md precisa ser um texto de até {max_chars} caracteres."
        )
    return raw


def _metadata(raw: object) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise _invalid(
            "O campo metadata do SKILL.md precisa ser um mapa de chave: texto (ex.: "
            "'author: loja-exemplo' em uma linha abaixo de 'metadata:', com recuo)."
        )
    pairs: list[tuple[str, str]] = []
    for key, value in raw.items():
        if not isinstance(key, _SCALARS) or not isinstance(value, (*_SCALARS, type(None))):
            raise _invalid(
                f"Em metadata do SKILL.md, {str(key)!r} precisa ter um texto como valor, não "
                "uma lista nem um mapa."
            )
        text = "" if value is None else str(value)
        if len(str(key)) > MAX_FIELD_CHARS:
            raise _invalid(
                f"Cada chave e cada valor de metadata do SKILL.md pode ter até "
                f"{MAX_FIELD_CHARS} caracteres."
            )
        if key in KEYWORD_METADATA_KEYS:
            if len(text) > MAX_KEYWORD_LIST_CHARS:
                raise _invalid(
                    f"metadata.{key} do SKILL.md pode ter até {MAX_KEYWORD_LIST_CHARS} caracteres."
                )
        elif len(text) > MAX_FIELD_CHARS:
            raise _invalid(
                f"Cada chave e cada valor de metadata do SKILL.md pode ter até "
                f"{MAX_FIELD_CHARS} caracteres."
            )
        pairs.append((str(key), text))
    return tuple(sorted(pairs))


def _allowed_tools(raw: object) -> str | None:
    if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
        raw = " ".join(item.strip() for item in raw)
    return _text(raw, "allowed-tools", MAX_FIELD_CHARS)
