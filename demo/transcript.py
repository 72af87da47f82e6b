"""Render the demo report as a transcript a person can read."""

from __future__ import annotations

from typing import Any

_STATUS_TEXT = {
    "duplicate": "já respondida (nenhuma segunda resposta)",
    "queued": "respondida pelo turno em andamento desta conversa",
    "redelivered": "resposta já gravada, reenviada",
    "stored": "guardada como contexto (não pede resposta)",
}


def _yes_no(flag: bool) -> str:
    return "sim" if flag else "não"


def _delivery_lines(n: int, delivery: dict[str, Any]) -> list[str]:
    lines = [
        f"[{n}] cliente ({delivery['message_id']}): {delivery['text']}",
        f"    objetivo: {delivery['purpose']}",
    ]
    result = delivery.get("result")
    if not delivery["queued"]:
        if delivery.get("refused") == "answered":
            lines.append("    banco: já respondida, nenhum job nem segunda resposta")
        else:
            lines.append("    fila: entrega duplicada recusada (mesmo job id ainda na fila)")
        return lines
    if not isinstance(result, dict):
        lines.append(f"    resultado: {result}")
        return lines
    status = result.get("status")
    if status != "replied":
        lines.append(f"    turno: {_STATUS_TEXT.get(str(status), str(status))}")
        return lines
    if len(result.get("answered", [])) > 1:
        lines.append(f"    uma resposta para a rajada: {', '.join(result['answered'])}")
    matched = ", ".join(f"{m['name']} (versão {m['version_id']})" for m in result["matched"])
    lines += [
        f"    skills casadas: {matched or 'nenhuma'}",
        f"    probes: {', '.join(result['probes']) or 'nenhuma'}",
        f"    read_skill_reference chamada: {_yes_no('read_skill_reference' in result['tools'])}",
        f"    sha256 do prefixo: {result['prefix_sha256']}",
    ]
    return lines


def render_transcript(report: dict[str, Any]) -> str:
    out = [f"organização demo: {report['organization_id']}", "skills instaladas:"]
    out += [f"  - {name}: versão {version}" for name, version in report["skills"].items()]
    out.append("")
    replies = {r["external_id"]: r for r in report["replies"]}
    answered: set[str] = set()
    for n, delivery in enumerate(report["deliveries"], start=1):
        out += _delivery_lines(n, delivery)
        reply = replies.get(delivery["message_id"])
        result = delivery.get("result")
        if isinstance(result, dict) and result.get("status") == "replied" and reply:
            out.append(f"    resposta ({reply['outbox_status']}): {reply['reply']}")
            answered.add(delivery["message_id"])
        out.append("")
    prefixes = {
        d["result"]["prefix_sha256"]
        for d in report["deliveries"]
        if isinstance(d.get("result"), dict) and d["result"].get("prefix_sha256")
    }
    if not prefixes:
        out.append("prefixo do prompt: nenhum turno respondeu, nada a comparar")
    else:
        same = "idêntico em todos os turnos" if len(prefixes) == 1 else "DIFERENTE entre turnos"
        out.append(f"prefixo do prompt: {same} ({len(prefixes)} hash distinto)")
    out.append(
        f"mensagens recebidas: {len(report['replies'])}, respondidas: "
        f"{sum(1 for r in report['replies'] if r['reply'])}, "
        f"respostas no outbox: {len({r['reply_id'] for r in report['replies'] if r['reply']})}"
    )
    out.append("ativações gravadas:")
    out += [
        f"  - {a['trigger']:5} {a['skill_name']} {a['skill_version_id'] or '(probe: sem versão)'}"
        for a in report["activations"]
    ] or ["  (nenhuma)"]
    return "\n".join(out)
