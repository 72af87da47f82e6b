"""Skill files in S3-compatible object storage: key layout, the ObjectStore protocol, S3 impl."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from core.errors import SkilletError, StorageError


class ObjectNotFound(SkilletError):
    code = "object_not_found"


def object_key(
    organization_id: uuid.UUID | None, skill: str, version_id: uuid.UUID, path: str
) -> str:
    """`{org}/{skill}/{version}/{path}`, or `platform/...` for the catalog.

    Built only from trusted values: the org comes from the job row or CLI flag, the version
    from the pointer, the path from the version's manifest.
    """
    owner = "platform" if organization_id is None else str(organization_id)
    return f"{owner}/{skill}/{version_id}/{path}"


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    truncated: bool


class ObjectStore(Protocol):
    async def put(self, key: str, data: bytes, content_type: str) -> None: ...

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        """At most `max_bytes` from byte `offset`; `truncated`: more exists after them."""
        ...

    async def copy(self, source_key: str, dest_key: str) -> None:
        """Server-side copy within the bucket (the bytes never pass through us)."""
        ...


_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}
_PAST_THE_END_CODES = {"InvalidRange", "416"}


class S3ObjectStore:
    """ObjectStore over an open aiobotocore S3 client (the composition root owns the client)."""

    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        try:
            await self._client.put_object(
                Bucket=self._bucket, Key=key, Body=data, ContentType=content_type
            )
        except (BotoCoreError, ClientError) as exc:
            raise StorageError(f"could not store {key}: {exc}") from exc

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        """At most `max_bytes` from byte `offset`; `truncated` says whether more exists."""
        try:
            # One byte past the cap tells us whether the object is longer, without reading it all.
            response = await self._client.get_object(
                Bucket=self._bucket, Key=key, Range=f"bytes={offset}-{offset + max_bytes}"
            )
            async with response["Body"] as body:
                data: bytes = await body.read()
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in _MISSING_CODES:
                raise ObjectNotFound(f"no object at {key}") from exc
            if code in _PAST_THE_END_CODES:  # an offset at or past the end: nothing more
                return StoredObject(data=b"", truncated=False)
            raise StorageError(f"could not read {key}: {exc}") from exc
        except BotoCoreError as exc:
            raise StorageError(f"could not read {key}: {exc}") from exc
        return StoredObject(data=data[:max_bytes], truncated=len(data) > max_bytes)

    async def delete_many(self, keys: Sequence[str]) -> list[str]:
        """Delete up to 1,000 objects in one request (a missing one counts as deleted);
        returns the keys deleted."""
        if not keys:
            return []
        try:
            answer = await self._client.delete_objects(
                Bucket=self._bucket,
                Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True},
            )
        except (BotoCoreError, ClientError) as exc:
            raise StorageError(f"could not delete {len(keys)} object(s): {exc}") from exc
        failed = {e.get("Key") for e in answer.get("Errors", []) if e.get("Code") != "NoSuchKey"}
        return [key for key in keys if key not in failed]

    async def copy(self, source_key: str, dest_key: str) -> None:
        try:
            await self._client.copy_object(
                Bucket=self._bucket,
                Key=dest_key,
                CopySource={"Bucket": self._bucket, "Key": source_key},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING_CODES:
                raise ObjectNotFound(f"no object at {source_key}") from exc
            raise StorageError(f"could not copy {source_key} to {dest_key}: {exc}") from exc
        except BotoCoreError as exc:
            raise StorageError(f"could not copy {source_key} to {dest_key}: {exc}") from exc

    async def ensure_bucket(self) -> bool:
        """Create the bucket if missing; True if this call created it."""
        try:
            await self._client.head_bucket(Bucket=self._bucket)
            return False
        except ClientError:
            pass
        except BotoCoreError as exc:
            raise StorageError(f"object storage unreachable: {exc}") from exc
        try:
            await self._client.create_bucket(Bucket=self._bucket)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                raise StorageError(f"could not create bucket {self._bucket}: {exc}") from exc
            return False  # created by someone else between our check and our create
        except BotoCoreError as exc:
            raise StorageError(f"object storage unreachable: {exc}") from exc
        return True
