"""Refusals of the catalog operations (import, install, uninstall, catalog seed), in pt-BR.

    SkilletError
    ├── OrganizationNotFound    organization_not_found: the trusted org id names no org
    ├── SkillAlreadyInstalled   skill_already_installed: install of a name the org already has
    ├── SkillNotInstalled       skill_not_installed: uninstall of a name the org does not have
    ├── CatalogSkillNotFound    catalog_skill_not_found: no platform skill by that name
    └── CatalogFolderInvalid    catalog_folder_invalid: `catalog seed` found a bad folder

None is retryable: each one needs a different command or a fixed input. A refused package is
`skills.package.parser.SkillPackageError`; a failing object store is `core.errors.StorageError`.
"""

from __future__ import annotations

import uuid

from core.errors import SkilletError


class OrganizationNotFound(SkilletError):
    code = "organization_not_found"

    def __init__(self, organization_id: uuid.UUID) -> None:
        super().__init__(
            f"A organização {organization_id} não existe. Confira o id ou crie a organização "
            "com `skillet orgs create`."
        )


class SkillAlreadyInstalled(SkilletError):
    code = "skill_already_installed"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A skill {name!r} já está instalada nesta organização. Para personalizá-la, "
            "importe um .zip com o mesmo nome; para voltar à versão do catálogo, desinstale-a "
            "e instale de novo."
        )


class SkillNotInstalled(SkilletError):
    code = "skill_not_installed"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A skill {name!r} não está instalada nesta organização. Veja as instaladas com "
            "`skillet skills list`."
        )


class CatalogSkillNotFound(SkilletError):
    code = "catalog_skill_not_found"

    def __init__(self, name: str, available: list[str]) -> None:
        listed = ", ".join(available) or "nenhuma (rode `skillet catalog seed`)"
        super().__init__(f"O catálogo não tem a skill {name!r}. Disponíveis: {listed}.")


class CatalogFolderInvalid(SkilletError):
    code = "catalog_folder_invalid"
