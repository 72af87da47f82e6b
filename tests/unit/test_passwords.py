"""api.passwords: argon2id, a bounded number of hashes at once, the dummy for no hash."""

from __future__ import annotations

import asyncio

from api import passwords


async def test_hashes_are_argon2id_and_verify_only_their_password() -> None:
    encoded = await passwords.hash_password("uma senha bem longa")
    assert encoded.startswith("$argon2id$")
    assert "uma senha bem longa" not in encoded
    assert await passwords.verify_password(encoded, "uma senha bem longa")
    assert not await passwords.verify_password(encoded, "outra senha longa")
    assert not await passwords.verify_password("não é um hash", "uma senha bem longa")


async def test_no_hash_checks_the_dummy_and_answers_false() -> None:
    before = passwords._dummy_hash.cache_info()
    assert not await passwords.verify_password(None, "skillet dummy password, never anyone's")
    after = passwords._dummy_hash.cache_info()
    assert after.hits + after.misses == before.hits + before.misses + 1


async def test_at_most_a_few_hashes_run_at_once() -> None:
    seen: list[int] = []

    async def watch() -> None:
        while True:
            seen.append(passwords.hashes_running())
            await asyncio.sleep(0.001)

    watcher = asyncio.create_task(watch())
    await asyncio.gather(*(passwords.verify_password(None, f"senha {n:04}xx") for n in range(8)))
    watcher.cancel()
    assert max(seen) == passwords.MAX_CONCURRENT_HASHES


def test_password_length_is_10_to_256() -> None:
    assert passwords.password_problem("x" * 9) is not None
    assert passwords.password_problem("x" * 10) is None
    assert passwords.password_problem("x" * 256) is None
    assert passwords.password_problem("x" * 257) is not None
