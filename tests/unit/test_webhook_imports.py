"""The webhook's process loads none of the turn engine: contracts sit below what uses them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# The engine: the matcher and its intent models, the agent loop, tools, providers, prompt,
# and the holder and burst that drive them.
ENGINE_PREFIXES = (
    "turn.matcher",
    "turn.tools",
    "turn.providers",
    "turn.prompt",
    "turn.agent_loop",
    "conversation.holder",
    "conversation.burst",
)

_PROBE = """
import json, sys
import {module}
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_by(module: str) -> list[str]:
    """The modules a fresh interpreter holds after importing `module` (nothing else)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def _engine(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(ENGINE_PREFIXES) or "intent" in m.rsplit(".", 1)[-1]]


@pytest.mark.parametrize("module", ["webhook.server", "webhook.app"])
def test_importing_the_webhook_loads_no_engine_module(module: str) -> None:
    loaded = _loaded_by(module)
    assert module in loaded
    assert _engine(loaded) == []


def test_the_probe_sees_the_engine_when_it_is_loaded() -> None:
    # The check above could pass by looking in the wrong place: the worker's jobs do load it.
    engine = _engine(_loaded_by("jobs.inbound"))
    assert "conversation.holder" in engine
    assert any(m.startswith("turn.matcher.match") for m in engine)
