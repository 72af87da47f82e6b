"""Refusals of the skill editor (a new version from fields, a file change, a rollback), pt-BR.

    SkilletError
    ├── SkillBaseMoved        skill_base_moved: the pointer moved since the edit began;
    │                         `current_version_id` is the version it names now
    ├── SkillNameReserved     skill_name_reserved: a new skill named like a catalog skill
    ├── BaseRequired          base_required: a change to an existing skill without its base
    ├── SkillNameMismatch     skill_name_mismatch: a SKILL.md whose name is another skill's
    ├── SkillVersionNotFound  skill_version_not_found: no such version of this skill and org
    ├── SkillFileNotFound     skill_file_not_found: the version has no file at that path
    └── EditRefused           a package rule's code (skills.package.PackageErrorCode):
                              the edit's SKILL.md or files, as a .zip upload would be refused;
                              `field` says which of the form's fields to fix

Also raised: skills.catalog_errors' SkillAlreadyInstalled (a new skill whose name has a
pointer, in any state), SkillNotInstalled and OrganizationNotFound. None is retryable.
"""

from __future__ import annotations

import uuid
from enum import StrEnum

from core.errors import SkilletError
from skills.package import SkillPackageError


class SkillBaseMoved(SkilletError):
    code = "skill_base_moved"

    def __init__(self, name: str, current_version_id: uuid.UUID | None) -> None:
        super().__init__(
            f"A skill {name!r} mudou desde que você começou a editar: outra pessoa publicou "
            "uma versão nova ou voltou a uma anterior. Compare as duas versões e refaça a "
            "alteração sobre a atual."
        )
        self.current_version_id = current_version_id


class SkillNameReserved(SkilletError):
    code = "skill_name_reserved"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"{name!r} é o nome de uma skill do catálogo. Para mudá-la, edite-a a partir do "
            "Marketplace (ela é instalada e editada de uma vez), ou escolha outro nome."
        )


class BaseRequired(SkilletError):
    code = "base_required"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A skill {name!r} já existe: diga de qual versão a alteração parte "
            "(--base VERSAO; veja `skillet skills versions`), para não apagar o trabalho de "
            "outra pessoa."
        )


class SkillNameMismatch(SkilletError):
    code = "skill_name_mismatch"

    def __init__(self, name: str, found: str) -> None:
        super().__init__(
            f"O SKILL.md se chama {found!r}, mas a skill editada é {name!r}. Corrija o campo "
            "name do frontmatter (o nome de uma skill não muda)."
        )


class SkillVersionNotFound(SkilletError):
    code = "skill_version_not_found"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Essa versão não é da skill {name!r} desta organização. Veja as versões com "
            "`skillet skills versions`."
        )


class SkillFileNotFound(SkilletError):
    code = "skill_file_not_found"

    def __init__(self, name: str, path: str) -> None:
        super().__init__(f"A skill {name!r} não tem o arquivo {path[:200]!r} nesta versão.")


class EditField(StrEnum):
    """The form field a package refusal points at."""

    NAME = "name"
    DESCRIPTION = "description"
    KEYWORDS = "keywords"
    PROBE_KEYWORDS = "probe_keywords"
    BODY = "body"
    FILE = "file"


class EditRefused(SkilletError):
    """A package rule refused the edit: the package's own code and pt-BR message."""

    def __init__(self, refusal: SkillPackageError, field: EditField) -> None:
        super().__init__(refusal.message, code=refusal.code, retryable=False)
        self.field = field
