"""Catalog intent models in the matcher: they add a match only to the exact skill they were
trained for (name and keywords), rank after keyword matches, and fail loudly on a bad file."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from types import MappingProxyType

import pytest

from skills.labelled_corpus import catalog_skills
from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import compile_matcher, match_skills
from turn.matcher.intent_model import (
    MAX_MODEL_FILE_BYTES,
    NO_INTENT_MODELS,
    IntentModel,
    IntentModelError,
    IntentModels,
    keywords_sha256,
    load_intent_models,
    parse_intent_model,
)

PIX = SkillMatcher(any_keywords=["pix"], probe_keywords=["pagamento"])


def _skill(name: str, matcher: SkillMatcher, body: str = "b") -> LoadedSkill:
    return LoadedSkill(
        version_id=uuid.uuid4(), name=name, description="d", body=body, matcher=matcher
    )


def _model(name: str, matcher: SkillMatcher) -> IntentModels:
    # Accepts any text with the word "boleto" (score 5 - 1 > 0), nothing else (-1).
    model = IntentModel(
        skill=name,
        keywords_sha256=keywords_sha256(matcher),
        bias=-1.0,
        threshold=0.0,
        weights=MappingProxyType({"w:boleto": 5.0}),
    )
    return MappingProxyType({(name, model.keywords_sha256): model})


def _names(skills: list[LoadedSkill]) -> list[str]:
    return [s.name for s in skills]


def test_a_model_matches_its_skill_where_no_keyword_occurs() -> None:
    matcher = compile_matcher([_skill("pagamentos", PIX)], intent_models=_model("pagamentos", PIX))
    assert _names(matcher.match("mandei o BOLETO ontem").matched) == ["pagamentos"]
    assert matcher.match("mandei ontem").matched == []
    keywords_only = compile_matcher([_skill("pagamentos", PIX)], intent_models=NO_INTENT_MODELS)
    assert keywords_only.match("mandei o boleto ontem").matched == []


def test_a_model_applies_only_to_the_name_and_keywords_it_was_trained_for() -> None:
    models = _model("pagamentos", PIX)
    edited_body = _skill("pagamentos", PIX, body="Nosso jeito de cobrar.")
    assert _names(compile_matcher([edited_body], intent_models=models).match("boleto").matched)
    edited = [
        _skill("pagamentos", SkillMatcher(any_keywords=["pix", "cartao"])),
        _skill("pagamentos", SkillMatcher(any_keywords=["pix"])),  # probe list dropped
        _skill("pagamentos", SkillMatcher(any_keywords=["PIX"], probe_keywords=["pagamento"])),
        _skill("cobranca", PIX),  # same keywords, another name
    ]
    for skill in edited:
        assert compile_matcher([skill], intent_models=models).match("boleto").matched == []


def test_model_matches_rank_after_keyword_matches_and_are_capped_first() -> None:
    skills = [_skill("pagamentos", PIX), _skill("zeta", SkillMatcher(any_keywords=["boleto"]))]
    matcher = compile_matcher(skills, intent_models=_model("pagamentos", PIX))
    both = matcher.match("segue o boleto")
    assert _names(both.matched) == ["zeta", "pagamentos"] and both.by_intent == ["pagamentos"]
    capped = matcher.match("segue o boleto", max_matched=1)
    assert _names(capped.matched) == ["zeta"] and capped.capped == ["pagamentos"]
    assert capped.by_intent == []  # cut by the cap: not injected, so not counted
    assert matcher.match("segue o boleto no pix").by_intent == []  # its keywords matched


def test_a_skill_its_model_matched_is_not_also_a_probe() -> None:
    matcher = compile_matcher([_skill("pagamentos", PIX)], intent_models=_model("pagamentos", PIX))
    assert matcher.match("o pagamento").probes == ["pagamentos"]
    both = matcher.match("o pagamento do boleto")
    assert _names(both.matched) == ["pagamentos"] and both.probes == []


def test_the_model_is_asked_only_when_keywords_did_not_match() -> None:
    matcher = compile_matcher([_skill("pagamentos", PIX)], intent_models=_model("pagamentos", PIX))
    assert matcher.scan_work("pago no pix").intent_lookups == 0
    assert matcher.scan_work("pago no boleto").intent_lookups > 0


def test_the_shipped_catalog_models_add_what_its_keywords_miss() -> None:
    # Price objections the catalog's keywords never matched (tune part of the corpus).
    catalog = catalog_skills()
    keywords = compile_matcher(catalog, intent_models=NO_INTENT_MODELS)
    for text in ("é muito pra mim", "faz 3x?"):
        assert _names(match_skills(catalog, text).matched) == ["objecao-preco"], text
        assert keywords.match(text).matched == [], text


def _document(**changes: object) -> bytes:
    document: dict[str, object] = {
        "format": 1,
        "skill": "pagamentos",
        "keywords_sha256": "0" * 64,
        "bias": -1.0,
        "threshold": 0.5,
        "weights": {"w:boleto": 2.0},
    }
    document.update(changes)
    return json.dumps(document).encode()


def test_a_model_file_is_read_and_keyed_by_what_it_applies_to(tmp_path: Path) -> None:
    (tmp_path / "pagamentos.json").write_bytes(_document())
    (tmp_path / "notes.txt").write_text("not a model")
    models = load_intent_models(tmp_path)
    model = models[("pagamentos", "0" * 64)]
    assert model.score(frozenset({"w:boleto", "w:oi"})) == 1.0
    assert load_intent_models(tmp_path / "absent") == {}


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (_document(format=2), "format 2"),
        (_document(keywords_sha256="abc"), "keywords_sha256"),
        (_document(weights={"w:a": "muito"}), "weights"),
        (_document(skill=""), "skill"),
        (_document(weights={"w:a": float("nan")}), "weights"),
        (_document(threshold=float("inf")), "threshold"),
        (b"{not json", "not an intent model file"),
        (b" " * (MAX_MODEL_FILE_BYTES + 1), "more than"),
    ],
)
def test_a_bad_model_file_is_refused_with_what_is_wrong(raw: bytes, says: str) -> None:
    with pytest.raises(IntentModelError, match=says) as refused:
        parse_intent_model(raw, "models/pagamentos.json")
    assert "models/pagamentos.json" in str(refused.value)
