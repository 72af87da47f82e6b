"""The conversation's mode and how it changes: who answers the customer now.

Three modes (stored in `conversations.mode`): the agent answers (`agent`); somebody asked for a
person and the agent is silent until one takes it (`waiting`); a person holds it (`human`, with
`held_by`). Every change goes through one SQL function, `skillet_change_mode`, whose transitions
are `next_mode`'s below (a test holds the two equal):

| transition    | from            | to      | who                                              |
|---------------|-----------------|---------|--------------------------------------------------|
| handoff       | agent           | waiting | the turn's commit (handoff_to_human, the customer)|
| take          | any             | human   | a person: console, API, CLI                      |
| phone_reply   | any             | human   | the owner's phone answered (an echo)             |
| release       | any             | agent   | a person hands it back                           |
| idle_return   | human           | agent   | nobody wrote for the idle time (the handoff cron)|
| holder_gone   | human           | waiting | its holder was deactivated (people)               |
| wait_notice   | waiting         | waiting | the "still calling someone" notice, sent once    |

Any other pair changes nothing (the function answers null). Pure: values in, values out.
"""

from __future__ import annotations

from enum import StrEnum


class ConversationMode(StrEnum):
    AGENT = "agent"
    WAITING = "waiting"
    HUMAN = "human"


class Transition(StrEnum):
    HANDOFF = "handoff"
    TAKE = "take"
    PHONE_REPLY = "phone_reply"
    RELEASE = "release"
    IDLE_RETURN = "idle_return"
    HOLDER_GONE = "holder_gone"
    WAIT_NOTICE = "wait_notice"


ANY = frozenset(ConversationMode)

# transition -> (the modes it applies to, the mode after)
RULES: dict[Transition, tuple[frozenset[ConversationMode], ConversationMode]] = {
    Transition.HANDOFF: (frozenset({ConversationMode.AGENT}), ConversationMode.WAITING),
    Transition.TAKE: (ANY, ConversationMode.HUMAN),
    Transition.PHONE_REPLY: (ANY, ConversationMode.HUMAN),
    Transition.RELEASE: (ANY, ConversationMode.AGENT),
    Transition.IDLE_RETURN: (frozenset({ConversationMode.HUMAN}), ConversationMode.AGENT),
    Transition.HOLDER_GONE: (frozenset({ConversationMode.HUMAN}), ConversationMode.WAITING),
    Transition.WAIT_NOTICE: (frozenset({ConversationMode.WAITING}), ConversationMode.WAITING),
}

# A person holds the conversation in these modes: the agent is silent.
PERSON_MODES = frozenset({ConversationMode.WAITING, ConversationMode.HUMAN})


def next_mode(mode: ConversationMode, transition: Transition) -> ConversationMode | None:
    """The mode after `transition`, or None when it does not apply to `mode`."""
    applies_to, after = RULES[transition]
    return after if mode in applies_to else None
