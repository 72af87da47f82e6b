"""S3 credentials: explicit keys when set, else botocore's standard chain; AWS_REGION honoured."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from worker.resources import S3Keys, s3_client, s3_credentials
from worker.settings import Settings


@pytest.fixture
def shared_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shared credentials file is the only source of keys; no instance metadata lookup."""
    path = tmp_path / "credentials"
    path.write_text("[default]\naws_access_key_id = FROMCHAIN\naws_secret_access_key = chain\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def test_no_keys_by_default_and_none_passed_to_the_client() -> None:
    settings = Settings()
    assert settings.aws_access_key_id is None
    assert settings.aws_secret_access_key is None
    assert s3_credentials(settings) == S3Keys(None, None, None)


def test_explicit_keys_and_session_token_are_passed() -> None:
    settings = Settings(
        aws_access_key_id="AKIA1",
        aws_secret_access_key=SecretStr("s1"),
        aws_session_token=SecretStr("t1"),
    )
    assert s3_credentials(settings) == S3Keys("AKIA1", "s1", "t1")


def test_one_key_without_the_other_is_refused() -> None:
    with pytest.raises(ValidationError, match="or neither"):
        Settings(aws_access_key_id="AKIA1")


async def test_without_keys_the_client_takes_them_from_the_standard_chain(
    shared_credentials: None,
) -> None:
    async with s3_client(Settings()) as client:
        frozen = await client._request_signer._credentials.get_frozen_credentials()
    assert (frozen.access_key, frozen.secret_key) == ("FROMCHAIN", "chain")


async def test_explicit_keys_win_over_the_chain(shared_credentials: None) -> None:
    settings = Settings(aws_access_key_id="AKIA1", aws_secret_access_key=SecretStr("s1"))
    async with s3_client(settings) as client:
        frozen = await client._request_signer._credentials.get_frozen_credentials()
    assert frozen.access_key == "AKIA1"


def test_region_from_aws_region_then_aws_default_region(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().s3_region is None  # botocore's own lookup
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert Settings().s3_region == "eu-west-1"
    monkeypatch.setenv("AWS_REGION", "sa-east-1")
    assert Settings().s3_region == "sa-east-1"
    monkeypatch.setenv("SKILLET_S3_REGION", "us-west-2")
    assert Settings().s3_region == "us-west-2"
    assert Settings(s3_region="ap-south-1").s3_region == "ap-south-1"


async def test_the_client_signs_for_the_region_of_aws_region(
    shared_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "sa-east-1")
    async with s3_client(Settings()) as client:
        assert client.meta.region_name == "sa-east-1"
