"""Rules for skills the agent writes itself: names, sizes, support paths, unique patches.

Pure: every check returns the value or raises AuthoringError, whose pt-BR message names the
rule broken, because the model reads it and must be able to correct itself. A SKILL.md the
agent writes or patches must also pass the same SKILL.md rules as an uploaded package
(frontmatter, keywords, at most 200 body lines, the 100,000-character cap of
skills.package.limits); the cap is checked here first, so the model reads `skill_md_too_long`.
"""

from __future__ import annotations

import re

import yaml

from core.errors import SkilletError
from skills.models import DEFAULT_FRONTMATTER, FileKind, SkillFrontmatter, SkillMatcher
from skills.package.errors import SkillPackageError
from skills.package.limits import (
    MAX_DESCRIPTION_CHARS,
    MAX_FILE_BYTES,
    MAX_NAME_CHARS,
    MAX_SKILL_MD_CHARS,
)
from skills.package.skill_md import SkillMd, parse_skill_md

MAX_SUPPORT_FILE_BYTES = MAX_FILE_BYTES  # the default; SkillAuthor passes its limits
MAX_SUPPORT_PATH_CHARS = 255
SKILL_MD = "SKILL.md"
SUPPORT_DIRS: dict[str, FileKind] = {
    "references": FileKind.REFERENCE,
    "templates": FileKind.TEMPLATE,
    "scripts": FileKind.SCRIPT,
    "assets": FileKind.ASSET,
}
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class AuthoringError(SkilletError):
    """A refused skill_manage/skill_view call; `code` names the rule."""

    code = "skill_invalid"


def check_name(name: object) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_CHARS or not _NAME.match(name):
        raise AuthoringError(
            f"Nome inválido: {name!r}. Use 1 a {MAX_NAME_CHARS} caracteres: letras minúsculas, "
            "números e hífens entre eles (ex.: troca-de-produto).",
            code="skill_name_invalid",
        )
    return name


def check_description(description: object) -> str:
    if (
        not isinstance(description, str)
        or not 1 <= len(description.strip()) <= MAX_DESCRIPTION_CHARS
    ):
        raise AuthoringError(
            f"A descrição precisa ter de 1 a {MAX_DESCRIPTION_CHARS} caracteres.",
            code="skill_description_invalid",
        )
    return description.strip()


def check_support_path(path: object) -> tuple[str, FileKind]:
    """A support file path: relative, forward slashes, no '.'/'..', under an allowed folder."""
    if not isinstance(path, str) or not path:
        raise _path_error("informe o caminho do arquivo, ex.: references/precos.md")
    if "\\" in path:
        raise _path_error("use barras normais (/), não barras invertidas")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise _path_error("o caminho precisa ser relativo à skill")
    if len(path) > MAX_SUPPORT_PATH_CHARS or _CONTROL.search(path):
        raise _path_error(
            f"no máximo {MAX_SUPPORT_PATH_CHARS} caracteres, sem caracteres de controle"
        )
    segments = path.split("/")
    if any(segment in {"", ".", ".."} for segment in segments):
        raise _path_error("segmentos vazios, '.' e '..' não são permitidos")
    if len(segments) < 2 or segments[0] not in SUPPORT_DIRS:
        folders = ", ".join(f"{d}/" for d in SUPPORT_DIRS)
        raise _path_error(f"o arquivo precisa ficar dentro de uma destas pastas: {folders}")
    return path, SUPPORT_DIRS[segments[0]]


def _path_error(rule: str) -> AuthoringError:
    return AuthoringError(f"Caminho inválido: {rule}.", code="skill_path_invalid")


def check_file_content(content: object, *, max_bytes: int = MAX_SUPPORT_FILE_BYTES) -> bytes:
    if not isinstance(content, str):
        raise AuthoringError("O conteúdo do arquivo precisa ser texto.", code="skill_file_invalid")
    data = content.encode("utf-8")
    if len(data) > max_bytes:
        raise AuthoringError(
            f"O arquivo tem {len(data)} bytes; o limite é {max_bytes} bytes.",
            code="skill_file_too_large",
        )
    return data


def render_skill_md(
    name: str,
    description: str,
    matcher: SkillMatcher,
    body: str,
    frontmatter: SkillFrontmatter = DEFAULT_FRONTMATTER,
) -> str:
    """The SKILL.md text of a stored version (what `patch` without file_path edits): the
    keywords as `matcher` (the form the model's tool arguments map to; none for an
    index-only skill), then the Agent Skills fields the version keeps, so a patch by the
    agent never drops an imported skill's license or metadata."""
    meta: dict[str, object] = {"name": name, "description": description}
    if matcher.any_keywords:
        meta["matcher"] = matcher.to_json()
        if not matcher.probe_keywords:
            meta["matcher"] = {"any_keywords": list(matcher.any_keywords)}
    meta.update(frontmatter.to_json())
    frontmatter_text = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False).strip()
    return f"---\n{frontmatter_text}\n---\n{body.strip()}\n"


def check_skill_md(text: str, *, expected_name: str | None = None) -> SkillMd:
    """A SKILL.md the agent produced: within the size cap and valid like an uploaded one."""
    if len(text) > MAX_SKILL_MD_CHARS:
        raise AuthoringError(
            f"O SKILL.md ficaria com {len(text)} caracteres; o limite é {MAX_SKILL_MD_CHARS}.",
            code="skill_md_too_long",
        )
    try:
        # surrogatepass: a lone surrogate the model wrote reaches the parser, which refuses
        # it as text that is not UTF-8, instead of failing the encode here.
        parsed = parse_skill_md(text.encode("utf-8", "surrogatepass"))
    except SkillPackageError as exc:
        raise AuthoringError(f"O SKILL.md ficaria inválido: {exc.message}", code=exc.code) from exc
    if expected_name is not None and parsed.name != expected_name:
        raise AuthoringError(
            f"O nome de uma skill não muda: mantenha name: {expected_name}.",
            code="skill_name_change",
        )
    return parsed


def replace_unique(content: str, old: object, new: object) -> str:
    """Replace `old` by `new` where `old` occurs exactly once (the seed's fail-closed patch)."""
    if not isinstance(old, str) or not old:
        raise AuthoringError("Informe em 'old' o trecho a substituir.", code="patch_old_missing")
    if not isinstance(new, str):
        raise AuthoringError("Informe em 'new' o texto novo.", code="patch_new_missing")
    if old == new:
        raise AuthoringError("'old' e 'new' são iguais: nada mudaria.", code="patch_identical")
    first = content.find(old)
    if first == -1:
        raise AuthoringError(
            "O trecho em 'old' não aparece no arquivo; copie-o exatamente (veja com skill_view).",
            code="patch_no_match",
        )
    if content.find(old, first + len(old)) != -1:
        raise AuthoringError(
            "O trecho em 'old' aparece mais de uma vez; inclua mais contexto para ele ser único.",
            code="patch_ambiguous",
        )
    return content[:first] + new + content[first + len(old) :]
