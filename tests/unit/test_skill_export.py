"""skills.export.archive: which stored SKILL.md is exported as it is, the rendered spec form
(checked by the spec's validator, skills-ref), and the .zip layout."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from skills.export.archive import export_zip, exported_verbatim, render_spec_skill_md
from skills.models import SkillFrontmatter, SkillMatcher
from skills.package import parse_skill_package
from skills.package.skill_md import parse_skill_md

VALIDATOR = Path(sys.executable).with_name("agentskills")
BASE = "---\nname: frete\ndescription: Calcula o frete.\n{}---\nCorpo.\n"


@pytest.mark.parametrize(
    ("extra", "verbatim"),
    [
        ("", True),
        ("license: MIT\nmetadata:\n  author: loja\n  skillet-keywords: frete, cep\n", True),
        ("metadata: {author: loja}\n", False),
        ("allowed-tools: [Read, Grep]\n", False),
        ("license: !!str MIT\n", False),
        ("license: MIT\nlicense: Apache\n", False),
        ("metadata:\n  a: b\n  a: c\n", False),
        ("license: 'termos --- ver LICENSE'\n", False),
        ("matcher:\n  any_keywords:\n    - frete\n", False),
        ("x-interno: sim\n", False),
    ],
)
def test_which_stored_skill_md_is_exported_as_it_is(extra: str, verbatim: bool) -> None:
    assert exported_verbatim(BASE.format(extra).encode()) is verbatim


def test_a_bom_or_an_unparsable_skill_md_is_rendered_instead() -> None:
    assert not exported_verbatim(b"\xef\xbb\xbf" + BASE.format("").encode())
    assert not exported_verbatim(b"---\nname: Frete\n---\nx\n")


CASES = [
    (
        "Calcula o frete: por CEP, \"expresso\" e 'econômico' — em R$ 12,90 #promo",
        SkillMatcher(["frete", "off", "sim, quero", "2024"], ["envio"]),
        SkillFrontmatter(
            license="MIT",
            compatibility="Precisa da tabela: CEPs",
            metadata=(("author", "loja"), ("version", "1.0")),
            allowed_tools="read_skill_reference skill_view",
        ),
    ),
    ("Índice apenas.", SkillMatcher(), SkillFrontmatter()),
    # Co-occurrence keywords keep their " + " (and patterns) through export and re-import.
    (
        "Agenda.",
        SkillMatcher(["consulta|horario|agend* + amanha|sexta|#", "marcar + hoje"], ["c++"]),
        SkillFrontmatter(),
    ),
    ("yes", SkillMatcher(["frete"]), SkillFrontmatter(metadata=(("n", "1"),))),
]


@pytest.mark.parametrize(("description", "matcher", "frontmatter"), CASES)
def test_the_rendered_form_reads_back_and_passes_the_validator(
    description: str, matcher: SkillMatcher, frontmatter: SkillFrontmatter, tmp_path: Path
) -> None:
    text = render_spec_skill_md(
        name="frete",
        description=description,
        matcher=matcher,
        body="Corpo.",
        frontmatter=frontmatter,
    )
    parsed = parse_skill_md(text.encode())
    assert (parsed.description, parsed.body, parsed.frontmatter) == (
        description,
        "Corpo.",
        frontmatter,
    )
    # A comma inside a legacy keyword becomes a space (the matcher reads both alike).
    assert parsed.matcher == SkillMatcher(
        [k.replace(",", "") for k in matcher.any_keywords], matcher.probe_keywords
    )
    assert exported_verbatim(text.encode())  # a rendered export is stable
    folder = tmp_path / "frete"
    folder.mkdir()
    (folder / "SKILL.md").write_text(text)
    result = subprocess.run(
        [str(VALIDATOR), "validate", str(folder)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr + text


def test_the_zip_has_one_top_folder_and_the_same_bytes_every_time() -> None:
    md = BASE.format("").encode()
    files = [("scripts/a.py", b"print(1)"), ("LICENSE.txt", b"MIT")]
    data = export_zip("frete", md, files)
    assert export_zip("frete", md, list(reversed(files))) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["frete/SKILL.md", "frete/LICENSE.txt", "frete/scripts/a.py"]
        assert archive.read("frete/SKILL.md") == md
    package = parse_skill_package(data)
    assert [f.path for f in package.files] == ["LICENSE.txt", "scripts/a.py"]
    assert package.skill_md == md
