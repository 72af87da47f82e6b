"""A labelled message corpus (JSON lines `{"text", "skill", "split"}`), read for training and
measuring the catalog's matching; and the shipped catalog as an org that installed all of it.

The corpus itself is test data (tests/data/); a tool or test passes its path, so nothing in
the package imports the tests. `skill` is the catalog skill a message should match (null:
none); `split` is `tune` (what keywords and models are chosen on) or `measure` (held out).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from skills.catalog_seed import DEFAULT_CATALOG_DIR, catalog_folders, load_catalog_package
from skills.models import LoadedSkill

SPLITS = ("tune", "measure")


@dataclass(frozen=True)
class Message:
    text: str
    skill: str | None
    split: str


def _lines_of(path: Path, split: str) -> list[str]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if json.loads(line)["split"] == split]


def read_corpus(path: Path, split: str) -> list[Message]:
    return [Message(**json.loads(line)) for line in _lines_of(path, split)]


def part_sha256(path: Path, split: str) -> str:
    """The part's lines as the file holds them, in order: what an intent model was trained on."""
    return hashlib.sha256("\n".join(_lines_of(path, split)).encode("utf-8")).hexdigest()


def catalog_skills() -> list[LoadedSkill]:
    """The shipped catalog as an org that installed all of it loads it."""
    skills = []
    for folder in catalog_folders(DEFAULT_CATALOG_DIR):
        package = load_catalog_package(folder)
        skills.append(
            LoadedSkill(
                name=package.name,
                description=package.description,
                body=package.body,
                matcher=package.matcher,
                version_id=uuid.uuid4(),
            )
        )
    return skills
