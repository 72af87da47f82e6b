"""Agent Skills interop of the parser: public layouts, spec fields, keywords in metadata,
index-only skills and the size limits as a value."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
import yaml

from skills.models import FileKind, SkillMatcher
from skills.package import PackageLimits, SkillPackageError, parse_skill_package
from skills.package.frontmatter import SkillFrontmatter
from skills.package.limits import (
    BYTES_PER_MIB,
    DEFAULT_LIMITS,
    MAX_BODY_LINES,
    MAX_FIELD_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_LIST_CHARS,
    MAX_KEYWORDS,
    MAX_SKILL_MD_CHARS,
)
from tests.agentskills_layouts import (
    PUBLIC_LAYOUTS,
    art_generator,
    document_toolkit,
    font_gallery,
    layered_reference,
    spec_skill_md,
)
from tests.package_builders import zip_files

RAISED = PackageLimits(
    max_files=128, max_total_bytes=8 * BYTES_PER_MIB, max_file_bytes=2 * BYTES_PER_MIB
)


def _zip(files: Mapping[str, bytes | str], top: str | None = None) -> bytes:
    prefix = f"{top}/" if top else ""
    return zip_files({prefix + path: data for path, data in files.items()})


def _refused(data: bytes, limits: PackageLimits = DEFAULT_LIMITS) -> SkillPackageError:
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(data, limits=limits)
    return caught.value


def _md(text: str) -> bytes:
    return zip_files({"SKILL.md": text})


# --- public layouts ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [document_toolkit, art_generator], ids=["docs", "art"])
def test_public_layouts_within_the_defaults_import_with_every_file_listed(
    layout: Callable[[], dict[str, bytes]],
) -> None:
    files = layout()
    package = parse_skill_package(_zip(files, top="pasta-do-repo"))
    assert [f.path for f in package.files] == sorted(p for p in files if p != "SKILL.md")
    assert package.matcher == SkillMatcher()  # index-only: no keywords
    assert package.frontmatter.license == "Complete terms in LICENSE.txt"
    kinds = {f.path: f.kind for f in package.files}
    assert kinds["LICENSE.txt"] is FileKind.REFERENCE
    assert kinds.get("reference.md", FileKind.REFERENCE) is FileKind.REFERENCE


def test_the_layouts_kinds() -> None:
    kinds = {
        f.path: f.kind
        for name, layout in PUBLIC_LAYOUTS.items()
        if name in ("documentos", "teste-web", "temas", "arte-generativa")
        for f in parse_skill_package(_zip(layout())).files
    }
    assert kinds["scripts/tool_00.py"] is FileKind.SCRIPT
    assert kinds["scripts/office/schemas/main.xsd"] is FileKind.SCRIPT
    assert kinds["scripts/bundle.tar.gz"] is FileKind.ASSET
    assert kinds["templates/viewer.html"] is FileKind.TEMPLATE
    assert kinds["examples/console_logging.py"] is FileKind.REFERENCE
    assert kinds["theme-showcase.pdf"] is FileKind.ASSET
    assert kinds["themes/tema-0.md"] is FileKind.REFERENCE


def test_every_public_layout_imports_with_raised_limits() -> None:
    for name, layout in PUBLIC_LAYOUTS.items():
        package = parse_skill_package(_zip(layout()), limits=RAISED)
        assert package.name == name


@pytest.mark.parametrize(
    ("layout", "code"),
    [(font_gallery, "skill_too_many_files"), (layered_reference, "skill_too_many_files")],
    ids=["83-files-5.4-MiB", "66-files"],
)
def test_the_two_largest_shapes_need_the_limits_raised(
    layout: Callable[[], dict[str, bytes]], code: str
) -> None:
    files = layout()
    assert len(files) > DEFAULT_LIMITS.max_files
    assert _refused(_zip(files)).code == code
    assert parse_skill_package(_zip(files), limits=RAISED).files


def test_eighty_files_pass_only_when_the_file_limit_allows_them() -> None:
    files = document_toolkit(scripts=75)  # 4 + 75 + 2 = 81 files
    error = _refused(_zip(files))
    assert error.code == "skill_too_many_files" and "o máximo é 64" in error.message
    assert len(parse_skill_package(_zip(files), limits=PackageLimits(max_files=81)).files) == 80
    assert _refused(_zip(files), PackageLimits(max_files=80)).code == "skill_too_many_files"


def test_total_and_file_limits_come_from_the_value_passed() -> None:
    files = {"SKILL.md": spec_skill_md("grande").encode(), "assets/a.bin": b"\xff" * 3000}
    small = PackageLimits(max_files=4, max_total_bytes=2500, max_file_bytes=2500)
    error = _refused(_zip(files), small)
    assert error.code == "skill_file_too_large"
    total = PackageLimits(max_files=4, max_total_bytes=3000, max_file_bytes=3000)
    assert _refused(_zip(files), total).code == "skill_too_large"
    assert parse_skill_package(
        _zip(files), limits=PackageLimits(max_total_bytes=7000, max_file_bytes=3000)
    )


def test_limits_refuse_nonsense_and_scale_the_entry_and_upload_caps() -> None:
    assert DEFAULT_LIMITS.max_archive_entries == 256
    assert DEFAULT_LIMITS.max_upload_bytes == 8 * BYTES_PER_MIB
    assert RAISED.max_archive_entries == 512
    with pytest.raises(ValueError):
        PackageLimits(max_files=0)
    with pytest.raises(ValueError):
        PackageLimits(max_total_bytes=10, max_file_bytes=11)


def test_limit_messages_show_raised_sizes_in_mib() -> None:
    limits = PackageLimits(max_total_bytes=3 * BYTES_PER_MIB // 2, max_file_bytes=BYTES_PER_MIB)
    files = {"SKILL.md": spec_skill_md("grande").encode()}
    files.update({f"assets/{i}.bin": b"\xff" * (BYTES_PER_MIB // 2) for i in range(4)})
    assert "1,5 MiB" in _refused(_zip(files), limits).message


# --- spec fields ------------------------------------------------------------------------------


def test_spec_fields_are_kept() -> None:
    text = spec_skill_md(
        "com-campos",
        keywords="frete",
        extra={"compatibility": "Requer acesso à internet", "allowed-tools": "Read Grep"},
    )
    text = text.replace("metadata:\n", "metadata:\n  author: loja-exemplo\n  version: 1.0\n")
    package = parse_skill_package(_md(text))
    assert package.frontmatter == SkillFrontmatter(
        license="Complete terms in LICENSE.txt",
        compatibility="Requer acesso à internet",
        metadata=(("author", "loja-exemplo"), ("version", "1.0")),  # keywords: the matcher
        allowed_tools="Read Grep",
    )
    assert SkillFrontmatter.from_json(package.frontmatter.to_json()) == package.frontmatter


def test_allowed_tools_as_a_yaml_list_is_joined() -> None:
    text = spec_skill_md("lista", extra={"allowed-tools": ["Read", "Bash(git:*)"]})
    assert parse_skill_package(_md(text)).frontmatter.allowed_tools == "Read Bash(git:*)"


@pytest.mark.parametrize(
    "extra",
    [
        {"license": ["MIT"]},
        {"compatibility": "x" * 501},
        {"compatibility": 3},
        {"metadata": "autor"},
        {"metadata": {"autor": ["a", "b"]}},
        {"metadata": {"autor": {"nome": "a"}}},
        {"metadata": {"k": "v" * 1025}},
        {"allowed-tools": {"Read": True}},
    ],
)
def test_spec_fields_of_the_wrong_shape_are_refused(extra: dict[str, object]) -> None:
    error = _refused(_md(spec_skill_md("errada", extra=extra)))
    assert error.code == "skill_frontmatter_invalid"


# --- keywords in metadata ---------------------------------------------------------------------


def test_metadata_keywords_are_comma_separated_phrases() -> None:
    text = spec_skill_md(
        "frete", keywords=" frete, prazo de entrega ,cep,", probes="envio, quanto tempo"
    )
    package = parse_skill_package(_md(text))
    assert package.matcher == SkillMatcher(
        ["frete", "prazo de entrega", "cep"], ["envio", "quanto tempo"]
    )


def test_metadata_and_matcher_forms_read_the_same_keywords() -> None:
    legacy = spec_skill_md("frete", extra={"matcher": {"any_keywords": ["frete", "cep"]}})
    current = spec_skill_md("frete", keywords="frete, cep")
    assert parse_skill_package(_md(legacy)).matcher == parse_skill_package(_md(current)).matcher


def test_keywords_in_both_forms_are_refused_as_ambiguous() -> None:
    text = spec_skill_md("frete", keywords="frete", extra={"matcher": {"any_keywords": ["cep"]}})
    error = _refused(_md(text))
    assert error.code == "skill_frontmatter_invalid"
    assert "matcher" in error.message and "skillet-keywords" in error.message
    probes_only = spec_skill_md("frete", probes="cep", extra={"matcher": {"any_keywords": ["a"]}})
    assert _refused(_md(probes_only)).code == "skill_frontmatter_invalid"


@pytest.mark.parametrize(
    ("keywords", "probes"),
    [
        ("", None),
        (" , ,", None),
        (None, "envio"),
        (",".join(["k"] * (MAX_KEYWORDS + 1)), None),
        ("frete, " + "k" * (MAX_KEYWORD_CHARS + 1), None),
        ("frete", ",".join(["p"] * (MAX_KEYWORDS + 1))),
    ],
)
def test_metadata_keywords_out_of_bounds_are_refused(
    keywords: str | None, probes: str | None
) -> None:
    text = spec_skill_md("frete", keywords=keywords, probes=probes)
    assert _refused(_md(text)).code == "skill_frontmatter_invalid"


@pytest.mark.parametrize("keyword", ["a +", "+ b", "a + b + c", "+", "a + ", "a +  + b"])
@pytest.mark.parametrize("form", ["metadata", "matcher", "probes"])
def test_a_co_occurrence_keyword_with_a_blank_side_or_two_marks_is_refused(
    keyword: str, form: str
) -> None:
    text = {
        "metadata": spec_skill_md("frete", keywords=f"frete, {keyword}"),
        "probes": spec_skill_md("frete", keywords="frete", probes=keyword),
        "matcher": spec_skill_md("frete", extra={"matcher": {"any_keywords": ["frete", keyword]}}),
    }[form]
    error = _refused(_md(text))
    assert error.code == "skill_frontmatter_invalid"
    assert " + " in error.message


def test_co_occurrence_keywords_and_plus_signs_inside_words_are_accepted() -> None:
    keywords = "agend* + amanha|sexta|#, quero marcar + hoje, c++, 1+1"
    package = parse_skill_package(_md(spec_skill_md("frete", keywords=keywords)))
    assert package.matcher.any_keywords == (
        "agend* + amanha|sexta|#",
        "quero marcar + hoje",
        "c++",
        "1+1",
    )


def test_metadata_keywords_at_the_bounds_are_accepted() -> None:
    keywords = ",".join(f"k{i}" for i in range(MAX_KEYWORDS - 1)) + ", " + "k" * MAX_KEYWORD_CHARS
    package = parse_skill_package(_md(spec_skill_md("frete", keywords=keywords)))
    assert len(package.matcher.any_keywords) == MAX_KEYWORDS


def _keyword_list(chars: int) -> str:
    """Keywords of MAX_KEYWORD_CHARS joined by commas, the last one cut to `chars` in all."""
    full = MAX_KEYWORD_CHARS + 1  # a keyword and its comma
    count = -(-chars // full)
    last = chars - (count - 1) * full
    return ",".join(["k" * MAX_KEYWORD_CHARS] * (count - 1) + ["k" * last])


@pytest.mark.parametrize("field", ["keywords", "probes"])
def test_a_keyword_list_may_take_more_than_other_metadata_values_up_to_its_cap(
    field: str,
) -> None:
    at_cap = _keyword_list(MAX_KEYWORD_LIST_CHARS)
    assert len(at_cap) == MAX_KEYWORD_LIST_CHARS > MAX_FIELD_CHARS
    assert len(at_cap.split(",")) <= MAX_KEYWORDS
    base = {"keywords": "frete", field: at_cap}
    package = parse_skill_package(_md(spec_skill_md("frete", **base)))
    listed = package.matcher.any_keywords if field == "keywords" else package.matcher.probe_keywords
    assert ",".join(listed) == at_cap
    over = {"keywords": "frete", field: _keyword_list(MAX_KEYWORD_LIST_CHARS + 1)}
    error = _refused(_md(spec_skill_md("frete", **over)))
    key = "skillet-keywords" if field == "keywords" else "skillet-probe-keywords"
    assert error.code == "skill_frontmatter_invalid"
    assert error.message == f"metadata.{key} do SKILL.md pode ter até 3000 caracteres."


def test_other_metadata_values_keep_their_cap() -> None:
    at_cap = spec_skill_md("frete", extra={"metadata": {"author": "a" * MAX_FIELD_CHARS}})
    assert parse_skill_package(_md(at_cap)).name == "frete"
    over = spec_skill_md("frete", extra={"metadata": {"author": "a" * (MAX_FIELD_CHARS + 1)}})
    error = _refused(_md(over))
    assert error.code == "skill_frontmatter_invalid" and "1024 caracteres" in error.message


@pytest.mark.parametrize("value", ["off", "2024", "yes"])
def test_unquoted_non_text_keywords_ask_for_quotes(value: str) -> None:
    text = f"---\nname: frete\ndescription: d\nmetadata:\n  skillet-keywords: {value}\n---\nc\n"
    error = _refused(_md(text))
    assert error.code == "skill_frontmatter_invalid" and "aspas" in error.message


# --- index-only skills ------------------------------------------------------------------------


def test_a_skill_without_keywords_is_index_only_and_has_no_line_cap() -> None:
    text = spec_skill_md("longa", body_lines=MAX_BODY_LINES * 3)
    package = parse_skill_package(_md(text))
    assert package.matcher == SkillMatcher()
    assert len(package.body.splitlines()) > MAX_BODY_LINES


def test_an_index_only_skill_md_is_bounded_by_the_file_limit_only() -> None:
    head = spec_skill_md("enorme")
    text = head + "x" * (MAX_SKILL_MD_CHARS * 2)
    assert parse_skill_package(_md(text)).name == "enorme"
    limits = PackageLimits(max_file_bytes=MAX_SKILL_MD_CHARS)
    assert _refused(_md(text), limits).code == "skill_file_too_large"


def test_an_injected_body_keeps_both_caps() -> None:
    lines = spec_skill_md("longa", keywords="frete", body_lines=MAX_BODY_LINES + 5)
    assert _refused(_md(lines)).code == "skill_body_too_long"
    chars = spec_skill_md("longa", keywords="frete") + "x" * MAX_SKILL_MD_CHARS
    assert _refused(_md(chars)).code == "skill_body_too_long"


def test_the_frontmatter_is_still_capped_for_an_index_only_skill() -> None:
    text = spec_skill_md("grande", extra={"x": "y" * 5000})
    assert _refused(_md(text)).code == "skill_frontmatter_invalid"


def test_nonstandard_keys_are_recorded_for_export() -> None:
    from skills.package.skill_md import parse_skill_md

    legacy = spec_skill_md("frete", extra={"matcher": {"any_keywords": ["frete"]}, "x": 1})
    assert parse_skill_md(legacy.encode()).nonstandard_keys == ("matcher", "x")
    assert parse_skill_md(spec_skill_md("frete", keywords="a").encode()).nonstandard_keys == ()
    assert yaml.safe_load(legacy.split("---")[1])["name"] == "frete"
