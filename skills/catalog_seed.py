"""`catalog seed`: publish the platform catalog from the package folders kept in the repo.

Each folder under the catalog directory (`objecao-preco/`, `agendamento/`)
is a skill package as a user would zip it: it is zipped in memory and run through the same
parser as an upload, so the shipped skills obey every rule users' skills do. Idempotent: a
folder whose content matches the catalog's current version publishes nothing.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from core.object_store import ObjectStore
from skillet_data import CATALOG_DIR
from skills.catalog import ImportResult, publish_package
from skills.catalog_errors import CatalogFolderInvalid
from skills.package import PackageLimits, SkillPackage, SkillPackageError, parse_skill_package
from skills.package.limits import DEFAULT_LIMITS

# Shipped in the wheel (skillet_data/catalog), so an installed skillet seeds without a checkout.
DEFAULT_CATALOG_DIR = CATALOG_DIR
# A fixed timestamp keeps the in-memory zip byte-identical run to run (the parser's content
# hash ignores it anyway); 1980-01-01 is the earliest date a zip entry can hold.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_SKIPPED_NAMES = frozenset({".DS_Store", "__pycache__"})


def zip_folder(folder: Path) -> bytes:
    """Every regular file under `folder`, paths relative to it, sorted, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if not path.is_file() or _SKIPPED_NAMES.intersection(relative.parts):
                continue
            info = zipfile.ZipInfo(relative.as_posix(), date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def catalog_folders(directory: Path) -> list[Path]:
    """The skill folders of a catalog directory, sorted by name (hidden ones skipped)."""
    if not directory.is_dir():
        raise CatalogFolderInvalid(
            f"A pasta do catálogo {str(directory)!r} não existe. Informe a pasta com --dir."
        )
    folders = sorted(
        p for p in directory.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    )
    if not folders:
        raise CatalogFolderInvalid(f"A pasta do catálogo {str(directory)!r} não tem skills.")
    return folders


def load_catalog_package(folder: Path, limits: PackageLimits = DEFAULT_LIMITS) -> SkillPackage:
    """A catalog folder as the parser sees an upload of it; its name must be the folder's."""
    try:
        package = parse_skill_package(zip_folder(folder), limits=limits)
    except SkillPackageError as exc:
        raise CatalogFolderInvalid(f"{folder.name}: {exc.code}: {exc.message}") from exc
    if package.name != folder.name:
        raise CatalogFolderInvalid(
            f"A pasta {folder.name!r} contém a skill {package.name!r}: o nome no SKILL.md "
            "precisa ser igual ao nome da pasta."
        )
    return package


@dataclass(frozen=True)
class SeedResult:
    results: tuple[ImportResult, ...]

    @property
    def imported(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.results if r.status == "imported")


async def seed_catalog(
    conn: asyncpg.Connection,
    store: ObjectStore,
    directory: Path = DEFAULT_CATALOG_DIR,
    limits: PackageLimits = DEFAULT_LIMITS,
) -> SeedResult:
    """Validate every folder first (nothing is published if one is invalid), then publish."""
    packages = [load_catalog_package(folder, limits) for folder in catalog_folders(directory)]
    results = []
    for package in packages:
        results.append(
            await publish_package(
                conn, store, organization_id=None, package=package, created_by="platform"
            )
        )
    return SeedResult(tuple(results))
