"""Validate a package's SKILL.md bytes: YAML frontmatter (name, description, matcher) and body.

Order of checks, cheapest bound first: UTF-8 (a leading BOM is tolerated) -> at most
MAX_SKILL_MD_CHARS characters in all (`skill_body_too_long`: the frontmatter is capped far
below that, so the excess is body) -> the `---` block -> the frontmatter's YAML, loaded with
bounded work by skills.package_yaml -> fields -> body lines. Refusals are
`skill_frontmatter_invalid` (not UTF-8, no `---` block, bad YAML or fields, empty body) or
`skill_body_too_long`. Unknown top-level keys are ignored (Agent Skills' `license`,
`metadata`, ...); unknown keys under `matcher` are refused, since a typo there would silently
drop keywords. `description` and keywords are whitespace-stripped. The body has CRLF/CR
normalized to LF and surrounding whitespace stripped; its lines are counted as
str.splitlines() counts them, so U+2028, form feeds and the like cannot hide lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skills.models import SkillMatcher
from skills.package_errors import PackageErrorCode, SkillPackageError
from skills.package_limits import (
    MAX_BODY_LINES,
    MAX_DESCRIPTION_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_NAME_CHARS,
    MAX_SKILL_MD_CHARS,
)
from skills.package_yaml import load_frontmatter

_NAME_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_MATCHER_KEYS = frozenset({"any_keywords", "probe_keywords"})


@dataclass(frozen=True)
class SkillMd:
    name: str
    description: str
    matcher: SkillMatcher
    body: str


def parse_skill_md(raw: bytes) -> SkillMd:
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _invalid("O SKILL.md não está em UTF-8. Salve-o com a codificação UTF-8.") from exc
    if len(text) > MAX_SKILL_MD_CHARS:
        raise _body_too_long(
            f"O SKILL.md tem {len(text)} caracteres; o máximo é {MAX_SKILL_MD_CHARS}. Mova "
            "detalhes do corpo para arquivos em references/."
        )
    frontmatter, body = _split_frontmatter(text)
    meta = load_frontmatter(frontmatter)
    return SkillMd(_name(meta), _description(meta), _matcher(meta), _checked_body(body))


def _invalid(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.FRONTMATTER_INVALID)


def _body_too_long(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.BODY_TOO_LONG)


def _split_frontmatter(text: str) -> tuple[str, str]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() == "---":
                return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise _invalid(
        "O SKILL.md precisa começar com um frontmatter YAML entre duas linhas '---' "
        "(com name, description e matcher) e depois trazer as instruções."
    )


def _name(meta: dict[Any, Any]) -> str:
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not _NAME_PATTERN.fullmatch(name):
        raise _invalid(
            f"O campo name do SKILL.md precisa ter de 1 a {MAX_NAME_CHARS} caracteres: letras "
            "minúsculas sem acento, números e hífens entre eles (ex.: objecao-preco)."
        )
    return name


def _description(meta: dict[Any, Any]) -> str:
    description = meta.get("description")
    text = description.strip() if isinstance(description, str) else ""
    if not text or len(text) > MAX_DESCRIPTION_CHARS or "<" in text or ">" in text:
        raise _invalid(
            f"O campo description do SKILL.md precisa ser um texto de 1 a "
            f"{MAX_DESCRIPTION_CHARS} caracteres, sem '<' nem '>'."
        )
    return text


def _matcher(meta: dict[Any, Any]) -> SkillMatcher:
    matcher = meta.get("matcher")
    if not isinstance(matcher, dict):
        raise _invalid(
            "O SKILL.md precisa de um matcher com any_keywords: a lista de palavras que "
            "ativam a skill."
        )
    unknown = sorted(str(key) for key in matcher if key not in _MATCHER_KEYS)
    if unknown:
        raise _invalid(
            f"O matcher do SKILL.md tem campos desconhecidos ({', '.join(unknown)}); use só "
            "any_keywords e probe_keywords."
        )
    any_keywords = _keywords(matcher.get("any_keywords"), "any_keywords")
    if not any_keywords:
        raise _invalid("matcher.any_keywords do SKILL.md precisa ter ao menos uma palavra-chave.")
    probe_keywords = _keywords(matcher.get("probe_keywords"), "probe_keywords")
    return SkillMatcher(any_keywords=any_keywords, probe_keywords=probe_keywords)


def _keywords(raw: object, field_name: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_KEYWORDS:
        raise _invalid(
            f"matcher.{field_name} do SKILL.md precisa ser uma lista com até {MAX_KEYWORDS} "
            "palavras-chave."
        )
    keywords = tuple(item.strip() if isinstance(item, str) else "" for item in raw)
    if not all(0 < len(keyword) <= MAX_KEYWORD_CHARS for keyword in keywords):
        raise _invalid(
            f"Cada item de matcher.{field_name} do SKILL.md precisa ser um texto de 1 a "
            f"{MAX_KEYWORD_CHARS} caracteres (use aspas em números)."
        )
    return keywords


def _checked_body(body: str) -> str:
    body = body.strip()
    if not body:
        raise _invalid(
            "O SKILL.md precisa de instruções depois do frontmatter; o corpo está vazio."
        )
    line_count = len(body.splitlines())
    if line_count > MAX_BODY_LINES:
        raise _body_too_long(
            f"O corpo do SKILL.md tem {line_count} linhas; o máximo é {MAX_BODY_LINES} (quebras "
            "de linha invisíveis, como U+2028, também contam). Mova detalhes para arquivos em "
            "references/."
        )
    return body
