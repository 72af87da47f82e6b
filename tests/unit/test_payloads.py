"""Unit tests of jobs.payloads, jobs.serialization and inbox.message: the queue's JSON
contract and the inbound message an operator names."""

from __future__ import annotations

import json
import pickle
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from inbox.message import InboundMessage
from jobs import serialization
from jobs.payloads import ConversationPayload, inbound_job_id

ORG = uuid.UUID("7b0c6d3e-2f4a-4e51-9a36-0c1d2e3f4a5b")


def raw(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "organization_id": str(ORG),
        "channel": "whatsapp",
        "contact_id": "5511987654321",
        "message_id": "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjA=",
        "text": "Oi! Preciso da segunda via do boleto.",
        "sent_at": "2024-11-05T13:45:00-03:00",
    }
    payload.update(changes)
    return payload


def test_a_valid_payload_round_trips_through_the_queue_serializer() -> None:
    payload = InboundMessage.model_validate(raw())
    data = serialization.dumps(payload.model_dump(mode="json"))
    again = InboundMessage.model_validate(serialization.loads(data))
    assert again == payload
    assert again.organization_id == ORG
    assert again.sent_at == datetime(2024, 11, 5, 16, 45, tzinfo=UTC)
    assert again.text == "Oi! Preciso da segunda via do boleto."


def test_a_job_carries_ids_only() -> None:
    wakeup = ConversationPayload(organization_id=ORG, conversation_id=uuid.uuid4())
    data = serialization.dumps(wakeup.model_dump(mode="json"))
    assert ConversationPayload.model_validate(serialization.loads(data)) == wakeup
    with pytest.raises(ValidationError):  # the previous release's shape is not a job any more
        ConversationPayload.model_validate(raw())


def test_the_serializer_writes_json_never_pickle() -> None:
    job = {"f": "handle_inbound_message", "a": [raw()], "k": {}, "t": 1, "et": 1_700_000_000_000}
    data = serialization.dumps(job)
    assert isinstance(data, bytes)
    assert not data.startswith(b"\x80")
    assert json.loads(data) == job
    assert serialization.loads(data) == job


def test_a_pickled_job_is_never_unpickled_but_becomes_a_dead_letter_call() -> None:
    evil = pickle.dumps({"f": "handle_inbound_message"})
    job = serialization.loads(evil)
    assert job["f"] == serialization.UNDECODABLE_JOB
    assert job["k"] == {} and job["t"] == 1
    [kept] = job["a"]
    assert isinstance(kept, str) and "handle_inbound_message" in kept
    assert len(serialization.loads(b"\xff" * 100_000)["a"][0]) == serialization.MAX_KEPT_CHARS


def test_the_serializer_stores_an_exception_result_as_text() -> None:
    data = serialization.dumps({"r": RuntimeError("model_unavailable"), "s": False})
    assert json.loads(data) == {"r": "model_unavailable", "s": False}


def test_job_id_is_the_same_for_a_redelivery_of_the_same_message() -> None:
    message_id = raw()["message_id"]
    first = inbound_job_id(ORG, message_id)
    assert first == inbound_job_id(ORG, message_id)
    assert first.startswith(f"inbound:{ORG}:whatsapp:")


def test_job_id_differs_for_another_message_or_another_org() -> None:
    base = inbound_job_id(ORG, raw()["message_id"])
    other_message = inbound_job_id(ORG, "wamid.outra")
    other_org = inbound_job_id(uuid.uuid4(), raw()["message_id"])
    assert len({base, other_message, other_org}) == 3


def test_job_id_is_bounded_for_a_long_message_id() -> None:
    payload = InboundMessage.model_validate(raw(message_id="x" * 256))
    assert len(inbound_job_id(payload.organization_id, payload.message_id)) < 120


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"sent_at": "2024-11-05T13:45:00"}, id="naive-datetime"),
        pytest.param({"unexpected": "field"}, id="unknown-field"),
        pytest.param({"text": ""}, id="empty-text"),
        pytest.param({"text": "   \n "}, id="blank-text"),
        pytest.param({"channel": "telegram"}, id="bad-channel"),
        pytest.param({"organization_id": "not-a-uuid"}, id="bad-org-id"),
        pytest.param({"organization_id": ""}, id="empty-org-id"),
        pytest.param({"message_id": ""}, id="empty-message-id"),
        pytest.param({"contact_id": "55 11 9876; drop"}, id="bad-contact-id"),
    ],
)
def test_bad_payloads_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        InboundMessage.model_validate(raw(**changes))


def test_a_naive_datetime_object_is_refused_and_an_aware_one_accepted() -> None:
    with pytest.raises(ValidationError):
        InboundMessage.model_validate(raw(sent_at=datetime(2024, 11, 5, 13, 45)))
    brt = timezone(timedelta(hours=-3))
    ok = InboundMessage.model_validate(raw(sent_at=datetime(2024, 11, 5, 13, 45, tzinfo=brt)))
    assert ok.sent_at.utcoffset() == timedelta(hours=-3)


def test_a_payload_is_frozen() -> None:
    payload = InboundMessage.model_validate(raw())
    with pytest.raises(ValidationError):
        payload.text = "outra coisa"
