"""Validate a package's SKILL.md bytes: YAML frontmatter (name, description, keywords, the
Agent Skills fields) and body.

Order of checks, cheapest bound first: UTF-8 (a leading BOM is tolerated) and no U+0000 ->
the `---` block -> the frontmatter's YAML, loaded with bounded work by skills.package.bounded_yaml
(at most MAX_FRONTMATTER_BYTES), with no string Postgres cannot store (core.text: YAML's
`"\\0"` and `"\\ud800"` escapes) -> fields -> body. Refusals are `skill_frontmatter_invalid` (not
UTF-8, no `---` block, bad YAML or fields, empty body) or `skill_body_too_long`.

Keywords, in one of two forms, never both (`skill_frontmatter_invalid`: ambiguous):
- `metadata: {skillet-keywords: "a, b c", skillet-probe-keywords: "d"}`: comma-separated
  texts, phrases with spaces allowed, surrounding whitespace and empty items (a trailing
  comma) dropped. This form passes the spec's validator; the catalog uses it.
- `matcher: {any_keywords: [...], probe_keywords: [...]}`: our first form, still read;
  unknown keys under `matcher` are refused, since a typo there would silently drop keywords.
Either way a skill with keywords needs at least one (probe keywords alone are refused) and
each list holds at most MAX_KEYWORDS texts of 1 to MAX_KEYWORD_CHARS characters.
A skill without keywords is index-only: its description is in the skill index and the model
loads it with skill_view, as Claude does; it never matches a message.

Body caps: a skill with keywords has its body injected into the prompt, so its SKILL.md is
at most MAX_SKILL_MD_CHARS characters and its body at most MAX_BODY_LINES lines (counted as
str.splitlines() counts them, so U+2028, form feeds and the like cannot hide lines); an
index-only body is loaded on demand and has only the package's per-file size limit.
`frontmatter.metadata` leaves the two keyword keys out: the matcher is their one home (an
export writes them back). Unknown top-level keys are ignored but recorded
(`nonstandard_keys`), so an export knows whether the stored bytes pass the spec's validator.
`description` and keywords are whitespace-stripped. The body has CRLF/CR normalized to LF
and surrounding whitespace stripped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from core.text import first_unstorable, storable, what_unstorable
from keywords.patterns import keyword_form_error
from skills.models import SkillMatcher
from skills.package.bounded_yaml import load_frontmatter
from skills.package.errors import PackageErrorCode, SkillPackageError
from skills.package.frontmatter import (
    KEYWORD_METADATA_KEYS,
    SkillFrontmatter,
    nonstandard_keys,
    parse_frontmatter_fields,
)

# The keyword keys live beside the metadata cap they raise; re-exported for skills.export.archive.
from skills.package.frontmatter import KEYWORDS_KEY as KEYWORDS_KEY
from skills.package.frontmatter import PROBE_KEYWORDS_KEY as PROBE_KEYWORDS_KEY
from skills.package.limits import (
    MAX_BODY_LINES,
    MAX_DESCRIPTION_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_NAME_CHARS,
    MAX_SKILL_MD_CHARS,
)

_NAME_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_MATCHER_KEYS = frozenset({"any_keywords", "probe_keywords"})


@dataclass(frozen=True)
class SkillMd:
    name: str
    description: str
    matcher: SkillMatcher
    body: str
    frontmatter: SkillFrontmatter = field(default_factory=SkillFrontmatter)
    nonstandard_keys: tuple[str, ...] = ()

    @property
    def index_only(self) -> bool:
        return not self.matcher.any_keywords


def parse_skill_md(raw: bytes) -> SkillMd:
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _invalid("O SKILL.md não está em UTF-8. Salve-o com a codificação UTF-8.") from exc
    if "\x00" in text:
        raise _invalid("O SKILL.md tem o caractere nulo (U+0000); apague-o e salve de novo.")
    frontmatter, body = split_frontmatter(text)
    meta = load_frontmatter(frontmatter)
    _check_storable(meta)
    name, description = _name(meta), _description(meta)
    fields = parse_frontmatter_fields(meta)
    matcher = _matcher(meta, fields)
    # The keywords' one home is the matcher; the stored metadata keeps the other keys.
    fields = replace(
        fields, metadata=tuple(p for p in fields.metadata if p[0] not in KEYWORD_METADATA_KEYS)
    )
    if matcher.any_keywords and len(text) > MAX_SKILL_MD_CHARS:
        raise _body_too_long(
            f"O SKILL.md tem {len(text)} caracteres; o máximo é {MAX_SKILL_MD_CHARS} para uma "
            "skill com palavras-chave (o corpo vai inteiro no prompt). Mova detalhes do corpo "
            "para arquivos em references/."
        )
    return SkillMd(
        name,
        description,
        matcher,
        _checked_body(body, injected=bool(matcher.any_keywords)),
        fields,
        nonstandard_keys(meta),
    )


def _check_storable(meta: dict[str, Any]) -> None:
    """YAML's escapes (`"\\0"`, `"\\ud800"`) write what UTF-8 text cannot carry."""
    found = first_unstorable(meta)
    if found is not None:
        where, text = found
        raise _invalid(
            f"O campo `{storable(where)}` do frontmatter tem {what_unstorable(text)} "
            "(um escape do YAML como \\0 ou \\ud800). Apague esse escape."
        )


def _invalid(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.FRONTMATTER_INVALID)


def _body_too_long(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.BODY_TOO_LONG)


def split_frontmatter(text: str) -> tuple[str, str]:
    """(the YAML between the `---` lines, the body), line ends normalized to LF."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() == "---":
                return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise _invalid(
        "O SKILL.md precisa começar com um frontmatter YAML entre duas linhas '---' "
        "(com name e description) e depois trazer as instruções."
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


def _matcher(meta: dict[Any, Any], fields: SkillFrontmatter) -> SkillMatcher:
    """Keywords from `metadata` or `matcher` (never both); none: an index-only skill."""
    keywords = fields.metadata_value(KEYWORDS_KEY)
    probes = fields.metadata_value(PROBE_KEYWORDS_KEY)
    in_metadata = keywords is not None or probes is not None
    if in_metadata and "matcher" in meta:
        raise _invalid(
            "O SKILL.md tem palavras-chave em matcher e em metadata (skillet-keywords). Deixe "
            "só um dos dois: prefira metadata.skillet-keywords e apague o matcher."
        )
    if "matcher" in meta:
        return _legacy_matcher(meta["matcher"])
    if not in_metadata:
        return SkillMatcher()
    _check_keyword_text(meta)
    any_keywords = _split_keywords(keywords or "", KEYWORDS_KEY)
    if not any_keywords:
        raise _invalid(
            f"metadata.{KEYWORDS_KEY} do SKILL.md precisa ter ao menos uma palavra-chave "
            f"(separe várias por vírgula); sem palavras-chave, apague também {PROBE_KEYWORDS_KEY}."
        )
    return SkillMatcher(any_keywords, _split_keywords(probes or "", PROBE_KEYWORDS_KEY))


def _check_keyword_text(meta: dict[Any, Any]) -> None:
    """YAML reads `off`, `yes` and numbers as non-text: ask for quotes."""
    metadata = meta.get("metadata") or {}
    for key in (KEYWORDS_KEY, PROBE_KEYWORDS_KEY):
        if key in metadata and not isinstance(metadata[key], str):
            raise _invalid(
                f"metadata.{key} do SKILL.md precisa ser um texto com as palavras-chave "
                "separadas por vírgula, entre aspas se começar com número ou for "
                "'off'/'yes' (ex.: \"frete, prazo de entrega\")."
            )


def _split_keywords(text: str, key: str) -> tuple[str, ...]:
    keywords = tuple(item.strip() for item in text.split(",") if item.strip())
    if len(keywords) > MAX_KEYWORDS or not all(len(k) <= MAX_KEYWORD_CHARS for k in keywords):
        raise _invalid(
            f"metadata.{key} do SKILL.md pode ter até {MAX_KEYWORDS} palavras-chave separadas "
            f"por vírgula, cada uma com até {MAX_KEYWORD_CHARS} caracteres."
        )
    _check_keyword_forms(keywords, f"metadata.{key}")
    return keywords


def _check_keyword_forms(keywords: tuple[str, ...], field_name: str) -> None:
    """A malformed co-occurrence keyword (`a +`, `+ b`, `a + b + c`) is refused, not
    silently never matched."""
    for keyword in keywords:
        error = keyword_form_error(keyword)
        if error is not None:
            raise _invalid(f"Em {field_name} do SKILL.md, {error}")


def _legacy_matcher(matcher: object) -> SkillMatcher:
    if not isinstance(matcher, dict):
        raise _invalid(
            "O matcher do SKILL.md precisa ser um mapa com any_keywords: a lista de palavras "
            f"que ativam a skill (ou use metadata.{KEYWORDS_KEY})."
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
    _check_keyword_forms(keywords, f"matcher.{field_name}")
    return keywords


def _checked_body(body: str, *, injected: bool) -> str:
    body = body.strip()
    if not body:
        raise _invalid(
            "O SKILL.md precisa de instruções depois do frontmatter; o corpo está vazio."
        )
    line_count = len(body.splitlines()) if injected else 0
    if line_count > MAX_BODY_LINES:
        raise _body_too_long(
            f"O corpo do SKILL.md tem {line_count} linhas; o máximo é {MAX_BODY_LINES} para uma "
            "skill com palavras-chave (quebras de linha invisíveis, como U+2028, também "
            "contam). Mova detalhes para arquivos em references/."
        )
    return body
