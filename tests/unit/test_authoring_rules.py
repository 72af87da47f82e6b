"""The rules for agent-authored skills, each at and past its limit."""

from __future__ import annotations

import pytest

from skills.authoring_rules import (
    MAX_SUPPORT_FILE_BYTES,
    AuthoringError,
    check_description,
    check_file_content,
    check_name,
    check_skill_md,
    check_support_path,
    render_skill_md,
    replace_unique,
)
from skills.models import FileKind, SkillMatcher
from skills.package.limits import MAX_SKILL_MD_CHARS


def _code(call: object, *args: object) -> str:
    with pytest.raises(AuthoringError) as exc:
        call(*args)  # type: ignore[operator]
    return exc.value.code


@pytest.mark.parametrize("name", ["a", "troca-de-produto", "pix2", "a" * 64])
def test_valid_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "a" * 65, "Troca", "troca_produto", "-troca", "troca-", "tro--ca", "ação", None, 7]
)
def test_invalid_names(name: object) -> None:
    assert _code(check_name, name) == "skill_name_invalid"


def test_description_limits() -> None:
    assert check_description("d" * 1024) == "d" * 1024
    assert _code(check_description, "d" * 1025) == "skill_description_invalid"
    assert _code(check_description, "   ") == "skill_description_invalid"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("references/precos.md", FileKind.REFERENCE),
        ("templates/boas-vindas.txt", FileKind.TEMPLATE),
        ("scripts/calculo.py", FileKind.SCRIPT),
        ("assets/logo.png", FileKind.ASSET),
        ("references/sub/pasta/x.md", FileKind.REFERENCE),
    ],
)
def test_valid_support_paths(path: str, kind: FileKind) -> None:
    assert check_support_path(path) == (path, kind)


@pytest.mark.parametrize(
    "path",
    [
        "precos.md",  # one segment
        "outros/precos.md",  # not an allowed folder
        "/references/x.md",  # absolute
        "C:/references/x.md",  # drive letter
        "references\\x.md",  # backslash
        "references/../x.md",
        "references/./x.md",
        "references//x.md",
        "references/x\n.md",
        "references/" + "x" * 250,
        "",
        None,
    ],
)
def test_invalid_support_paths(path: object) -> None:
    assert _code(check_support_path, path) == "skill_path_invalid"


def test_support_file_size_limit() -> None:
    assert len(check_file_content("a" * MAX_SUPPORT_FILE_BYTES)) == MAX_SUPPORT_FILE_BYTES
    assert _code(check_file_content, "a" * (MAX_SUPPORT_FILE_BYTES + 1)) == "skill_file_too_large"
    # the limit is on bytes: 2-byte characters count double
    assert (
        _code(check_file_content, "ç" * (MAX_SUPPORT_FILE_BYTES // 2 + 1)) == "skill_file_too_large"
    )
    assert _code(check_file_content, b"bytes") == "skill_file_invalid"


def _md(body: str) -> str:
    return render_skill_md("frete", "Como calcular o frete", SkillMatcher(["frete"]), body)


def test_rendered_skill_md_round_trips() -> None:
    text = render_skill_md(
        "frete",
        "Como calcular o frete: por CEP",
        SkillMatcher(["frete", "cep"], ["entrega"]),
        "Corpo.",
    )
    parsed = check_skill_md(text, expected_name="frete")
    assert parsed.description == "Como calcular o frete: por CEP"
    assert parsed.matcher == SkillMatcher(["frete", "cep"], ["entrega"])
    assert parsed.body == "Corpo."


def test_skill_md_size_limit() -> None:
    overhead = len(_md("x")) - 1  # everything but the body
    at_limit = _md("x" * (MAX_SKILL_MD_CHARS - overhead))
    assert len(at_limit) == MAX_SKILL_MD_CHARS
    assert check_skill_md(at_limit).name == "frete"
    over = _md("x" * (MAX_SKILL_MD_CHARS - overhead + 1))
    assert _code(check_skill_md, over) == "skill_md_too_long"


def test_patched_skill_md_must_stay_valid() -> None:
    assert _code(check_skill_md, "sem frontmatter") == "skill_frontmatter_invalid"
    too_many_lines = _md("\n".join(f"linha {n}" for n in range(201)))
    assert _code(check_skill_md, too_many_lines) == "skill_body_too_long"
    renamed = _md("Corpo.").replace("name: frete", "name: outra")
    assert _code(lambda: check_skill_md(renamed, expected_name="frete")) == "skill_name_change"


def test_replace_unique() -> None:
    assert replace_unique("a b c", "b", "B") == "a B c"
    assert _code(replace_unique, "a b c", "z", "Z") == "patch_no_match"
    assert _code(replace_unique, "a b b", "b", "B") == "patch_ambiguous"
    assert _code(replace_unique, "a b c", "b", "b") == "patch_identical"
    assert _code(replace_unique, "a b c", "", "x") == "patch_old_missing"
    assert _code(replace_unique, "a b c", "b", None) == "patch_new_missing"


def test_the_agent_caps_are_the_deployments_package_limits() -> None:
    from skills.authoring import AuthoringLimits
    from skills.package.limits import PackageLimits

    limits = AuthoringLimits.of(PackageLimits(128, 8 << 20, 2 << 20))
    assert (limits.max_files, limits.max_total_bytes, limits.max_file_bytes) == (
        128,
        8 << 20,
        2 << 20,
    )
    assert len(check_file_content("a" * (2 << 20), max_bytes=2 << 20)) == 2 << 20
    assert _code(lambda c: check_file_content(c, max_bytes=10), "a" * 11) == "skill_file_too_large"
