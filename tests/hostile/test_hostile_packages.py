"""Hostile skill packages: each is refused with its code and a pt-BR fix, before the work it
aims at happens (spies on yaml and zipfile say so; no timing asserts on a noisy machine).

Each input is reachable by an org uploading a .zip, and the SKILL.md ones by the model
through `skill_manage patch` too (skills.authoring_rules.check_skill_md)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from skills.authoring_rules import AuthoringError, check_skill_md
from skills.package import SkillPackageError, parse_skill_package
from skills.package import central_directory as package_central_directory
from skills.package.central_directory import count_records
from skills.package.limits import (
    MAX_ARCHIVE_ENTRIES,
    MAX_BODY_LINES,
    MAX_FRONTMATTER_BYTES,
    MAX_FRONTMATTER_DEPTH,
    MAX_SKILL_MD_CHARS,
)

HEADER = "name: frete\ndescription: Explica o frete.\nmatcher:\n  any_keywords: [frete]\n"
BODY = "Explique o frete e confirme o CEP."


def skill_md(header: str = HEADER, body: str = BODY) -> str:
    return f"---\n{header}---\n{body}\n"


def zipped(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", text)
    return buffer.getvalue()


@dataclass
class YamlSpy:
    """What the parser asked of PyYAML: libyaml events pulled, loads, pure-Python scans."""

    events: int = 0
    loads: int = 0
    python_scans: int = 0


@pytest.fixture
def yaml_spy(monkeypatch: pytest.MonkeyPatch) -> YamlSpy:
    spy = YamlSpy()
    real_parse, real_load = yaml.parse, yaml.load

    def parse(stream: Any, Loader: Any = yaml.Loader) -> Iterator[yaml.Event]:
        for event in real_parse(stream, Loader=Loader):
            spy.events += 1
            yield event

    def load(stream: Any, Loader: Any) -> Any:
        spy.loads += 1
        return real_load(stream, Loader=Loader)

    real_fetch = yaml.scanner.Scanner.fetch_more_tokens

    def fetch_more_tokens(self: yaml.scanner.Scanner) -> None:
        spy.python_scans += 1  # PyYAML's pure-Python scanner: what spun on nested `[`
        real_fetch(self)

    monkeypatch.setattr(yaml, "parse", parse)
    monkeypatch.setattr(yaml, "load", load)
    monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", fetch_more_tokens)
    return spy


def refusal(text: str) -> SkillPackageError:
    """The upload's refusal; the model's patch of the same SKILL.md is refused alike."""
    with pytest.raises(SkillPackageError) as upload:
        parse_skill_package(zipped(text))
    with pytest.raises(AuthoringError) as patch:
        check_skill_md(text)
    assert patch.value.code in (upload.value.code, "skill_md_too_long")
    assert upload.value.message and "\n" not in upload.value.message
    return upload.value


# --- SKILL.md frontmatter ---------------------------------------------------------------------


def test_nested_brackets_header_is_refused_without_the_python_scanner(yaml_spy: YamlSpy) -> None:
    deep = "[" * 2_000 + "]" * 2_000  # 4,000 bytes: under the size cap, all of it nesting
    error = refusal(skill_md(HEADER + f"x: {deep}\n"))
    assert error.code == "skill_frontmatter_invalid"
    # Bound: libyaml (C) refused it within the header's first events, no tree was ever built
    # and PyYAML's pure-Python scanner (0.7-5 s on 8 KiB of `[`) never ran.
    assert yaml_spy.events <= 2 * (len(HEADER) + MAX_FRONTMATTER_DEPTH + 8)
    assert yaml_spy.loads == 0
    assert yaml_spy.python_scans == 0


def test_nesting_past_the_depth_limit_stops_the_prescan(yaml_spy: YamlSpy) -> None:
    deep = "[" * 200 + "]" * 200
    error = refusal(skill_md(HEADER + f"x: {deep}\n"))
    assert error.code == "skill_frontmatter_invalid"
    assert f"mais de {MAX_FRONTMATTER_DEPTH} níveis" in error.message
    # Bound: the pre-scan stopped one level past the limit (about 15 events of the header,
    # then one per level), not after the 400 events of the nesting; twice: upload and patch.
    assert yaml_spy.events <= 2 * (15 + MAX_FRONTMATTER_DEPTH + 1)
    assert yaml_spy.loads == 0
    assert yaml_spy.python_scans == 0


def test_unclosed_brackets_header_is_refused_by_libyaml_alone(yaml_spy: YamlSpy) -> None:
    header = HEADER + "x: " + "[" * (MAX_FRONTMATTER_BYTES - len(HEADER) - 4) + "\n"
    assert len(header.encode()) <= MAX_FRONTMATTER_BYTES
    error = refusal(skill_md(header))
    assert error.code == "skill_frontmatter_invalid"
    assert yaml_spy.loads == 0
    assert yaml_spy.python_scans == 0


def _merge_bomb(levels: int) -> str:
    """Each level merges the one below twice: 2**levels keys for PyYAML 6.0.0-6.0.3."""
    lines = ["b0: &b0 {k0: v}"]
    lines += [f"b{i}: &b{i} {{<<: [*b{i - 1}, *b{i - 1}], k{i}: v}}" for i in range(1, levels)]
    return HEADER + "\n".join(lines) + "\n"


def test_merge_key_bomb_is_refused_at_its_first_anchor(yaml_spy: YamlSpy) -> None:
    header = _merge_bomb(40)
    assert len(header.encode()) <= MAX_FRONTMATTER_BYTES
    error = refusal(skill_md(header))
    assert error.code == "skill_frontmatter_invalid"
    assert "'&nome'" in error.message and "por extenso" in error.message
    assert yaml_spy.loads == 0  # nothing was constructed, let alone merged
    assert yaml_spy.events <= 2 * (len(HEADER) + 10)


def test_merge_key_without_anchors_is_refused(yaml_spy: YamlSpy) -> None:
    error = refusal(skill_md(HEADER + "extra: {<<: {a: 1}, b: 2}\n"))
    assert error.code == "skill_frontmatter_invalid"
    assert "'<<'" in error.message
    assert yaml_spy.loads == 0


def test_anchors_and_aliases_billion_laughs_are_refused(yaml_spy: YamlSpy) -> None:
    lines = ["l0: &l0 [ha, ha, ha, ha, ha, ha, ha, ha, ha]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    error = refusal(skill_md(HEADER + "\n".join(lines) + "\n"))
    assert error.code == "skill_frontmatter_invalid"
    assert "âncoras ou referências" in error.message
    assert yaml_spy.loads == 0


def test_a_lone_alias_is_refused(yaml_spy: YamlSpy) -> None:
    error = refusal(skill_md(HEADER + "outro: *l0\n"))
    assert error.code == "skill_frontmatter_invalid"
    assert yaml_spy.loads == 0


def test_8_kib_header_is_refused_before_any_yaml(yaml_spy: YamlSpy) -> None:
    header = HEADER + "notes: " + "x" * (8 * 1024 - len(HEADER) - 8) + "\n"
    assert len(header.encode()) > MAX_FRONTMATTER_BYTES
    error = refusal(skill_md(header))
    assert error.code == "skill_frontmatter_invalid"
    assert str(MAX_FRONTMATTER_BYTES) in error.message
    assert (yaml_spy.events, yaml_spy.loads, yaml_spy.python_scans) == (0, 0, 0)


# --- SKILL.md body ----------------------------------------------------------------------------


def test_1_mib_single_line_body_is_refused_after_reading_only_the_frontmatter(
    yaml_spy: YamlSpy,
) -> None:
    """Whether the 100,000-character cap applies depends on the keywords (an index-only body
    is only bounded by the file limit), so the frontmatter is read first: YAML sees its few
    lines (at most MAX_FRONTMATTER_BYTES), never the body."""
    error = refusal(skill_md(body="x" * (1024 * 1024 - 200)))
    assert error.code == "skill_body_too_long"
    assert str(MAX_SKILL_MD_CHARS) in error.message and "references/" in error.message
    assert yaml_spy.loads == 1 and yaml_spy.events < 40


def test_u2028_body_counts_every_line() -> None:
    error = refusal(skill_md(body="\u2028".join(["linha"] * 5_000)))
    assert error.code == "skill_body_too_long"
    assert f"5000 linhas; o máximo é {MAX_BODY_LINES}" in error.message


# --- the archive ------------------------------------------------------------------------------


def _macosx_zip(ignored_entries: int) -> bytes:
    """A real SKILL.md plus `ignored_entries` empty `__MACOSX/._N` files, stored: written
    record by record (zipfile.writestr would take seconds for 100,000 of them)."""
    md = skill_md().encode()
    names = [b"SKILL.md"] + [f"__MACOSX/._{i}".encode() for i in range(ignored_entries)]
    local, central = io.BytesIO(), io.BytesIO()
    for name in names:
        data = md if name == b"SKILL.md" else b""
        crc, offset = zlib.crc32(data), local.tell()
        local.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc,
                                len(data), len(data), len(name), 0) + name + data)  # fmt: skip
        central.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, crc,
                                  len(data), len(data), len(name), 0, 0, 0, 0, 0o100644 << 16,
                                  offset) + name)  # fmt: skip
    count = min(len(names), 0xFFFF)  # the end record's 16-bit field; zipfile walks by size
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, central.tell(), local.tell(), 0)
    return local.getvalue() + central.getvalue() + end


def test_100k_macosx_entries_are_refused_before_zipfile_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _macosx_zip(100_000)
    assert count_records(data, stop_after=200_000) == 100_001  # the archive really holds them
    with zipfile.ZipFile(io.BytesIO(_macosx_zip(3))) as small:  # and the builder makes zips
        assert len(small.infolist()) == 4

    walked: list[int | None] = []

    def counting(data: bytes, *, stop_after: int) -> int | None:
        walked.append(count_records(data, stop_after=stop_after))
        return walked[-1]

    def no_zipfile(*args: object, **kwargs: object) -> zipfile.ZipFile:
        raise AssertionError("zipfile opened the archive: its 100,000 records were read")

    monkeypatch.setattr("skills.package.parser.count_records", counting)
    monkeypatch.setattr(zipfile, "ZipFile", no_zipfile)
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(data)
    assert caught.value.code == "skill_too_many_files"
    assert str(MAX_ARCHIVE_ENTRIES) in caught.value.message
    assert "__MACOSX" in caught.value.message  # says the ignored entries count too
    # Bound: the walk read one record past the limit and stopped.
    assert walked == [MAX_ARCHIVE_ENTRIES + 1]


def test_the_walk_reads_headers_only_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _macosx_zip(100_000)
    unpacks: list[int] = []
    real: Callable[..., tuple[Any, ...]] = struct.unpack_from

    def counting_unpack(fmt: Any, buffer: Any, offset: int = 0) -> tuple[Any, ...]:
        unpacks.append(offset)
        return real(fmt, buffer, offset)

    monkeypatch.setattr(package_central_directory.struct, "unpack_from", counting_unpack)
    assert count_records(data, stop_after=MAX_ARCHIVE_ENTRIES) == MAX_ARCHIVE_ENTRIES + 1
    assert len(unpacks) <= MAX_ARCHIVE_ENTRIES + 1


# --- text Postgres cannot store ----------------------------------------------------------------


def _zip_with_raw_name(name: str) -> bytes:
    """A package whose central directory holds `name` byte for byte (zipfile's writer would
    cut it at a NUL; its reader keeps the whole name in `orig_filename`)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", skill_md())
        info = zipfile.ZipInfo("placeholder")
        info.filename = name
        archive.writestr(info, "texto")
    return buffer.getvalue()


def test_a_nul_in_an_entry_name_is_an_unsafe_path_named_whole() -> None:
    data = _zip_with_raw_name("references/a\x00b.md")
    assert data.count(b"references/a\x00b.md") == 2  # local header and central directory
    with pytest.raises(SkillPackageError) as caught:
        parse_skill_package(data)
    assert caught.value.code == "skill_unsafe_path"
    # Not stored as `references/a`: refused, and the message shows the name the archive has.
    assert "'references/a\\x00b.md'" in caught.value.message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (skill_md(body="Explique o frete.\x00 E o CEP."), "caractere nulo"),
        (skill_md(HEADER.replace("Explica o frete.", '"Explica\\0 o frete."')), "`description`"),
        # libyaml itself refuses an escaped lone surrogate.
        (skill_md(HEADER + 'license: "MIT\\ud800"\n'), "YAML válido"),
        (skill_md(HEADER + 'metadata:\n  autor: "Ana\\0"\n'), "`metadata.autor`"),
        (skill_md(HEADER.replace("[frete]", '["fre\\0te"]')), "`matcher.any_keywords.0`"),
    ],
    ids=["nul-in-body", "yaml-nul-escape", "yaml-surrogate-escape", "nested", "keyword"],
)
def test_text_postgres_cannot_store_in_a_skill_md_is_refused(text: str, says: str) -> None:
    refused = refusal(text)
    assert refused.code == "skill_frontmatter_invalid"
    assert says in refused.message


def test_a_lone_surrogate_the_model_writes_is_refused_not_raised() -> None:
    with pytest.raises(AuthoringError) as caught:
        check_skill_md(skill_md(body="Explique o frete \ud800."))
    assert caught.value.code == "skill_frontmatter_invalid"
