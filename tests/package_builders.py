"""Skill packages for tests: a SKILL.md from keyword arguments and a .zip from a file dict."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import yaml


def skill_md_text(
    name: str,
    *,
    keywords: Sequence[str] = ("frete",),
    probes: Sequence[str] = (),
    description: str | None = None,
    body: str | None = None,
) -> str:
    meta: dict[str, Any] = {
        "name": name,
        "description": description or f"Skill de teste {name}.",
        "matcher": {"any_keywords": list(keywords), "probe_keywords": list(probes)},
    }
    frontmatter = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
    return f"---\n{frontmatter}---\n{body or f'Resposta da skill {name}.'}\n"


def zip_files(files: Mapping[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return buffer.getvalue()


def skill_zip(
    name: str,
    *,
    keywords: Sequence[str] = ("frete",),
    probes: Sequence[str] = (),
    description: str | None = None,
    body: str | None = None,
    references: Mapping[str, str] | None = None,
) -> bytes:
    """A valid package: SKILL.md plus `references/<path>` files given as {path: text}."""
    files: dict[str, bytes | str] = {
        "SKILL.md": skill_md_text(
            name, keywords=keywords, probes=probes, description=description, body=body
        )
    }
    files.update({f"references/{path}": text for path, text in (references or {}).items()})
    return zip_files(files)
