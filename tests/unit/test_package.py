"""skills.package.parser: accepted layouts, every refusal code, each limit at and over its bound."""

from __future__ import annotations

import hashlib
import io
import random
import stat
import struct
import tracemalloc
import unicodedata
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
import yaml

from core.errors import SkilletError
from skills.models import FileKind, ManifestEntry
from skills.package import (
    PackageErrorCode,
    SkillPackage,
    SkillPackageError,
    parse_skill_package,
)
from skills.package.limits import (
    BYTES_PER_MIB,
    MAX_ARCHIVE_ENTRIES,
    MAX_BODY_LINES,
    MAX_DESCRIPTION_CHARS,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_FRONTMATTER_BYTES,
    MAX_FRONTMATTER_DEPTH,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_SKILL_MD_CHARS,
    MAX_TOTAL_BYTES,
    READ_CHUNK_BYTES,
)

Entry = tuple[str | zipfile.ZipInfo, bytes | str]
BODY = "Quando o cliente perguntar sobre frete, explique a regra e confirme o CEP."


def skill_md(
    *,
    name: Any = "frete-gratis",
    description: Any = "Explica a política de frete grátis ao cliente.",
    matcher: Any = None,
    body: str = BODY,
    **extra: Any,
) -> str:
    meta: dict[str, Any] = {"name": name, "description": description}
    meta["matcher"] = (
        {"any_keywords": ["frete", "entrega"], "probe_keywords": ["envio"]}
        if matcher is None
        else matcher
    )
    meta.update(extra)
    frontmatter = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
    return f"---\n{frontmatter}---\n{body}\n"


def make_zip(
    files: Mapping[str, bytes | str],
    *,
    compression: int = zipfile.ZIP_DEFLATED,
    before_close: Callable[[zipfile.ZipFile], None] | None = None,
) -> bytes:
    return zip_entries(files.items(), compression=compression, before_close=before_close)


def zip_entries(
    entries: Iterable[Entry],
    *,
    compression: int = zipfile.ZIP_DEFLATED,
    before_close: Callable[[zipfile.ZipFile], None] | None = None,
) -> bytes:
    """Build a zip in memory; `before_close` may edit ZipInfos, which only the central
    directory (what readers trust) then records."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on the duplicate names we craft
        for name, data in entries:
            archive.writestr(name, data)
        if before_close is not None:
            before_close(archive)
    return buffer.getvalue()


def valid_zip(files: Mapping[str, bytes | str] | None = None) -> bytes:
    return make_zip({"SKILL.md": skill_md(), **(files or {})})


def refused(data: bytes) -> str:
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(data)
    return caught.value.code


def refused_md(text: str | bytes) -> str:
    return refused(make_zip({"SKILL.md": text}))


# --- accepted packages -----------------------------------------------------------------------


def test_root_layout_parses_frontmatter_body_and_files() -> None:
    table = "# Tabela de frete\nSP: grátis\n".encode()
    package = parse_skill_package(valid_zip({"references/tabela.md": table}))

    assert package.name == "frete-gratis"
    assert package.description == "Explica a política de frete grátis ao cliente."
    assert package.matcher.any_keywords == ("frete", "entrega")
    assert package.matcher.probe_keywords == ("envio",)
    assert package.body == BODY
    assert package.skill_md == skill_md().encode()
    [reference] = package.files
    assert reference.path == "references/tabela.md"
    assert reference.kind is FileKind.REFERENCE
    assert reference.data == table
    assert reference.size == len(table)
    assert reference.sha256 == hashlib.sha256(table).hexdigest()


def test_single_top_folder_is_stripped() -> None:
    data = make_zip(
        {
            "frete-gratis/SKILL.md": skill_md(),
            "frete-gratis/references/tabela.md": "SP: grátis",
            "frete-gratis/assets/logo.png": b"\x89PNG",
        }
    )
    package = parse_skill_package(data)
    assert [f.path for f in package.files] == ["assets/logo.png", "references/tabela.md"]
    assert package.name == "frete-gratis"


def test_macosx_ds_store_and_directory_entries_are_ignored() -> None:
    data = make_zip(
        {
            "frete/": b"",
            "frete/SKILL.md": skill_md(),
            "frete/.DS_Store": b"\0\0\0\1Bud1",
            "frete/references/": b"",
            "frete/references/.DS_Store": b"\0",
            "frete/references/tabela.md": "SP: grátis",
            "__MACOSX/": b"",
            "__MACOSX/frete/._SKILL.md": b"\0\5\26\7 AppleDouble",
            "__MACOSX/frete/references/._tabela.md": b"\xff\xfe",
        }
    )
    package = parse_skill_package(data)
    assert [f.path for f in package.files] == ["references/tabela.md"]


@pytest.mark.parametrize("extension", ["md", "txt", "json", "csv", "MD", "py", "xsd", ""])
def test_text_under_references_is_a_reference_whatever_its_extension(extension: str) -> None:
    [file] = parse_skill_package(valid_zip({f"references/a.{extension}": "texto"})).files
    assert file.kind is FileKind.REFERENCE


@pytest.mark.parametrize("extension", ["png", "PNG", "pdf", "ogg", "html", "exe", "ttf"])
def test_anything_under_assets_is_an_asset(extension: str) -> None:
    payload = bytes(range(256))  # not UTF-8: assets are binary and never decoded
    [file] = parse_skill_package(valid_zip({f"assets/a.{extension}": payload})).files
    assert file.kind is FileKind.ASSET
    assert file.data == payload


BINARY = b"\x89PNG\r\n\x1a\n\0\0\xff"


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("LICENSE.txt", "Apache License 2.0", FileKind.REFERENCE),
        ("LICENSE", "MIT License", FileKind.REFERENCE),
        ("reference.md", "# Referência", FileKind.REFERENCE),
        ("README.md", "leia", FileKind.REFERENCE),
        ("examples/exemplo.py", "print('oi')", FileKind.REFERENCE),
        ("outra/pasta/a.md", "texto", FileKind.REFERENCE),
        ("References/a.md", "pasta com outra grafia: não é references/", FileKind.REFERENCE),
        ("scripts/run.sh", "#!/bin/sh\necho oi", FileKind.SCRIPT),
        ("scripts/lib/ooxml.py", "import os", FileKind.SCRIPT),
        ("scripts/pacote.tar.gz", BINARY, FileKind.ASSET),
        ("templates/viewer.html", "<html></html>", FileKind.TEMPLATE),
        ("templates/logo.png", BINARY, FileKind.ASSET),
        ("assets/pagina.html", "<html></html>", FileKind.TEMPLATE),
        ("assets/precos.csv", "produto;preço", FileKind.TEMPLATE),
        ("canvas-fonts/Fonte.ttf", BINARY, FileKind.ASSET),
        ("theme-showcase.pdf", BINARY, FileKind.ASSET),
        ("vazio.txt", "", FileKind.REFERENCE),
        ("latin1.txt", "promoção".encode("latin-1"), FileKind.ASSET),
    ],
)
def test_any_folder_and_extension_is_stored_with_its_kind(
    name: str, content: str | bytes, kind: FileKind
) -> None:
    data = content.encode() if isinstance(content, str) else content
    [file] = parse_skill_package(valid_zip({name: data})).files
    assert (file.path, file.kind, file.data) == (name, kind, data)


def test_nested_folders_inside_references_and_assets_are_accepted() -> None:
    package = parse_skill_package(
        valid_zip({"references/precos/2024.csv": "a,b", "assets/fotos/sala.jpg": b"\xff"})
    )
    assert [f.path for f in package.files] == [
        "assets/fotos/sala.jpg",
        "references/precos/2024.csv",
    ]


def test_manifest_mirrors_files_sorted_by_path() -> None:
    package = parse_skill_package(
        valid_zip({"references/b.md": "bb", "assets/a.png": b"\x89P", "references/a.txt": "a"})
    )
    assert package.manifest == tuple(
        ManifestEntry(path, len(data), hashlib.sha256(data).hexdigest(), kind)
        for path, data, kind in [
            ("assets/a.png", b"\x89P", FileKind.ASSET),
            ("references/a.txt", b"a", FileKind.REFERENCE),
            ("references/b.md", b"bb", FileKind.REFERENCE),
        ]
    )


def test_frontmatter_tolerates_bom_crlf_unknown_keys_and_missing_probe_keywords() -> None:
    text = skill_md(matcher={"any_keywords": [" frete "]}, license="MIT", body="a\n\nb")
    raw = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    package = parse_skill_package(make_zip({"SKILL.md": raw}))
    assert package.matcher.any_keywords == ("frete",)
    assert package.matcher.probe_keywords == ()
    assert package.body == "a\n\nb"
    assert package.skill_md == raw


def test_error_is_a_skillet_error_with_a_one_line_message() -> None:
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(make_zip({"leia.txt": "oi"}))
    error = caught.value
    assert isinstance(error, SkilletError)
    assert error.retryable is False
    assert type(error.code) is str
    assert error.code == "skill_md_missing"
    assert "SKILL.md" in error.message
    assert "\n" not in str(error)


def test_error_codes_are_the_contract() -> None:
    assert {code.value for code in PackageErrorCode} == {
        "skill_not_a_zip",
        "skill_md_missing",
        "skill_frontmatter_invalid",
        "skill_body_too_long",
        "skill_unsafe_path",
        "skill_extension_not_allowed",
        "skill_too_many_files",
        "skill_file_too_large",
        "skill_too_large",
        "skill_duplicate_entry",
    }


# --- content_sha256 --------------------------------------------------------------------------


def _content(files: Mapping[str, bytes | str]) -> SkillPackage:
    return parse_skill_package(valid_zip(files))


def test_content_sha256_ignores_zip_metadata_and_top_folder() -> None:
    files: dict[str, bytes | str] = {
        "SKILL.md": skill_md(),
        "references/a.md": "a",
        "assets/b.png": b"b",
    }
    old = [
        (zipfile.ZipInfo(name, date_time=(1990, 1, 1, 0, 0, 0)), data)
        for name, data in files.items()
    ]
    stored = zip_entries(reversed(old), compression=zipfile.ZIP_STORED)
    wrapped = make_zip({f"pasta/{name}": data for name, data in files.items()})
    first = parse_skill_package(stored).content_sha256
    assert first == parse_skill_package(wrapped).content_sha256
    assert len(first) == 64
    assert first == parse_skill_package(stored).content_sha256


def test_content_sha256_changes_when_any_byte_or_path_changes() -> None:
    base = _content({"references/a.md": "abc", "assets/b.png": b"b"}).content_sha256
    variants = [
        _content({"references/a.md": "abd", "assets/b.png": b"b"}),
        _content({"references/a.md": "abc", "assets/b.png": b"c"}),
        _content({"references/c.md": "abc", "assets/b.png": b"b"}),
        _content({"references/a.md": "abc"}),
        parse_skill_package(
            make_zip(
                {
                    "SKILL.md": skill_md(body=BODY + "!"),
                    "references/a.md": "abc",
                    "assets/b.png": b"b",
                }
            )
        ),
    ]
    digests = {variant.content_sha256 for variant in variants}
    assert base not in digests
    assert len(digests) == len(variants)


# --- skill_not_a_zip -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"PK", b"isto nao e um zip", b"PK\x05\x06" + b"\0" * 10, valid_zip()[:-30]],
    ids=["empty", "magic-only", "text", "eocd-truncated", "truncated"],
)
def test_not_a_zip(data: bytes) -> None:
    assert refused(data) == "skill_not_a_zip"


def test_encrypted_entry_is_refused() -> None:
    def encrypt_flag(archive: zipfile.ZipFile) -> None:
        archive.getinfo("references/a.md").flag_bits |= 0x1

    assert parse_skill_package(make_zip({"SKILL.md": skill_md(), "references/a.md": "a"}))
    data = make_zip({"SKILL.md": skill_md(), "references/a.md": "a"}, before_close=encrypt_flag)
    assert refused(data) == "skill_not_a_zip"


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compression_without_output_bound_is_refused(compression: int) -> None:
    data = make_zip({"SKILL.md": skill_md()}, compression=compression)
    assert refused(data) == "skill_not_a_zip"


def test_corrupt_member_data_is_refused() -> None:
    data = bytearray(make_zip({"SKILL.md": skill_md()}, compression=zipfile.ZIP_STORED))
    offset = data.index(b"frete-gratis")
    data[offset] ^= 0xFF  # CRC no longer matches
    assert refused(bytes(data)) == "skill_not_a_zip"


def test_mutated_zips_only_ever_parse_or_raise_package_error() -> None:
    original = valid_zip({"references/a.md": "abc" * 50, "assets/b.png": b"b" * 100})
    rng = random.Random(20240501)
    outcomes: set[str] = set()
    for _ in range(400):
        data = bytearray(original)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data))]
        try:
            parse_skill_package(bytes(data))
            outcomes.add("ok")
        except SkillPackageError as error:
            outcomes.add(error.code)
    assert "skill_not_a_zip" in outcomes


# --- skill_md_missing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"leia.txt": "oi"},
        {"skill.md": skill_md()},
        {"references/SKILL.md": skill_md(), "assets/a.png": b"a"},
        {"a/SKILL.md": skill_md(), "b/SKILL.md": skill_md()},
        {"a/SKILL.md": skill_md(), "solto.md": "x"},
        {"a/b/SKILL.md": skill_md()},
        {"__MACOSX/SKILL.md": skill_md(), "x/": ""},
    ],
    ids=[
        "empty",
        "no-skill-md",
        "lowercase",
        "in-references",
        "two-folders",
        "folder-and-file",
        "two-levels",
        "only-ignored",
    ],
)
def test_skill_md_missing(files: dict[str, str]) -> None:
    assert refused(make_zip(files)) == "skill_md_missing"


# --- skill_frontmatter_invalid ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        BODY,
        "---\nname: frete\n",
        "---\nname: [\n---\ncorpo",
        "---\n- uma\n- lista\n---\ncorpo",
        "---\n---\ncorpo",
        skill_md(name=None),
        skill_md(name="Frete"),
        skill_md(name="frete_gratis"),
        skill_md(name="-frete"),
        skill_md(name="frete-"),
        skill_md(name="frete--gratis"),
        skill_md(name="preço"),
        skill_md(name=""),
        skill_md(name=123),
        skill_md(description=None),
        skill_md(description="   "),
        skill_md(description="use <b>negrito</b>"),
        skill_md(description="a > b"),
        skill_md(description=["lista"]),
        skill_md(matcher="frete"),
        skill_md(matcher={}),
        skill_md(matcher={"any_keywords": []}),
        skill_md(matcher={"any_keywords": "frete"}),
        skill_md(matcher={"any_keywords": ["frete", ""]}),
        skill_md(matcher={"any_keywords": ["frete", "  "]}),
        skill_md(matcher={"any_keywords": ["frete", 2024]}),
        skill_md(matcher={"any_keywords": ["frete"], "probe_keywords": "envio"}),
        skill_md(matcher={"any_keywords": ["frete"], "probe_keyword": ["envio"]}),
        skill_md(body=""),
        skill_md(body="   \n\n  "),
        "---\nname: !!python/object/apply:os.system ['true']\n---\ncorpo",
        "---\nname: frete\ncriado: 2024-13-45\n---\ncorpo",
        "---\nx: " + "[" * 5000 + "\n---\ncorpo",
    ],
)
def test_frontmatter_invalid(text: str) -> None:
    assert refused_md(text) == "skill_frontmatter_invalid"


def test_non_utf8_skill_md_is_refused() -> None:
    assert refused_md(skill_md(body="promoção").encode("latin-1")) == "skill_frontmatter_invalid"


def test_name_length_at_and_over_the_limit() -> None:
    at_limit = "a" * MAX_NAME_CHARS
    assert parse_skill_package(make_zip({"SKILL.md": skill_md(name=at_limit)})).name == at_limit
    assert refused_md(skill_md(name="a" * (MAX_NAME_CHARS + 1))) == "skill_frontmatter_invalid"


def test_description_length_at_and_over_the_limit() -> None:
    at_limit = "d" * MAX_DESCRIPTION_CHARS
    package = parse_skill_package(make_zip({"SKILL.md": skill_md(description=at_limit)}))
    assert package.description == at_limit
    over = "d" * (MAX_DESCRIPTION_CHARS + 1)
    assert refused_md(skill_md(description=over)) == "skill_frontmatter_invalid"


@pytest.mark.parametrize("field", ["any_keywords", "probe_keywords"])
def test_keyword_count_and_length_at_and_over_the_limits(field: str) -> None:
    def md(keywords: list[str]) -> str:
        return skill_md(matcher={"any_keywords": ["frete"], field: keywords})

    at_limit = [f"k{i}" for i in range(MAX_KEYWORDS - 1)] + ["k" * MAX_KEYWORD_CHARS]
    package = parse_skill_package(make_zip({"SKILL.md": md(at_limit)}))
    assert getattr(package.matcher, field)[-1] == "k" * MAX_KEYWORD_CHARS
    assert len(getattr(package.matcher, field)) == MAX_KEYWORDS
    assert refused_md(md([f"k{i}" for i in range(MAX_KEYWORDS + 1)])) == "skill_frontmatter_invalid"
    assert refused_md(md(["k" * (MAX_KEYWORD_CHARS + 1)])) == "skill_frontmatter_invalid"


def test_frontmatter_size_at_and_over_the_limit() -> None:
    def md_with_frontmatter_bytes(size_bytes: int) -> str:
        text = skill_md(notes="")
        frontmatter = text.split("---\n")[1].rstrip("\n")
        padding = size_bytes - len(frontmatter.encode()) + len("''")
        return text.replace("notes: ''", "notes: " + "x" * padding)

    at_limit = md_with_frontmatter_bytes(MAX_FRONTMATTER_BYTES)
    assert len(at_limit.split("---\n")[1].rstrip("\n").encode()) == MAX_FRONTMATTER_BYTES
    assert parse_skill_package(make_zip({"SKILL.md": at_limit})).name == "frete-gratis"
    over = md_with_frontmatter_bytes(MAX_FRONTMATTER_BYTES + 1)
    assert refused_md(over) == "skill_frontmatter_invalid"


def _nested(depth: int) -> Any:
    """`depth` collections: the root map holds an unknown key, so `depth - 1` below it."""
    value: Any = "x"
    for level in range(depth - 1):
        value = {"k": value} if level % 2 else [value]
    return value


def test_frontmatter_nesting_at_and_over_the_depth_limit() -> None:
    at_limit = skill_md(**{"x-extra": _nested(MAX_FRONTMATTER_DEPTH)})
    assert parse_skill_package(make_zip({"SKILL.md": at_limit})).name == "frete-gratis"
    over = skill_md(**{"x-extra": _nested(MAX_FRONTMATTER_DEPTH + 1)})
    assert refused_md(over) == "skill_frontmatter_invalid"


@pytest.mark.parametrize(
    "extra",
    [
        "base: &base {a: 1}",
        "base: &base 1\ncopia: *base",
        "lista: [&item x]",
        "outro: {<<: {a: 1}}",
        "<<: {a: 1}",
        "outro: {!!merge mescla: {a: 1}}",
    ],
    ids=["anchor", "alias", "anchored-scalar", "merge-key", "root-merge", "merge-tag"],
)
def test_frontmatter_anchors_aliases_and_merge_keys_are_refused(extra: str) -> None:
    text = skill_md().replace("---\nname:", f"---\n{extra}\nname:", 1)
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(make_zip({"SKILL.md": text}))
    assert caught.value.code == "skill_frontmatter_invalid"
    assert "&" in caught.value.message or "<<" in caught.value.message


def test_quoted_ampersand_asterisk_and_merge_text_are_plain_text() -> None:
    text = skill_md(description="Perguntas & respostas *importantes*", notes="<<")
    assert "'<<'" in text  # safe_dump quotes it, so it is text, not a merge key
    package = parse_skill_package(make_zip({"SKILL.md": text}))
    assert package.description == "Perguntas & respostas *importantes*"


# --- skill_body_too_long ---------------------------------------------------------------------


def test_body_lines_at_and_over_the_limit() -> None:
    at_limit = "\n".join(f"linha {i}" for i in range(MAX_BODY_LINES))
    package = parse_skill_package(make_zip({"SKILL.md": skill_md(body=at_limit + "\n\n\n")}))
    assert package.body == at_limit
    over = "\n".join(f"linha {i}" for i in range(MAX_BODY_LINES + 1))
    assert refused_md(skill_md(body=over)) == "skill_body_too_long"


def test_blank_lines_inside_the_body_count() -> None:
    over = "a" + "\n" * MAX_BODY_LINES + "b"
    assert refused_md(skill_md(body=over)) == "skill_body_too_long"


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x0b", "\x0c", "\x85", "\x1e"])
def test_every_line_break_python_knows_counts_as_a_line(separator: str) -> None:
    at_limit = separator.join(["linha"] * MAX_BODY_LINES)
    assert parse_skill_package(make_zip({"SKILL.md": skill_md(body=at_limit)})).body == at_limit
    over = separator.join(["linha"] * (MAX_BODY_LINES + 1))
    assert refused_md(skill_md(body=over)) == "skill_body_too_long"


def test_skill_md_characters_at_and_over_the_limit() -> None:
    overhead = len(skill_md(body=""))  # everything but the body
    at_limit = skill_md(body="é" * (MAX_SKILL_MD_CHARS - overhead))
    assert len(at_limit) == MAX_SKILL_MD_CHARS
    assert len(parse_skill_package(make_zip({"SKILL.md": at_limit})).body) > 90_000
    over = skill_md(body="é" * (MAX_SKILL_MD_CHARS - overhead + 1))
    assert refused_md(over) == "skill_body_too_long"


# --- skill_unsafe_path -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../evil.md",
        "references/../../evil.md",
        "references/..",
        "/etc/passwd",
        "/references/a.md",
        "references\\a.md",
        "..\\..\\evil.md",
        "C:/evil.md",
        "c:evil.md",
        "references/./a.md",
        "references//a.md",
        "./SKILL.md",
        "references/a\n.md",
        "references/\u202egpj.md",
        "__MACOSX/../../evil",
        "references/" + "a" * (MAX_PATH_CHARS - len("references/.md") + 1) + ".md",
    ],
)
def test_unsafe_paths_are_refused(name: str) -> None:
    assert refused(valid_zip({name: "x"})) == "skill_unsafe_path"


@pytest.mark.parametrize("name", ["", "/"])
def test_empty_names_are_refused(name: str) -> None:
    data = zip_entries([("SKILL.md", skill_md()), (zipfile.ZipInfo(name), "x")])
    assert zipfile.ZipFile(io.BytesIO(data)).namelist()[-1] == name
    assert refused(data) == "skill_unsafe_path"


def test_path_length_at_the_limit_is_accepted() -> None:
    name = "references/" + "a" * (MAX_PATH_CHARS - len("references/.md")) + ".md"
    assert len(name) == MAX_PATH_CHARS
    [file] = parse_skill_package(valid_zip({name: "x"})).files
    assert file.path == name


def test_long_ignored_names_do_not_count_against_the_path_limit() -> None:
    name = "__MACOSX/._" + "a" * MAX_PATH_CHARS
    assert parse_skill_package(valid_zip({name: b"\0"})).files == ()


def test_name_hiding_a_nul_byte_is_refused() -> None:
    data = valid_zip({"references/a.mdZ.exe": "x"}).replace(b"a.mdZ.exe", b"a.md\0.exe")
    assert zipfile.ZipFile(io.BytesIO(data)).namelist()[-1] == "references/a.md"
    assert refused(data) == "skill_unsafe_path"


@pytest.mark.parametrize("name", ["references/link.md", "assets/pasta/"])
def test_symlink_entries_are_refused(name: str) -> None:
    link = zipfile.ZipInfo(name)
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = zip_entries([("SKILL.md", skill_md()), (link, "../../../etc/passwd")])
    assert refused(data) == "skill_unsafe_path"


def test_regular_unix_file_modes_are_accepted() -> None:
    regular = zipfile.ZipInfo("references/a.md")
    regular.create_system = 3
    regular.external_attr = (stat.S_IFREG | 0o644) << 16
    package = parse_skill_package(zip_entries([("SKILL.md", skill_md()), (regular, "a")]))
    assert [f.path for f in package.files] == ["references/a.md"]


# --- skill_extension_not_allowed -------------------------------------------------------------


@pytest.mark.parametrize("content", ["promoção".encode("latin-1"), BINARY])
def test_binary_under_references_is_refused(content: bytes) -> None:
    assert refused(valid_zip({"references/tabela.txt": content})) == "skill_extension_not_allowed"


# --- skill_duplicate_entry -------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ("references/a.md", "references/a.md"),
        ("references/a.md", "references/A.md"),
        ("skill.md",),
        ("references/" + unicodedata.normalize("NFD", "preço.md"), "references/preço.md"),
    ],
    ids=["same", "case", "skill-md-case", "nfd-nfc"],
)
def test_duplicate_entries_are_refused(names: tuple[str, ...]) -> None:
    data = zip_entries([("SKILL.md", skill_md()), *((name, "texto") for name in names)])
    assert refused(data) == "skill_duplicate_entry"


def test_nfd_names_are_stored_as_nfc() -> None:
    nfd = "references/" + unicodedata.normalize("NFD", "preço.md")
    [file] = parse_skill_package(valid_zip({nfd: "x"})).files
    assert file.path == "references/preço.md"


# --- skill_too_many_files --------------------------------------------------------------------


def _with_references(count: int) -> bytes:
    files: dict[str, bytes | str] = {"SKILL.md": skill_md(), "references/": b""}
    files.update({f"references/f{i}.md": "x" for i in range(count)})
    return make_zip(files)


def test_file_count_at_the_limit_counts_skill_md_and_not_directories() -> None:
    package = parse_skill_package(_with_references(MAX_FILES - 1))
    assert len(package.files) + 1 == MAX_FILES


def test_file_count_over_the_limit_is_refused() -> None:
    assert refused(_with_references(MAX_FILES)) == "skill_too_many_files"


def _with_ignored_entries(count: int) -> bytes:
    """SKILL.md plus `count - 1` ignored entries: AppleDouble twins and directories."""
    files: dict[str, bytes | str] = {"SKILL.md": skill_md()}
    files.update({f"__MACOSX/d{i}/" if i % 2 else f"__MACOSX/._{i}": b"" for i in range(count - 1)})
    return make_zip(files)


def test_ignored_entries_count_toward_the_entry_limit() -> None:
    assert parse_skill_package(_with_ignored_entries(MAX_ARCHIVE_ENTRIES)).files == ()
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(_with_ignored_entries(MAX_ARCHIVE_ENTRIES + 1))
    assert caught.value.code == "skill_too_many_files"
    assert "__MACOSX" in caught.value.message and str(MAX_ARCHIVE_ENTRIES) in caught.value.message


def test_entry_limit_is_checked_before_zipfile_reads_the_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _with_ignored_entries(MAX_ARCHIVE_ENTRIES + 1)
    monkeypatch.setattr(zipfile, "ZipFile", None)  # any use would raise TypeError
    assert refused(data) == "skill_too_many_files"


# --- sizes: declared, then actually decompressed ---------------------------------------------


def test_file_of_exactly_the_cap_is_accepted_and_one_byte_more_is_refused() -> None:
    [file] = parse_skill_package(valid_zip({"assets/a.png": bytes(MAX_FILE_BYTES)})).files
    assert file.size == MAX_FILE_BYTES
    assert refused(valid_zip({"assets/a.png": bytes(MAX_FILE_BYTES + 1)})) == (
        "skill_file_too_large"
    )


def _filling_total(extra_bytes: int) -> bytes:
    """SKILL.md plus assets of at most MAX_FILE_BYTES each totalling MAX_TOTAL_BYTES + extra."""
    md = skill_md().encode()
    remaining = MAX_TOTAL_BYTES - len(md) + extra_bytes
    files: dict[str, bytes | str] = {"SKILL.md": md}
    index = 0
    while remaining > 0:
        size = min(MAX_FILE_BYTES, remaining)
        files[f"assets/a{index}.png"] = bytes(size)
        remaining -= size
        index += 1
    return make_zip(files)


def test_total_of_exactly_the_cap_is_accepted() -> None:
    package = parse_skill_package(_filling_total(0))
    assert len(package.skill_md) + sum(f.size for f in package.files) == MAX_TOTAL_BYTES


def test_total_one_byte_over_the_cap_is_refused() -> None:
    assert refused(_filling_total(1)) == "skill_too_large"


def _declare(sizes: dict[str, int]) -> Callable[[zipfile.ZipFile], None]:
    def patch(archive: zipfile.ZipFile) -> None:
        for name, size in sizes.items():
            archive.getinfo(name).file_size = size

    return patch


def test_declared_file_size_is_refused_before_decompressing() -> None:
    # A few bytes that claim to inflate to 2 GiB. If the parser decompressed first, zipfile
    # would return the 3 real bytes with a valid CRC and the package would be accepted.
    files: dict[str, bytes | str] = {"SKILL.md": skill_md(), "assets/bomba.png": b"abc"}
    honest = make_zip(files)
    assert parse_skill_package(honest).files[0].size == 3
    lying = make_zip(files, before_close=_declare({"assets/bomba.png": 2 * 1024 * BYTES_PER_MIB}))
    assert len(lying) < 4096
    assert refused(lying) == "skill_file_too_large"


def test_declared_total_size_is_refused_before_decompressing() -> None:
    names = [f"assets/a{i}.png" for i in range(MAX_TOTAL_BYTES // MAX_FILE_BYTES)]
    files: dict[str, bytes | str] = {"SKILL.md": skill_md(), **{name: b"a" for name in names}}
    assert len(parse_skill_package(make_zip(files)).files) == len(names)
    lying = make_zip(files, before_close=_declare(dict.fromkeys(names, MAX_FILE_BYTES)))
    assert refused(lying) == "skill_too_large"


@pytest.fixture(scope="module")
def inflating_zip() -> tuple[bytes, int]:
    """~256 KB of deflate that inflates to 256 MiB of zeros, declared honestly."""
    inflated_bytes = 256 * BYTES_PER_MIB
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("SKILL.md", skill_md())
        with archive.open("assets/bomba.png", "w", force_zip64=True) as member:
            for _ in range(inflated_bytes // BYTES_PER_MIB):
                member.write(bytes(BYTES_PER_MIB))
    return buffer.getvalue(), inflated_bytes


def _peak_traced_bytes(data: bytes) -> tuple[int, str | None]:
    tracemalloc.start()
    try:
        parse_skill_package(data)
        code = None
    except SkillPackageError as error:
        code = error.code
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, code


def _patch_central_directory(data: bytes, name: str, *, crc: int, file_size: int) -> bytes:
    """Overwrite one entry's CRC and uncompressed size in the central directory (what zipfile
    trusts), leaving the local header and the compressed bytes as they are."""
    patched = bytearray(data)
    end_of_directory = data.rindex(b"PK\x05\x06")
    (offset,) = struct.unpack_from("<I", data, end_of_directory + 16)
    while data[offset : offset + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, offset + 28)
        if data[offset + 46 : offset + 46 + name_len] == name.encode():
            struct.pack_into("<I", patched, offset + 16, crc)
            struct.pack_into("<I", patched, offset + 24, file_size)
            return bytes(patched)
        offset += 46 + name_len + extra_len + comment_len
    raise AssertionError(f"{name} not in the central directory")


def test_honestly_declared_bomb_is_refused_without_inflating(
    inflating_zip: tuple[bytes, int],
) -> None:
    data, inflated_bytes = inflating_zip
    assert len(data) < inflated_bytes // 500
    peak, code = _peak_traced_bytes(data)
    assert code == "skill_file_too_large"
    assert peak < BYTES_PER_MIB


def test_bomb_declaring_a_small_size_stops_at_that_size(
    inflating_zip: tuple[bytes, int],
) -> None:
    # zipfile inflates only up to the declared size, then the CRC of what it read mismatches.
    data, _ = inflating_zip
    crc = zlib.crc32(bytes(1000))  # even a matching CRC cannot make the reader go further
    lying = _patch_central_directory(data, "assets/bomba.png", crc=crc + 1, file_size=1000)
    peak, code = _peak_traced_bytes(lying)
    assert code == "skill_not_a_zip"
    assert peak < 2 * BYTES_PER_MIB


def test_bomb_declaring_the_cap_with_a_matching_crc_yields_only_the_cap(
    inflating_zip: tuple[bytes, int],
) -> None:
    data, _ = inflating_zip
    crc = zlib.crc32(bytes(MAX_FILE_BYTES))
    lying = _patch_central_directory(data, "assets/bomba.png", crc=crc, file_size=MAX_FILE_BYTES)
    [file] = parse_skill_package(lying).files
    assert file.size == MAX_FILE_BYTES
    peak, code = _peak_traced_bytes(lying)
    assert code is None
    assert peak < 4 * MAX_FILE_BYTES


class _LyingMember(io.RawIOBase):
    """A member reader that ignores the declared size and serves `size_bytes` (what a lying
    archive would produce if the zip reader trusted the compressed stream)."""

    def __init__(self, size_bytes: int) -> None:
        self.served_bytes = 0
        self.largest_request_bytes = 0
        self._size_bytes = size_bytes

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            raise AssertionError("the parser must read in bounded chunks")
        self.largest_request_bytes = max(self.largest_request_bytes, size)
        served = min(size, self._size_bytes - self.served_bytes)
        self.served_bytes += served
        return b"x" * served


def _lying_members(
    monkeypatch: pytest.MonkeyPatch, sizes: dict[str, int]
) -> dict[str, _LyingMember]:
    real_open = zipfile.ZipFile.open
    members: dict[str, _LyingMember] = {}

    def open_member(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        filename = name.filename if isinstance(name, zipfile.ZipInfo) else name
        if filename not in sizes:
            return real_open(self, name, *args, **kwargs)
        members[filename] = _LyingMember(sizes[filename])
        return members[filename]

    monkeypatch.setattr(zipfile.ZipFile, "open", open_member)
    return members


def test_decompressed_bytes_over_the_file_cap_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = valid_zip({"assets/a.png": b"tiny"})
    # 64 MiB behind a 4-byte declaration: the parser must stop one byte past the cap.
    members = _lying_members(monkeypatch, {"assets/a.png": 64 * BYTES_PER_MIB})
    assert refused(data) == "skill_file_too_large"
    member = members["assets/a.png"]
    assert member.served_bytes == MAX_FILE_BYTES + 1
    assert member.largest_request_bytes <= READ_CHUNK_BYTES


def test_decompressed_bytes_at_the_file_cap_are_accepted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = valid_zip({"assets/a.png": b"tiny"})
    _lying_members(monkeypatch, {"assets/a.png": MAX_FILE_BYTES})
    [file] = parse_skill_package(data).files
    assert file.size == MAX_FILE_BYTES
    assert file.sha256 == hashlib.sha256(b"x" * MAX_FILE_BYTES).hexdigest()


def test_decompressed_bytes_over_the_total_cap_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every member stays within the file cap; together with SKILL.md they pass the total.
    names = [f"assets/a{i}.png" for i in range(MAX_TOTAL_BYTES // MAX_FILE_BYTES)]
    data = valid_zip({name: b"tiny" for name in names})
    members = _lying_members(monkeypatch, dict.fromkeys(names, MAX_FILE_BYTES))
    assert refused(data) == "skill_too_large"
    served = sum(member.served_bytes for member in members.values())
    assert served == MAX_TOTAL_BYTES - len(skill_md().encode()) + 1
