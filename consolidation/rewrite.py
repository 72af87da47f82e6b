"""The model's rewrite of an umbrella's body at proposal time, held to the package rules.

When the org's agent has a real model (a provider other than `local`, the fake that echoes),
each proposal of a cycle (at most MAX_REWRITES) gets one call at temperature 0 asking for one
body that merges the group's instructions. The answer is hostile input: it is used only if
it is a SKILL.md body (no frontmatter of its own, at most MAX_REWRITE_BYTES, the package's
line and byte limits once rendered with the umbrella's unchanged name, description and
union of keywords), mentions every keyword of the group, and names no file outside the
merged package. Otherwise the deterministic body stands and `rewrite` says why:

- `model`                       the model's body is the proposal's;
- `kept_deterministic`          no real model (or a dry run, or the time budget spent);
- `rejected: <reason>`          the model answered and failed a rule, or failed to answer
                                (`timeout`, `model_error <code>`, `empty`, `truncated`,
                                `too_long`, `frontmatter`, `dropped_keyword <kw>`,
                                `unknown_file <path>`, `too_large <rule>`,
                                `new_fact <kind>:<value>`: a number of 3+ digits, a URL,
                                an e-mail or a phone no merged skill states, by
                                skills.new_facts).

`check_rewrite` is pure; `ask_model` is the one awaited call, bounded by its timeout.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from consolidation.distill import Limits, TooLarge, UmbrellaPlan, plan_umbrella
from skills.catalog_queries import PointedVersion
from skills.new_facts import new_facts
from skills.package.limits import MAX_BODY_LINES
from turn.model import Model, ModelMessage, ModelRequest

MODEL = "model"
KEPT = "kept_deterministic"
MAX_REWRITES = 10  # per org per cycle (what MAX_PROPOSALS allows anyway)
MAX_REWRITE_BYTES = 16 * 1024  # of the model's answer: a merged body, not a book
MAX_MEMBER_CHARS = 6_000  # of each member's body the model reads
MAX_NOTE_CHARS = 200  # of `rewrite` as stored
# A path into the package, as a body cites it ("references/troca/SKILL.md").
_PATH_RE = re.compile(r"(?<![\w/.-])(?:references|assets|scripts|templates)/[^\s)\]}>\"'`,;*]+")

SYSTEM = """Você reúne skills parecidas de um atendente de WhatsApp em uma só.
Escreva o corpo (Markdown) do SKILL.md da skill principal, juntando as instruções de todas,
sem repetir e sem perder nenhuma regra. Responda apenas com o corpo: sem frontmatter (nada
de ---), sem mudar o nome da skill, sem comentários antes ou depois.
Regras: cite no texto cada uma destas palavras-chave: {keywords}.
Se citar arquivos, só estes existem: {files}.
No máximo {max_lines} linhas."""


class RewriteRejected(Exception):
    """The model's answer broke a rule; `reason` is what the proposal records."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason[:MAX_NOTE_CHARS]


@dataclass(frozen=True)
class Rewrite:
    plan: UmbrellaPlan  # the model's when `note` is MODEL, else the deterministic one
    note: str


def rejected(reason: str) -> str:
    return f"rejected: {reason}"[:MAX_NOTE_CHARS]


def request_for(
    umbrella: PointedVersion, absorbed: Sequence[PointedVersion], plan: UmbrellaPlan
) -> ModelRequest:
    """The one request of a proposal (pure): the rules in the system text, the members'
    instructions in the user message."""
    keywords = ", ".join(f'"{k}"' for k in plan.skill.matcher.any_keywords)
    files = ", ".join(e.path for e in plan.manifest) or "nenhum"
    prefix = SYSTEM.format(keywords=keywords, files=files, max_lines=MAX_BODY_LINES)
    parts = []
    for role, member in (("principal", umbrella), *(("incorporada", m) for m in absorbed)):
        parts.append(
            f"## Skill {role}: {member.name}\nDescrição: {member.description}\n\n"
            f"{member.body[:MAX_MEMBER_CHARS]}"
        )
    message = ModelMessage(role="user", content="\n\n".join(parts))
    return ModelRequest(
        prefix=prefix, skill_context="", messages=(message,), tools=(), temperature=0.0
    )


def _unfenced(text: str) -> str:
    """The text inside one enclosing ``` fence, as models like to answer; else the text."""
    lines = text.strip().splitlines()
    if len(lines) >= 2 and lines[0].startswith("```") and lines[-1].strip() == "```":
        return "\n".join(lines[1:-1])
    return text


def _squeezed(text: str) -> str:
    """Lower case, accents and runs of whitespace folded; whole (the caller bounds it)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return " ".join("".join(ch for ch in decomposed if not unicodedata.combining(ch)).split())


def check_rewrite(
    text: str | None,
    umbrella: PointedVersion,
    absorbed: Sequence[PointedVersion],
    plan: UmbrellaPlan,
    limits: Limits,
) -> UmbrellaPlan:
    """The plan with the model's body; raises RewriteRejected (see the module docstring)."""
    if text is None or not text.strip():
        raise RewriteRejected("empty")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_REWRITE_BYTES:
        raise RewriteRejected("too_long")
    body = _unfenced(text).strip()
    if body.startswith("---"):
        raise RewriteRejected("frontmatter")
    folded = _squeezed(body)
    for keyword in plan.skill.matcher.any_keywords:
        if _squeezed(keyword) not in folded:
            raise RewriteRejected(f"dropped_keyword {keyword[:60]}")
    paths = {e.path for e in plan.manifest}
    for cited in _PATH_RE.findall(body):
        path = cited.rstrip(".:!?")
        if path not in paths:
            raise RewriteRejected(f"unknown_file {path[:100]}")
    try:
        rewritten = plan_umbrella(umbrella, absorbed, limits, body=body)
    except TooLarge as exc:
        raise RewriteRejected(f"too_large {exc.rule}") from exc
    # Last: the package rules bound the body it reads.
    added = new_facts(body, _sources(umbrella, absorbed, plan))
    if added:
        raise RewriteRejected(f"new_fact {added[0][:120]}")
    return rewritten


def _sources(
    umbrella: PointedVersion, absorbed: Sequence[PointedVersion], plan: UmbrellaPlan
) -> list[str]:
    """What the model was given to merge: each skill's name, description and body, the
    keywords and the package's paths."""
    texts = [t for m in (umbrella, *absorbed) for t in (m.name, m.description, m.body)]
    return [*texts, *plan.skill.matcher.any_keywords, *(e.path for e in plan.manifest)]


async def ask_model(
    model: Model,
    umbrella: PointedVersion,
    absorbed: Sequence[PointedVersion],
    plan: UmbrellaPlan,
    limits: Limits,
    timeout_s: float,
) -> Rewrite:
    """One call, at most `timeout_s`; any failure keeps `plan` (the deterministic one)."""
    try:
        async with asyncio.timeout(timeout_s):
            response = await model.complete(request_for(umbrella, absorbed, plan))
    except TimeoutError:
        return Rewrite(plan, rejected("timeout"))
    except Exception as exc:  # hostile or broken server: the deterministic body stands
        code = getattr(exc, "code", None) or type(exc).__name__
        return Rewrite(plan, rejected(f"model_error {code}"))
    if response.truncated:
        return Rewrite(plan, rejected("truncated"))
    try:
        return Rewrite(check_rewrite(response.text, umbrella, absorbed, plan, limits), MODEL)
    except RewriteRejected as exc:
        return Rewrite(plan, rejected(exc.reason))
