"""skills.package.central_directory: its count is the number of entries zipfile builds, on
valid, ZIP64, prefixed, commented, mutated and random archives (hypothesis)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills.package.central_directory import count_records
from tests.package_builders import skill_md_text, zip_files
from tests.unit.test_package_properties import _MUTATION, _mutate

PROPERTIES = settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
UNBOUNDED = 1 << 30


@contextmanager
def _zip64_always() -> Iterator[None]:
    """zipfile writes the ZIP64 end records past 65,535 entries; make that past 1."""
    saved = zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP_FILECOUNT_LIMIT = 1  # type: ignore[misc]
    try:
        yield
    finally:
        zipfile.ZIP_FILECOUNT_LIMIT = saved  # type: ignore[misc]


def _zip(names: list[str], *, comment: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(name, b"" if name.endswith("/") else skill_md_text("frete"))
        archive.comment = comment
    return buffer.getvalue()


def _zip64(names: list[str]) -> bytes:
    with _zip64_always():
        return _zip(names)


NAMES = ["SKILL.md", "references/", "references/a.md", "__MACOSX/", "__MACOSX/._SKILL.md"]
SEEDS: tuple[bytes, ...] = (
    zip_files({"SKILL.md": skill_md_text("frete")}),
    _zip(NAMES),
    _zip(NAMES, comment="comentário do arquivo".encode()),
    b"#!/bin/sh\nexit 0\n" + _zip(NAMES),  # bytes before the archive (self-extracting)
    _zip64(NAMES),
    b"prefix" + _zip64(NAMES),
)


def _zipfile_count(data: bytes) -> int | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return len(archive.infolist())
    except Exception:  # any refusal of zipfile's; the property is about the ones it opens
        return None


def _assert_agrees(data: bytes) -> None:
    ours = count_records(data, stop_after=UNBOUNDED)
    theirs = _zipfile_count(data)
    if theirs is not None:
        # zipfile opens it: we must count exactly its entries (never refuse what it reads).
        assert ours == theirs
    # (zipfile may still refuse a directory we counted: a bad name encoding, a version.)


@pytest.mark.parametrize("data", SEEDS, ids=range(len(SEEDS)))
def test_seeds_count_every_record(data: bytes) -> None:
    assert count_records(data, stop_after=UNBOUNDED) == _zipfile_count(data)
    assert _zipfile_count(data) in (1, len(NAMES))


def test_the_walk_stops_one_record_past_the_limit() -> None:
    data = _zip([f"__MACOSX/._{i}" for i in range(50)])
    assert count_records(data, stop_after=10) == 11
    assert count_records(data, stop_after=50) == 50


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"PK\x05\x06",
        b"not a zip" * 10,
        bytes(22),
        # zipfile takes the last end-record signature for the record, as we do: both refuse.
        _zip(NAMES, comment=b"PK\x05\x06 a comment that holds an end-record signature"),
    ],
)
def test_no_readable_central_directory_is_none(data: bytes) -> None:
    assert count_records(data, stop_after=UNBOUNDED) is None
    assert _zipfile_count(data) is None


@PROPERTIES
@given(st.sampled_from(SEEDS), st.lists(_MUTATION, min_size=1, max_size=4))
def test_mutated_archives_count_what_zipfile_reads(
    seed: bytes, mutations: list[tuple[str, int, int]]
) -> None:
    data = seed
    for mutation in mutations:
        data = _mutate(data, mutation)
    _assert_agrees(data)


@PROPERTIES
@given(st.binary(max_size=512))
def test_random_bytes_count_what_zipfile_reads(data: bytes) -> None:
    _assert_agrees(data)
    _assert_agrees(data + SEEDS[1])
    _assert_agrees(SEEDS[1] + data)
