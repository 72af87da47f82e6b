"""A skill without keywords is index-only: listed with its description, never matched."""

from __future__ import annotations

import uuid

from skills.models import FileKind, LoadedSkill, ManifestEntry, SkillMatcher
from turn.matcher import match_skills
from turn.skill_index import HEADER, render_skill_index

INDEX_ONLY = LoadedSkill(
    version_id=uuid.uuid4(),
    name="planilhas",
    description="Como montar planilhas de custo para o cliente.",
    body="Instruções longas.",
    matcher=SkillMatcher(),
    manifest=(
        ManifestEntry("LICENSE.txt", 10, "0" * 64, FileKind.REFERENCE),
        ManifestEntry("reference.md", 10, "1" * 64, FileKind.REFERENCE),
        ManifestEntry("scripts/calc.py", 10, "2" * 64, FileKind.SCRIPT),
        ManifestEntry("templates/base.html", 10, "3" * 64, FileKind.TEMPLATE),
        ManifestEntry("canvas-fonts/a.ttf", 10, "4" * 64, FileKind.ASSET),
    ),
)
KEYWORDED = LoadedSkill(
    version_id=uuid.uuid4(),
    name="frete",
    description="Calcula o frete.",
    matcher=SkillMatcher(["frete"], ["entrega"]),
)


def test_an_index_only_skill_is_in_the_index_and_the_header_says_how_to_load_it() -> None:
    index = render_skill_index([INDEX_ONLY, KEYWORDED])
    assert "- planilhas: Como montar planilhas de custo para o cliente.\n" in index
    assert "skill_view" in HEADER


def test_an_index_only_skill_never_matches_nor_probes() -> None:
    text = "planilhas de custo, frete e entrega: planilhas Como montar"
    result = match_skills([INDEX_ONLY, KEYWORDED], text)
    assert [s.name for s in result.matched] == ["frete"]
    assert result.probes == []


def test_reference_paths_are_the_text_outside_scripts_templates_and_assets() -> None:
    assert INDEX_ONLY.reference_paths == ("LICENSE.txt", "reference.md")


def test_stored_content_types_never_label_uploads_as_active_content() -> None:
    from skills.publisher import TEXT_CONTENT_TYPE, content_type_of

    assert content_type_of("templates/viewer.html", FileKind.TEMPLATE) == TEXT_CONTENT_TYPE
    assert content_type_of("scripts/run.py", FileKind.SCRIPT) == TEXT_CONTENT_TYPE
    assert content_type_of("reference.md", FileKind.REFERENCE) == TEXT_CONTENT_TYPE
    assert content_type_of("assets/foto.png", FileKind.ASSET) == "image/png"
    assert content_type_of("theme-showcase.pdf", FileKind.ASSET) == "application/pdf"
    for path in ("assets/pagina.html", "assets/logo.svg", "scripts/b.tar.gz", "a.ttf"):
        assert content_type_of(path, FileKind.ASSET) == "application/octet-stream"
