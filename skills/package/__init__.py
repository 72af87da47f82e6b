"""Skill packages (.zip, Agent Skills layout): bytes in, a checked `SkillPackage` out, pure.

`parser` holds the order of checks; `central_directory` counts entries before unzipping,
`skill_md` / `frontmatter` / `bounded_yaml` read SKILL.md, `limits` and `errors` are the
settings and codes. Everything a caller needs is re-exported here (the contract's import path).
"""

from skills.package.errors import PackageErrorCode, SkillPackageError
from skills.package.limits import PackageLimits
from skills.package.parser import SKILL_MD_PATH, PackageFile, SkillPackage, parse_skill_package

__all__ = [
    "SKILL_MD_PATH",
    "PackageErrorCode",
    "PackageFile",
    "PackageLimits",
    "SkillPackage",
    "SkillPackageError",
    "parse_skill_package",
]
