"""Unit tests of turn.reference_tool with an in-memory ObjectStore: scoped, capped, teaching."""

from __future__ import annotations

import uuid

import pytest

from core.errors import StorageError
from core.object_store import ObjectNotFound, StoredObject
from skills.models import FileKind, LoadedSkill, ManifestEntry
from tests.tool_support import read_reference, reference_context
from turn.tools.base import ToolResult
from turn.tools.page_cache import StoredPageCache

ORG = uuid.UUID("11111111-1111-4111-8111-111111111111")
OTHER_ORG = uuid.UUID("22222222-2222-4222-8222-222222222222")
PRAZOS = "Boletos podem ser reemitidos até 30 dias após o vencimento.\n"


class MemoryStore:
    """An ObjectStore over a dict; remembers every key asked for; can be told to fail."""

    def __init__(self, objects: dict[str, bytes], fail: Exception | None = None) -> None:
        self.objects = objects
        self.fail = fail
        self.gets: list[tuple[str, int]] = []
        self.offsets: list[tuple[int, int]] = []

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        self.objects[key] = data

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        self.gets.append((key, max_bytes))
        self.offsets.append((offset, max_bytes))
        if self.fail is not None:
            raise self.fail
        if key not in self.objects:
            raise ObjectNotFound(f"no object at {key}")
        data = self.objects[key][offset:]
        return StoredObject(data=data[:max_bytes], truncated=len(data) > max_bytes)


def boleto(version_id: uuid.UUID | None = None, size: int = len(PRAZOS)) -> LoadedSkill:
    return LoadedSkill(
        name="segunda-via-boleto",
        body="Envio a segunda via.",
        manifest=(
            ManifestEntry("references/prazos.md", size, "0" * 64, FileKind.REFERENCE),
            ManifestEntry("assets/logo.png", 10, "1" * 64, FileKind.ASSET),
        ),
        version_id=version_id or uuid.uuid4(),
    )


def key(org: uuid.UUID, skill: LoadedSkill, path: str) -> str:
    return f"{org}/{skill.name}/{skill.version_id}/{path}"


async def read(
    store: MemoryStore,
    matched: list[LoadedSkill],
    skill_name: object,
    path: object,
    *,
    organization_id: uuid.UUID = ORG,
    max_bytes: int = 4096,
    offset: int | None = None,
) -> ToolResult:
    context = reference_context(store, organization_id, matched, max_bytes=max_bytes)
    return await read_reference(context, skill_name, path, offset)


async def test_a_listed_reference_of_a_matched_skill_is_returned() -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): PRAZOS.encode()})
    result = await read(store, [skill], "segunda-via-boleto", "references/prazos.md")
    assert result == ToolResult(content=PRAZOS, error_code=None)


async def test_the_key_is_built_from_the_trusted_org_and_the_matched_version() -> None:
    skill = boleto(size=len("desta org"))
    other_version = boleto()
    store = MemoryStore(
        {
            key(ORG, skill, "references/prazos.md"): b"desta org",
            key(OTHER_ORG, skill, "references/prazos.md"): b"de outra org",
            key(ORG, other_version, "references/prazos.md"): b"de outra versao",
        }
    )
    result = await read(store, [skill], "segunda-via-boleto", "references/prazos.md")
    assert result.content == "desta org"
    assert store.gets == [
        (f"{ORG}/segunda-via-boleto/{skill.version_id}/references/prazos.md", 4096)
    ]

    store.gets.clear()
    result = await read(
        store, [skill], "segunda-via-boleto", "references/prazos.md", organization_id=OTHER_ORG
    )
    assert result.content.startswith("de outra org")
    assert [k for k, _ in store.gets] == [key(OTHER_ORG, skill, "references/prazos.md")]


async def test_a_skill_not_matched_in_this_turn_is_refused_without_touching_storage() -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): PRAZOS.encode()})
    result = await read(store, [skill], "frete", "references/prazos.md")
    assert result.error_code == "skill_not_active"
    assert result.content.startswith("[erro skill_not_active]")
    assert "segunda-via-boleto" in result.content  # teaches which skills are active
    assert store.gets == []

    nothing = await read(store, [], "segunda-via-boleto", "references/prazos.md")
    assert nothing.error_code == "skill_not_active"
    assert "nenhuma" in nothing.content


@pytest.mark.parametrize(
    "path",
    [
        "references/outro.md",
        "assets/logo.png",
        "../../22222222-2222-4222-8222-222222222222/x/references/prazos.md",
        "references/../assets/logo.png",
        "/references/prazos.md",
        "",
    ],
)
async def test_a_path_not_listed_as_a_reference_is_not_found(path: str) -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "assets/logo.png"): b"\x89PNG"})
    result = await read(store, [skill], "segunda-via-boleto", path)
    assert result.error_code == "reference_not_found"
    assert "references/prazos.md" in result.content  # teaches the listed paths
    assert "assets/logo.png" not in result.content.split("Referências:")[1]
    assert store.gets == []


async def test_a_long_file_is_read_page_by_page_from_the_offset_each_page_names() -> None:
    skill = boleto(size=700)
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): b"a" * 400 + b"b" * 300})
    first = await read(store, [skill], skill.name, "references/prazos.md", max_bytes=300)
    body, notice = first.content.split("\n\n", 1)
    assert body == "a" * 300
    assert notice == (
        "[trecho: bytes 0 a 300 de 700; para ler o restante, chame de novo com offset=300]"
    )
    second = await read(
        store, [skill], skill.name, "references/prazos.md", max_bytes=300, offset=300
    )
    assert second.content.startswith("a" * 100 + "b" * 200 + "\n\n[trecho: bytes 300 a 600")
    last = await read(store, [skill], skill.name, "references/prazos.md", max_bytes=300, offset=600)
    assert last.content == "b" * 100 + "\n\n[trecho final: bytes 600 a 700 de 700]"
    past = await read(
        store, [skill], skill.name, "references/prazos.md", max_bytes=300, offset=5000
    )
    assert past.error_code is None and past.content.startswith("\n\n[trecho final")
    assert [offset for offset, _ in store.offsets] == [0, 300, 600, 5000]


async def test_content_at_the_cap_has_no_notice() -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): b"a" * 300})
    result = await read(store, [skill], skill.name, "references/prazos.md", max_bytes=300)
    assert result.content == "a" * 300


async def test_a_page_never_cuts_a_character_and_goes_on_after_the_last_whole_one() -> None:
    data = "ação".encode() * 10
    skill = boleto(size=len(data))
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): data})
    result = await read(store, [skill], skill.name, "references/prazos.md", max_bytes=2)
    body, notice = result.content.split("\n\n", 1)
    assert body == "a" and notice.endswith("offset=1]")


async def test_a_storage_failure_is_reported_as_storage_unavailable() -> None:
    skill = boleto()
    store = MemoryStore({}, fail=StorageError("connection reset"))
    result = await read(store, [skill], skill.name, "references/prazos.md")
    assert result.error_code == "storage_unavailable"
    assert result.content.startswith("[erro storage_unavailable]")
    assert "connection reset" not in result.content


async def test_a_missing_object_is_reported_as_reference_not_found() -> None:
    skill = boleto()
    store = MemoryStore({})
    result = await read(store, [skill], skill.name, "references/prazos.md")
    assert result.error_code == "reference_not_found"
    assert len(store.gets) == 1


@pytest.mark.parametrize("bad", [None, 123, {"path": "references/prazos.md"}, ["x"]])
async def test_non_string_arguments_from_the_model_get_teaching_errors(bad: object) -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): PRAZOS.encode()})

    as_name = await read(store, [skill], bad, "references/prazos.md")
    assert as_name.error_code == "tool_arguments_invalid"
    assert "skill_name: precisa ser texto" in as_name.content

    as_path = await read(store, [skill], skill.name, bad)
    assert as_path.error_code == "tool_arguments_invalid"
    assert "path: precisa ser texto" in as_path.content
    assert store.gets == []


async def test_a_worker_reads_a_page_from_storage_once_across_turns() -> None:
    skill = boleto()
    store = MemoryStore({key(ORG, skill, "references/prazos.md"): PRAZOS.encode()})
    worker_cache = StoredPageCache()
    for _ in range(3):  # three turns of one worker
        context = reference_context(store, ORG, [skill], page_cache=worker_cache)
        result = await read_reference(context, "segunda-via-boleto", "references/prazos.md")
        assert result.content == PRAZOS
    assert len(store.gets) == 1


THEIR_PRAZOS = PRAZOS.replace("Boletos", "Faturas")  # same sizes: one manifest fits all
NEW_PRAZOS = PRAZOS.replace("30 dias", "45 dias")


async def test_a_cached_page_is_not_served_to_another_org_or_version() -> None:
    skill = boleto()
    newer = boleto()  # same name and path, another version
    store = MemoryStore(
        {
            key(ORG, skill, "references/prazos.md"): PRAZOS.encode(),
            key(OTHER_ORG, skill, "references/prazos.md"): THEIR_PRAZOS.encode(),
            key(ORG, newer, "references/prazos.md"): NEW_PRAZOS.encode(),
        }
    )
    cache = StoredPageCache()
    mine = await read_reference(
        reference_context(store, ORG, [skill], page_cache=cache),
        "segunda-via-boleto",
        "references/prazos.md",
    )
    theirs = await read_reference(
        reference_context(store, OTHER_ORG, [skill], page_cache=cache),
        "segunda-via-boleto",
        "references/prazos.md",
    )
    updated = await read_reference(
        reference_context(store, ORG, [newer], page_cache=cache),
        "segunda-via-boleto",
        "references/prazos.md",
    )
    assert (mine.content, theirs.content, updated.content) == (PRAZOS, THEIR_PRAZOS, NEW_PRAZOS)
    assert len(store.gets) == 3


async def test_a_failed_read_is_not_remembered() -> None:
    skill = boleto()
    store = MemoryStore({}, fail=StorageError("s3 down"))
    cache = StoredPageCache()
    context = reference_context(store, ORG, [skill], page_cache=cache)
    first = await read_reference(context, "segunda-via-boleto", "references/prazos.md")
    store.fail = None
    store.objects[key(ORG, skill, "references/prazos.md")] = PRAZOS.encode()
    second = await read_reference(context, "segunda-via-boleto", "references/prazos.md")
    assert first.error_code == "storage_unavailable"
    assert second.content == PRAZOS


def test_the_page_cache_keeps_the_most_recent_pages_within_its_byte_budget() -> None:
    cache = StoredPageCache(max_bytes=10)
    page = StoredObject(data=b"12345", truncated=False)
    cache.put(("a", "sha-a", 0, 16), page)
    cache.put(("b", "sha-b", 0, 16), page)
    assert cache.get(("a", "sha-a", 0, 16)) is page  # now the most recent
    cache.put(("c", "sha-c", 0, 16), page)
    assert cache.get(("b", "sha-b", 0, 16)) is None
    assert cache.get(("a", "sha-a", 0, 16)) is page
    assert cache.bytes_held == 10
    cache.put(("big", "sha-big", 0, 16), StoredObject(data=b"x" * 11, truncated=False))
    assert cache.get(("big", "sha-big", 0, 16)) is None
    assert StoredPageCache(max_bytes=0).get(("a", "sha-a", 0, 16)) is None
