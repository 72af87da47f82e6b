"""The skill editor's fields as a package: the parser's own rules, the field each refusal
names, files kept, paths zipfile would change refused first."""

from __future__ import annotations

import pytest

from skills.edit_errors_fields import field_of
from skills.edit_package import keywords_text, package_of, render_edit_skill_md
from skills.editing_errors import EditField
from skills.models import SkillFrontmatter
from skills.package import SkillPackageError
from skills.package.limits import PackageLimits


def _md(**fields: str) -> bytes:
    values = {
        "name": "trocas",
        "description": "Política de trocas.",
        "keywords": "troca, trocar",
        "probe_keywords": "",
        "body": "Trocas em 7 dias.",
    }
    values.update(fields)
    return render_edit_skill_md(frontmatter=SkillFrontmatter(license="MIT"), **values)


def test_fields_round_trip_through_the_parser_with_the_base_fields_kept() -> None:
    package = package_of(
        _md(description="Uma: descrição\ncom # e ---"), [("references/a.md", b"x")]
    )
    assert package.description == "Uma: descrição\ncom # e ---"
    assert package.matcher.any_keywords == ("troca", "trocar")
    assert package.frontmatter.license == "MIT"
    assert [f.path for f in package.files] == ["references/a.md"]
    assert keywords_text(package.matcher.any_keywords) == "troca, trocar"


@pytest.mark.parametrize(
    ("fields", "code", "field"),
    [
        ({"description": "a <b>"}, "skill_frontmatter_invalid", EditField.DESCRIPTION),
        ({"description": ""}, "skill_frontmatter_invalid", EditField.DESCRIPTION),
        (
            {"keywords": "", "probe_keywords": "pix"},
            "skill_frontmatter_invalid",
            EditField.KEYWORDS,
        ),
        ({"keywords": "a + b + c"}, "skill_frontmatter_invalid", EditField.KEYWORDS),
        ({"probe_keywords": "x" * 65}, "skill_frontmatter_invalid", EditField.PROBE_KEYWORDS),
        ({"body": "l\n" * 201}, "skill_body_too_long", EditField.BODY),
        ({"body": "  \n "}, "skill_frontmatter_invalid", EditField.BODY),
        ({"name": "Nome Ruim"}, "skill_frontmatter_invalid", EditField.NAME),
    ],
)
def test_each_refusal_is_the_packages_and_names_its_field(
    fields: dict[str, str], code: str, field: EditField
) -> None:
    with pytest.raises(SkillPackageError) as refused:
        package_of(_md(**fields), [])
    assert (refused.value.code, field_of(refusal := refused.value)) == (code, field), refusal


@pytest.mark.parametrize(
    ("path", "data", "code"),
    [
        ("references/a\0.md", b"x", "skill_unsafe_path"),
        ("../a.md", b"x", "skill_unsafe_path"),
        ("/etc/a.md", b"x", "skill_unsafe_path"),
        ("references/foto.md", b"\xff\xd8\xff", "skill_extension_not_allowed"),
        ("SKILL.md", b"x", "skill_duplicate_entry"),
        ("references/grande.md", b"x" * 2001, "skill_file_too_large"),
    ],
)
def test_a_file_is_refused_as_an_upload_would_be(path: str, data: bytes, code: str) -> None:
    limits = PackageLimits(max_files=4, max_total_bytes=10_000, max_file_bytes=2_000)
    with pytest.raises(SkillPackageError) as refused:
        package_of(_md(), [(path, data)], limits=limits)
    assert refused.value.code == code
    assert field_of(refused.value) is EditField.FILE


def test_too_many_files_counts_skill_md_like_an_upload() -> None:
    limits = PackageLimits(max_files=3, max_total_bytes=10_000, max_file_bytes=2_000)
    package_of(_md(), [("references/a.md", b"a"), ("references/b.md", b"b")], limits=limits)
    with pytest.raises(SkillPackageError) as refused:
        files = [("references/a.md", b"a"), ("references/b.md", b"b"), ("references/c.md", b"c")]
        package_of(_md(), files, limits=limits)
    assert refused.value.code == "skill_too_many_files"
