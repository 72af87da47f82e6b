"""The skill editor's input as a package, pure: fields in, the SKILL.md and .zip a person
could have uploaded, checked by the package parser itself (skills.package).

Why a .zip and not a second validator: an edit must pass exactly the rules an upload passes
(the frontmatter's fields and caps, the body's lines, the file count and sizes, each file's
path and kind), with the same codes and pt-BR messages, and those rules have one home. The
archive is built in memory with stored (uncompressed) entries, so its cost is a copy of bytes
the package limits already bound (5 MiB at the defaults).

Decisions:
- `keywords` and `probe_keywords` are the package's comma-separated `skillet-keywords`
  strings, written as typed into `metadata`; an empty (or blank) one is left out, so the
  parser's own rules apply (probe keywords without keywords are refused).
- The base version's other frontmatter fields (license, compatibility, metadata,
  allowed-tools) are carried over: the form does not show them and must not drop them.
- A file path with a control character (NUL included) is refused here as
  `skill_unsafe_path` before zipfile sees it: zipfile cuts a name at NUL, which would let the
  parser see a different, harmless-looking name.
- Which form field a refusal points at is read from the refusal (its code, then the field
  its message names); whatever names none is the body's.
"""

from __future__ import annotations

import io
import unicodedata
import warnings
import zipfile
from collections.abc import Sequence

import yaml

from skills.models import SkillFrontmatter, SkillMatcher
from skills.package import PackageErrorCode, SkillPackage, SkillPackageError, parse_skill_package
from skills.package.limits import DEFAULT_LIMITS, PackageLimits
from skills.package.skill_md import KEYWORDS_KEY, PROBE_KEYWORDS_KEY

SKILL_MD = "SKILL.md"
# Wide enough that YAML never folds a description into continuation lines.
_YAML_WIDTH = 4096
_SHOWN_PATH_CHARS = 120


def keywords_text(keywords: Sequence[str]) -> str:
    """A keyword list as the `skillet-keywords` string PUT takes and GET shows (a legacy
    keyword holding a comma has it replaced by a space, as an export does)."""
    return ", ".join(" ".join(k.replace(",", " ").split()) for k in keywords)


def matcher_texts(matcher: SkillMatcher) -> tuple[str, str]:
    return keywords_text(matcher.any_keywords), keywords_text(matcher.probe_keywords)


def render_edit_skill_md(
    *,
    name: str,
    description: str,
    keywords: str,
    probe_keywords: str,
    body: str,
    frontmatter: SkillFrontmatter,
) -> bytes:
    """The SKILL.md of an edit, in the spec's form (see the module docstring)."""
    meta: dict[str, object] = {"name": name, "description": description}
    if frontmatter.license is not None:
        meta["license"] = frontmatter.license
    if frontmatter.compatibility is not None:
        meta["compatibility"] = frontmatter.compatibility
    metadata = {
        k: v for k, v in frontmatter.metadata if k not in (KEYWORDS_KEY, PROBE_KEYWORDS_KEY)
    }
    if keywords.strip():
        metadata[KEYWORDS_KEY] = keywords
    if probe_keywords.strip():
        metadata[PROBE_KEYWORDS_KEY] = probe_keywords
    if metadata:
        meta["metadata"] = metadata
    if frontmatter.allowed_tools is not None:
        meta["allowed-tools"] = frontmatter.allowed_tools
    text = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=_YAML_WIDTH)
    return f"---\n{text}---\n{body.strip()}\n".encode()


def check_file_path(path: str) -> None:
    """Refuse what zipfile would silently change (module docstring); the parser does the
    rest."""
    if not path or any(unicodedata.category(c).startswith("C") for c in path):
        shown = repr(path[:_SHOWN_PATH_CHARS])
        raise SkillPackageError(
            f"O caminho {shown} não é permitido. Use caminhos relativos com '/', sem '..', sem "
            "barra no início, sem letra de unidade e sem caracteres de controle.",
            code=PackageErrorCode.UNSAFE_PATH,
        )


def package_of(
    skill_md: bytes,
    files: Sequence[tuple[str, bytes]],
    *,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> SkillPackage:
    """SKILL.md and `files` (path, bytes) through the package parser, as one upload."""
    for path, _ in files:
        check_file_path(path)
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive,
        warnings.catch_warnings(),
    ):
        # A second SKILL.md (or any repeated path) is written as given: the parser refuses it
        # as it refuses a .zip that has one (`skill_duplicate_entry`).
        warnings.simplefilter("ignore", UserWarning)
        for path, data in [(SKILL_MD, skill_md), *files]:
            archive.writestr(path, data)
    return parse_skill_package(buffer.getvalue(), limits=limits)
