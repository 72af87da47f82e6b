"""Skill folders in the layouts public Agent Skills repositories use, written here for tests.

Nothing is copied from those repositories: the contents are our own short texts. What is
reproduced is the shape measured on Anthropic's public skills repository (17 skills):
`LICENSE.txt` beside SKILL.md, `scripts/` full of .py files (and schemas, a .tar.gz),
`templates/` with .html/.js, `examples/`, root-level .md files the body points to, fonts in
a folder of their own, a PDF at the root, no `matcher` and bodies past 200 lines; and the two
largest shapes: 66 files, and 83 files weighing 5.3 MiB.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import yaml

LICENSE_TEXT = "Licença de teste: use, copie e modifique à vontade.\n"


def spec_skill_md(
    name: str,
    *,
    description: str | None = None,
    keywords: str | None = None,
    probes: str | None = None,
    license_text: str | None = "Complete terms in LICENSE.txt",
    body_lines: int = 12,
    extra: Mapping[str, object] | None = None,
) -> str:
    """A SKILL.md as the spec writes it: name, description, optional spec fields, and our
    keywords (if any) under metadata."""
    meta: dict[str, object] = {
        "name": name,
        "description": description or f"Skill pública de teste {name}: quando usar e para quê.",
    }
    if license_text is not None:
        meta["license"] = license_text
    metadata: dict[str, str] = {}
    if keywords is not None:
        metadata["skillet-keywords"] = keywords
    if probes is not None:
        metadata["skillet-probe-keywords"] = probes
    if metadata:
        meta["metadata"] = metadata
    meta.update(extra or {})
    frontmatter = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=88)
    body = "\n".join(
        [f"# {name}", "", "Leia `reference.md` antes de começar."]
        + [f"{i}. Passo {i} do fluxo de trabalho." for i in range(1, body_lines - 2)]
    )
    return f"---\n{frontmatter}---\n{body}\n"


def _script(index: int) -> str:
    return f'"""Ferramenta {index}."""\n\n\ndef main() -> None:\n    print({index})\n'


def _binary(rng: random.Random, size_bytes: int) -> bytes:
    # 0xFF never occurs in UTF-8: the parser must see these as binary.
    return b"\xff" + rng.randbytes(size_bytes - 1)


def document_toolkit(name: str = "documentos", *, scripts: int = 50) -> dict[str, bytes]:
    """A document-processing skill (the docx/pptx/xlsx shape): LICENSE.txt, root .md files,
    a long body, scripts/ with Python and XSD schemas, XML templates under scripts/."""
    files = {
        "SKILL.md": spec_skill_md(name, body_lines=320),
        "LICENSE.txt": LICENSE_TEXT,
        "reference.md": "# Referência\n\nDetalhes das operações avançadas.\n",
        "editing.md": "# Edição\n\nComo editar um documento existente.\n",
    }
    for index in range(scripts):
        files[f"scripts/tool_{index:02d}.py"] = _script(index)
    files["scripts/office/schemas/main.xsd"] = '<?xml version="1.0"?>\n<xs:schema/>\n'
    files["scripts/templates/comments.xml"] = "<comments/>\n"
    return {path: text.encode() for path, text in files.items()}


def art_generator(name: str = "arte-generativa") -> dict[str, bytes]:
    """The algorithmic-art shape: templates/ with HTML and JavaScript, LICENSE.txt."""
    return {
        "SKILL.md": spec_skill_md(name, body_lines=390).encode(),
        "LICENSE.txt": LICENSE_TEXT.encode(),
        "templates/viewer.html": b"<!doctype html>\n<html><body><canvas></canvas></body></html>\n",
        "templates/generator_template.js": b"function setup() {\n  createCanvas(400, 400);\n}\n",
    }


def webapp_tester(name: str = "teste-web") -> dict[str, bytes]:
    """The webapp-testing shape: examples/*.py, one script, no license field."""
    return {
        "SKILL.md": spec_skill_md(name, license_text=None).encode(),
        "examples/console_logging.py": _script(1).encode(),
        "examples/element_discovery.py": _script(2).encode(),
        "scripts/with_server.py": _script(3).encode(),
        "scripts/bundle.tar.gz": _binary(random.Random(3), 2048),
    }


def theme_showcase(name: str = "temas") -> dict[str, bytes]:
    """The theme-factory shape: a PDF at the root and a themes/ folder of .md files."""
    files = {
        "SKILL.md": spec_skill_md(name).encode(),
        "LICENSE.txt": LICENSE_TEXT.encode(),
        "theme-showcase.pdf": b"%PDF-1.7\n\xff\xfe" + bytes(range(256)) * 8,
    }
    for index in range(10):
        files[f"themes/tema-{index}.md"] = f"# Tema {index}\n\nCores e fontes.\n".encode()
    return files


def font_gallery(name: str = "design-em-tela", *, fonts: int = 40) -> dict[str, bytes]:
    """The canvas-design shape, the largest measured: SKILL.md, LICENSE.txt and `fonts` pairs
    of binary .ttf + -OFL.txt in canvas-fonts/ (83 files at 40 pairs + 1 extra file),
    5.3 MiB in all: over the default 64 files and 5 MiB."""
    rng = random.Random(40)
    files = {
        "SKILL.md": spec_skill_md(name).encode(),
        "LICENSE.txt": LICENSE_TEXT.encode(),
        "canvas-fonts/README.md": b"# Fontes\n",
    }
    font_bytes = 138 * 1024  # 40 fonts: about 5.4 MiB with the texts
    for index in range(fonts):
        files[f"canvas-fonts/Fonte{index:02d}-Regular.ttf"] = _binary(rng, font_bytes)
        files[f"canvas-fonts/Fonte{index:02d}-OFL.txt"] = b"SIL Open Font License 1.1\n"
    return files


def layered_reference(name: str = "api-de-exemplo") -> dict[str, bytes]:
    """The claude-api shape: 66 files in per-language folders plus shared/ notes."""
    files = {"SKILL.md": spec_skill_md(name, body_lines=550), "LICENSE.txt": LICENSE_TEXT}
    for language in ("python", "typescript", "java", "go", "ruby", "php", "csharp", "curl"):
        for topic in ("README", "streaming", "tools", "batches", "files"):
            files[f"{language}/{topic}.md"] = f"# {language}: {topic}\n"
    for index in range(24):
        files[f"shared/nota-{index:02d}.md"] = f"# Nota {index}\n"
    return {path: text.encode() for path, text in files.items()}


PUBLIC_LAYOUTS = {
    "documentos": document_toolkit,
    "arte-generativa": art_generator,
    "teste-web": webapp_tester,
    "temas": theme_showcase,
    "design-em-tela": font_gallery,
    "api-de-exemplo": layered_reference,
}
