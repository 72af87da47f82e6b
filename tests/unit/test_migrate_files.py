"""Unit tests of worker.migrate.load_migrations: what `skillet migrate` finds on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.migrate import DEFAULT_MIGRATIONS_DIR, MigrationError, load_migrations


def write(directory: Path, name: str, sql: str | None = None) -> None:
    (directory / name).write_text(sql if sql is not None else f"-- {name}\n", encoding="utf-8")


def test_migrations_are_ordered_by_number_not_by_file_name(tmp_path: Path) -> None:
    write(tmp_path, "0010_later.sql", "create table later ();")
    write(tmp_path, "0002_second.sql", "create table second ();")
    write(tmp_path, "0001_first.sql", "create table first ();")
    migrations = load_migrations(tmp_path)
    assert [(m.version, m.name) for m in migrations] == [
        (1, "first"),
        (2, "second"),
        (10, "later"),
    ]
    assert migrations[0].sql == "create table first ();"


def test_only_sql_files_are_migrations(tmp_path: Path) -> None:
    write(tmp_path, "0001_first.sql")
    write(tmp_path, "README.md", "# notes")
    assert [m.name for m in load_migrations(tmp_path)] == ["first"]


@pytest.mark.parametrize(
    "name",
    [
        "1_first.sql",
        "0001-first.sql",
        "0001_First.sql",
        "first.sql",
        "00001_first.sql",
        "0001_.sql",
    ],
)
def test_a_misnamed_file_is_refused_with_its_name(tmp_path: Path, name: str) -> None:
    write(tmp_path, "0001_ok.sql")
    write(tmp_path, name)
    with pytest.raises(MigrationError) as caught:
        load_migrations(tmp_path)
    assert name in str(caught.value)
    assert caught.value.code == "migration_error"


def test_two_files_with_the_same_number_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "0003_add_outbox.sql")
    write(tmp_path, "0003_add_usage.sql")
    with pytest.raises(MigrationError) as caught:
        load_migrations(tmp_path)
    assert "0003" in str(caught.value)


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# notes")
    with pytest.raises(MigrationError, match="no migration files") as caught:
        load_migrations(tmp_path)
    assert str(tmp_path) in str(caught.value)


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="no migration files"):
        load_migrations(tmp_path / "absent")


def test_the_checksum_changes_when_a_file_is_edited(tmp_path: Path) -> None:
    write(tmp_path, "0001_first.sql", "create table a ();")
    before = load_migrations(tmp_path)[0].checksum
    assert load_migrations(tmp_path)[0].checksum == before
    write(tmp_path, "0001_first.sql", "create table a (id int);")
    assert load_migrations(tmp_path)[0].checksum != before


def test_the_repository_migrations_load_in_order() -> None:
    migrations = load_migrations(DEFAULT_MIGRATIONS_DIR)
    assert migrations, f"no migrations found in {DEFAULT_MIGRATIONS_DIR}"
    versions = [m.version for m in migrations]
    assert versions == sorted(versions)
    assert versions[0] == 1
    assert len(set(versions)) == len(versions)
    assert all(m.sql.strip() for m in migrations)
    everything = "\n".join(m.sql for m in migrations).lower()
    for table in ("skill_versions", "skill_pointers", "skill_activations", "outbox"):
        assert table in everything
