"""A tenant key's proofs: the HMAC-SHA256 of the org id as written, the same on every call."""

from __future__ import annotations

import hashlib
import hmac
import uuid

from core import tenant_key
from core.tenant_key import TenantKey

SECRET = "s" * 40


def test_a_proof_is_the_hmac_of_the_org_id_as_written() -> None:
    key = TenantKey.from_setting(SECRET)
    org = uuid.uuid4()
    expected = hmac.new(SECRET.encode(), str(org).encode(), hashlib.sha256).hexdigest()
    assert key.proof(org) == key.proof(str(org)) == expected
    assert key.proof(org) == expected  # remembered, unchanged
    assert key.proof(str(org).upper()) != expected  # another spelling, another proof


def test_remembered_proofs_stay_bounded_and_right() -> None:
    key = TenantKey.from_setting(SECRET)
    orgs = [uuid.uuid4() for _ in range(tenant_key.MAX_REMEMBERED_PROOFS + 10)]
    for org in orgs:
        key.proof(org)
    assert len(key._proofs) <= tenant_key.MAX_REMEMBERED_PROOFS
    first = orgs[0]
    assert (
        key.proof(first)
        == hmac.new(SECRET.encode(), str(first).encode(), hashlib.sha256).hexdigest()
    )
