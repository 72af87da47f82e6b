"""Property-based: whatever bytes arrive, parse_skill_package returns a package that keeps
every rule, or raises SkillPackageError; nothing else escapes (hypothesis)."""

from __future__ import annotations

import hashlib
import io
import warnings
import zipfile
from pathlib import PurePosixPath

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills.models import FileKind
from skills.package import PackageErrorCode, SkillPackage, SkillPackageError, parse_skill_package
from skills.package.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES
from tests.package_builders import skill_md_text, zip_files

PROPERTIES = settings(
    max_examples=300,
    deadline=None,
    database=None,  # nothing written to .hypothesis/ in the work tree
    derandomize=True,  # the same examples on every run: CI never fails by chance
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SEEDS: tuple[bytes, ...] = (
    zip_files({"SKILL.md": skill_md_text("frete", keywords=["frete", "entrega"])}),
    zip_files(
        {
            "minha-skill/SKILL.md": skill_md_text("agenda", keywords=["agendar"], probes=["hora"]),
            "minha-skill/references/horarios.md": "Seg a sex, 8h às 18h.\n" * 20,
            "minha-skill/assets/logo.png": bytes(range(256)) * 4,
        }
    ),
    zip_files(
        {
            "SKILL.md": skill_md_text("preco", keywords=["caro"], body="Acolha.\n" * 50),
            "references/a.csv": "produto;preço\ncamisa;R$ 59,90\n",
            "references/b.json": '{"pix": 0.05}',
            "__MACOSX/._SKILL.md": b"\x00\x05\x16\x07",
        }
    ),
)


def _check_invariants(package: SkillPackage) -> None:
    paths = [f.path for f in package.files]
    assert paths == sorted(paths)
    assert len(package.files) + 1 <= MAX_FILES
    assert sum(f.size for f in package.files) + len(package.skill_md) <= MAX_TOTAL_BYTES
    seen: set[str] = set()
    for item in package.files:
        assert item.size == len(item.data) <= MAX_FILE_BYTES
        assert item.sha256 == hashlib.sha256(item.data).hexdigest()
        parts = PurePosixPath(item.path).parts
        assert item.path == "/".join(parts) and ".." not in parts and "\\" not in item.path
        if item.kind is not FileKind.ASSET:  # references, scripts, templates: text only
            item.data.decode("utf-8")
        else:
            assert parts[0] != "references"
        if parts[0] in ("scripts", "templates") and len(parts) > 1:
            assert item.kind in (FileKind.SCRIPT, FileKind.TEMPLATE, FileKind.ASSET)
        assert item.path.casefold() not in seen
        seen.add(item.path.casefold())
    assert package.name and package.description


def _parse_or_refuse(data: bytes) -> SkillPackage | SkillPackageError:
    try:
        package = parse_skill_package(data)
    except SkillPackageError as exc:
        assert exc.code in {c.value for c in PackageErrorCode}
        assert exc.message and "\n" not in exc.message
        return exc
    _check_invariants(package)
    return package


@PROPERTIES
@given(st.binary(max_size=4096))
def test_random_bytes_only_parse_or_refuse(data: bytes) -> None:
    _parse_or_refuse(data)


@PROPERTIES
@given(st.binary(max_size=64).map(lambda tail: b"PK\x03\x04" + tail))
def test_random_bytes_behind_a_zip_signature_only_parse_or_refuse(data: bytes) -> None:
    _parse_or_refuse(data)


_MUTATION = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 1 << 20), st.just(0)),
    st.tuples(st.just("delete"), st.integers(0, 1 << 20), st.integers(1, 64)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("word"), st.integers(0, 1 << 20), st.integers(0, 0xFFFFFFFF)),
)


def _mutate(data: bytes, mutation: tuple[str, int, int]) -> bytes:
    kind, position, value = mutation
    at = position % (len(data) + 1)
    buffer = bytearray(data)
    if kind == "flip" and at < len(buffer):
        buffer[at] ^= value
    elif kind == "truncate":
        del buffer[at:]
    elif kind == "delete":
        del buffer[at : at + value]
    elif kind == "insert":
        buffer[at:at] = bytes([value])
    elif kind == "word":
        # Overwrite 4 bytes with any 32-bit value: sizes, offsets, counts and CRCs lie.
        buffer[at : at + 4] = value.to_bytes(4, "little")
    return bytes(buffer)


@PROPERTIES
@given(st.sampled_from(SEEDS), st.lists(_MUTATION, min_size=1, max_size=4))
def test_mutated_valid_zips_only_parse_or_refuse(
    seed: bytes, mutations: list[tuple[str, int, int]]
) -> None:
    data = seed
    for mutation in mutations:
        data = _mutate(data, mutation)
    _parse_or_refuse(data)


_SEGMENT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12
)
_ENTRY_NAME = st.one_of(
    st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
    st.tuples(
        st.sampled_from(["references", "assets", "scripts", "", ".."]),
        _SEGMENT,
        st.sampled_from(["md", "txt", "csv", "png", "pdf", "sh", "py", "MD", "ttf"]),
    ).map(lambda t: f"{t[0]}/{t[1]}.{t[2]}"),
)


@PROPERTIES
@given(
    st.dictionaries(_ENTRY_NAME, st.binary(max_size=256), max_size=8),
    st.sampled_from(["", "pasta/"]),
)
def test_arbitrary_entry_names_only_parse_or_refuse(files: dict[str, bytes], top: str) -> None:
    entries: dict[str, bytes | str] = {top + "SKILL.md": skill_md_text("frete")}
    entries.update(files)
    buffer = io.BytesIO()
    # Names that collide once stored ('/' and '//') are part of the point: zipfile warns
    # about the duplicate it writes, the parser must refuse it.
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, content in entries.items():
            try:
                archive.writestr(name, content)
            except (ValueError, UnicodeEncodeError, IndexError):
                continue  # a name the writer itself cannot store
    _parse_or_refuse(buffer.getvalue())


_KEYWORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzçãé ", min_size=1, max_size=20).filter(
    str.strip
)


@PROPERTIES
@given(
    st.from_regex(r"[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}", fullmatch=True),
    st.lists(_KEYWORD, min_size=1, max_size=10),
    st.dictionaries(
        st.from_regex(r"[a-z0-9_-]{1,12}", fullmatch=True).map(lambda n: f"references/{n}.md"),
        st.text(max_size=300),
        max_size=5,
    ),
)
def test_valid_packages_always_parse_to_what_was_zipped(
    name: str, keywords: list[str], references: dict[str, str]
) -> None:
    files: dict[str, bytes | str] = {"SKILL.md": skill_md_text(name, keywords=keywords)}
    files.update(references)
    outcome = _parse_or_refuse(zip_files(files))
    assert isinstance(outcome, SkillPackage), outcome
    assert outcome.name == name
    assert list(outcome.matcher.any_keywords) == [k.strip() for k in keywords]
    assert {f.path: f.data.decode() for f in outcome.files} == references
