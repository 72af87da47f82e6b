"""Whether a customer's message asks for a person (a stub until the pt-BR detector lands).

The detector's contract: `asks_for_person(text) -> bool`, pure, bounded and deterministic;
True hands the conversation to a person before any model call (turn.burst).
"""

from __future__ import annotations


def asks_for_person(text: str) -> bool:
    """Never, for now: the measured pt-BR rule replaces this module."""
    return False
