"""The shipped catalog skills parse like uploads and match what customers really type; the
pure helpers of skills.catalog and skills.catalog_seed."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from skills.catalog import SkillSource, draft_of, skill_source
from skills.catalog_errors import CatalogFolderInvalid
from skills.catalog_queries import catalog_lock_key
from skills.catalog_seed import (
    DEFAULT_CATALOG_DIR,
    catalog_folders,
    load_catalog_package,
    zip_folder,
)
from skills.models import FileKind, LoadedSkill
from skills.package import parse_skill_package
from skills.package.limits import MAX_BODY_LINES
from tests.package_builders import skill_md_text
from turn.matcher import match_skills

CATALOG = ("agendamento", "objecao-preco")


def _installed() -> list[LoadedSkill]:
    loaded = []
    for name in CATALOG:
        package = load_catalog_package(DEFAULT_CATALOG_DIR / name)
        loaded.append(
            LoadedSkill(
                version_id=uuid.uuid4(),
                name=package.name,
                description=package.description,
                body=package.body,
                matcher=package.matcher,
            )
        )
    return loaded


def test_the_catalog_ships_the_two_skills_each_with_a_reference() -> None:
    assert [f.name for f in catalog_folders(DEFAULT_CATALOG_DIR)] == list(CATALOG)
    for name in CATALOG:
        package = load_catalog_package(DEFAULT_CATALOG_DIR / name)
        assert package.name == name
        assert [f.kind for f in package.files] == [FileKind.REFERENCE]
        assert len(package.body.splitlines()) <= MAX_BODY_LINES
        # The body points the model at the reference it ships.
        assert package.files[0].path in package.body


def test_agendamento_schedules_the_reminder_with_a_tool_that_exists() -> None:
    from turn.tools.registry import turn_tools

    body = load_catalog_package(DEFAULT_CATALOG_DIR / "agendamento").body
    assert "## Lembrete na véspera" in body and "`schedule_followup`" in body
    assert "schedule_followup" in {t.name for t in turn_tools()}


def test_agendamento_offers_slots_as_choices_and_keeps_its_intent_model() -> None:
    import json

    from skillet_data import INTENT_MODELS_DIR
    from turn.matcher.intent_model import keywords_sha256
    from turn.tools.registry import turn_tools

    package = load_catalog_package(DEFAULT_CATALOG_DIR / "agendamento")
    assert "`send_choices`" in package.body and "[escolheu: «" in package.body
    assert "send_choices" in {t.name for t in turn_tools()}
    # Only the body changed: the shipped classifier still applies to an install of it.
    model = json.loads((INTENT_MODELS_DIR / "agendamento.json").read_text())
    assert model["keywords_sha256"] == keywords_sha256(package.matcher)


def test_zip_folder_is_deterministic_and_parses_like_an_upload() -> None:
    folder = DEFAULT_CATALOG_DIR / "agendamento"
    data = zip_folder(folder)
    assert zip_folder(folder) == data
    assert parse_skill_package(data).content_sha256 == (load_catalog_package(folder).content_sha256)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Oi, queria marcar uma consulta para amanhã", ["agendamento"]),
        ("Bom dia! Gostaria de agendar uma avaliação", ["agendamento"]),
        ("tem horário pra sexta à tarde?", ["agendamento"]),
        ("Quais os horários disponíveis na quinta?", ["agendamento"]),
        ("preciso remarcar meu horário", ["agendamento"]),
        ("quero desmarcar a sessão de hoje", ["agendamento"]),
        ("consegue me encaixar hoje?", ["agendamento"]),
        ("vocês têm vaga amanhã cedo?", ["agendamento"]),
        ("Nossa, achei muito caro", ["objecao-preco"]),
        ("tá caro demais isso aí", ["objecao-preco"]),
        ("Tem desconto no Pix?", ["objecao-preco"]),
        ("vi mais barato em outra loja", ["objecao-preco"]),
        ("ta puxado pra mim esse mês", ["objecao-preco"]),
        ("esse valor não cabe no bolso", ["objecao-preco"]),
        ("consegue fazer por menos?", ["objecao-preco"]),
        ("dá pra negociar esse valor?", ["objecao-preco"]),
        ("bom dia, tudo bem?", []),
        ("cara, cadê o meu pedido?", []),
        ("qual o frete para o CEP 01310-100?", []),
    ],
)
def test_what_customers_type_matches_the_right_skill(text: str, expected: list[str]) -> None:
    assert [s.name for s in match_skills(_installed(), text).matched] == expected


@pytest.mark.parametrize(
    ("text", "probe"),
    [
        ("quanto custa a limpeza?", "objecao-preco"),
        ("vou pensar e te falo", "objecao-preco"),
        ("qual o horário de funcionamento?", "agendamento"),
    ],
)
def test_questions_near_a_skill_are_only_probes(text: str, probe: str) -> None:
    result = match_skills(_installed(), text)
    assert result.matched == [] and result.probes == [probe]


@pytest.mark.parametrize(
    ("created_by", "forked", "source"),
    [
        ("user", None, SkillSource.MANUAL),
        ("user", uuid.uuid4(), SkillSource.CATALOG),
        ("agent", None, SkillSource.AGENT),
        ("agent", uuid.uuid4(), SkillSource.CATALOG),
        ("platform", None, SkillSource.CATALOG),
    ],
)
def test_skill_source(created_by: str, forked: uuid.UUID | None, source: SkillSource) -> None:
    assert skill_source(created_by, forked) is source


def test_draft_of_keeps_content_and_hash() -> None:
    package = load_catalog_package(DEFAULT_CATALOG_DIR / "objecao-preco")
    draft = draft_of(package)
    assert (draft.name, draft.body, draft.matcher) == (package.name, package.body, package.matcher)
    assert [(f.path, f.data, f.kind) for f in draft.files] == [
        (f.path, f.data, f.kind) for f in package.files
    ]
    assert draft.content_sha256 == package.content_sha256


def test_lock_keys_are_per_owner_and_fit_a_bigint() -> None:
    org = uuid.uuid4()
    keys = {catalog_lock_key(None), catalog_lock_key(org), catalog_lock_key(uuid.uuid4())}
    assert len(keys) == 3 and catalog_lock_key(org) == catalog_lock_key(org)
    assert all(-(2**63) <= k < 2**63 for k in keys)


def test_catalog_folder_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(CatalogFolderInvalid, match="não existe"):
        catalog_folders(tmp_path / "nada")
    with pytest.raises(CatalogFolderInvalid, match="não tem skills"):
        catalog_folders(tmp_path)
    (tmp_path / "frete").mkdir()
    (tmp_path / "frete" / "SKILL.md").write_text(skill_md_text("outra"))
    with pytest.raises(CatalogFolderInvalid, match="precisa ser igual ao nome da pasta"):
        load_catalog_package(tmp_path / "frete")
