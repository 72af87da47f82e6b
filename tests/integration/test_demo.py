"""`skillet demo` on the real services: every scenario of the transcript happens for real."""

from __future__ import annotations

import asyncpg
import pytest

from demo.run import run_demo
from worker.settings import Settings


async def test_demo_covers_each_scenario(
    settings: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    await run_demo(settings, print_transcript=True)
    transcript = capsys.readouterr().out
    report = await run_demo(settings, print_transcript=False)

    results = [d["result"] for d in report["deliveries"]]
    reference, probe, nothing, frete, burst_1, burst_2, queued_dup, late_dup = results
    assert reference["tools"] == ["read_skill_reference"]
    assert [m["name"] for m in reference["matched"]] == ["segunda-via-boleto"]
    assert probe["matched"] == [] and probe["probes"] == ["orcamento"]
    assert nothing["matched"] == [] and nothing["probes"] == []
    assert frete["tools"] == []
    burst = [r for r in (burst_1, burst_2) if r["status"] == "replied"]
    assert len(burst) == 1 and burst[0]["answered"] == ["wamid.demo-5", "wamid.demo-6"]
    assert queued_dup is None and report["deliveries"][6]["queued"] is False
    assert late_dup is None and report["deliveries"][7]["queued"] is False
    assert len({r["prefix_sha256"] for r in (reference, probe, nothing, frete)}) == 1
    assert sum(1 for r in report["replies"] if r["reply"]) == 6  # every message answered
    assert len({r["reply_id"] for r in report["replies"]}) == 5  # the burst got one reply
    triggers = sorted((a["skill_name"], a["trigger"]) for a in report["activations"])
    assert triggers == [
        ("frete-e-entrega", "hard"),
        ("frete-e-entrega", "hard"),
        ("orcamento", "probe"),
        ("segunda-via-boleto", "hard"),
    ]
    assert "idêntico em todos os turnos" in transcript
    assert "read_skill_reference chamada: sim" in transcript
