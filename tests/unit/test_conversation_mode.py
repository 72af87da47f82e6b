"""conversation.mode's transition rules, as a table."""

from __future__ import annotations

import pytest

from conversation.mode import ConversationMode as M
from conversation.mode import Transition as T
from conversation.mode import next_mode


@pytest.mark.parametrize(
    ("mode", "transition", "after"),
    [
        (M.AGENT, T.HANDOFF, M.WAITING),
        (M.WAITING, T.HANDOFF, None),  # asked once already: the second changes nothing
        (M.HUMAN, T.HANDOFF, None),  # a person holds it: the agent cannot hand it off
        (M.AGENT, T.TAKE, M.HUMAN),
        (M.WAITING, T.TAKE, M.HUMAN),
        (M.HUMAN, T.TAKE, M.HUMAN),
        (M.AGENT, T.PHONE_REPLY, M.HUMAN),
        (M.WAITING, T.RELEASE, M.AGENT),
        (M.HUMAN, T.IDLE_RETURN, M.AGENT),
        (M.WAITING, T.IDLE_RETURN, None),  # nobody took it: waiting is not idleness
        (M.AGENT, T.IDLE_RETURN, None),
        (M.HUMAN, T.HOLDER_GONE, M.WAITING),
        (M.AGENT, T.HOLDER_GONE, None),
        (M.WAITING, T.WAIT_NOTICE, M.WAITING),
        (M.HUMAN, T.WAIT_NOTICE, None),
    ],
)
def test_next_mode(mode: M, transition: T, after: M | None) -> None:
    assert next_mode(mode, transition) == after
