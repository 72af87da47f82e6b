"""Rendering of the installed-skill index that sits in the byte-stable prompt prefix.

Format (UTF-8 text, ``\\n`` line ends, one trailing newline)::

    # Skills instaladas
    <three fixed pt-BR lines: where bodies and reference files come from, and that a skill
    the message did not trigger (an index-only one, without keywords) is loaded with
    skill_view, as Claude loads Agent Skills>
    - frete: Calcula o frete e o prazo de entrega.
    - pix: Envia a chave Pix e confirma o pagamento.

Invariants, because the model provider's prompt cache keys on these bytes:

- Entries are sorted by name, then description (code point order), never by input order;
  identical entries appear once. Same set of skills in any order -> identical bytes.
- Only name and description: no version ids, timestamps or keywords, so a new version that
  keeps both leaves the prefix unchanged.
- Each entry is exactly one line: whitespace runs (newlines included) collapse to one space,
  control and format characters (Cc, Cf, Cs: e.g. NUL, zero-width, bidi overrides) are
  removed, and ``&``, ``<``, ``>`` are escaped as HTML entities, so a description cannot start
  a fake entry, a fake header or fake ``<skill>`` markup of the matched-skills section.
- No skills -> the header and one fixed line saying none is installed (never an empty
  string), so the prefix keeps the same shape.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

from skills.models import LoadedSkill

HEADER = (
    "# Skills instaladas\n"
    "Cada linha traz o nome e a descrição de uma skill. Quando a mensagem aciona uma skill, "
    "as instruções completas dela aparecem mais adiante, em 'Skills ativadas nesta mensagem'.\n"
    "Os arquivos de referência listados junto de uma skill ativada podem ser lidos com a "
    "ferramenta read_skill_reference.\n"
    "Uma skill que a mensagem não acionou (algumas não têm palavras-chave) também está à sua "
    "disposição: quando a descrição dela servir ao pedido, carregue as instruções com "
    "skill_view.\n"
)
NO_SKILLS_LINE = "Nenhuma skill instalada.\n"
NO_DESCRIPTION = "(sem descrição)"

_SPACE_RE = re.compile(r"\s+")
# Control, format and surrogate code points: invisible or structural, never useful here.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})


def _one_line(text: str) -> str:
    """Text made safe for a single index line (see the module docstring)."""
    collapsed = _SPACE_RE.sub(" ", text)  # before dropping, so "\n" becomes a space, not ""
    kept = "".join(ch for ch in collapsed if unicodedata.category(ch) not in _DROPPED_CATEGORIES)
    return html.escape(_SPACE_RE.sub(" ", kept).strip(), quote=False)


def render_skill_index(skills: Sequence[LoadedSkill]) -> str:
    """The index text for `skills`: deterministic bytes for a given set of names+descriptions."""
    # Sort the (name, description) pairs, not the rendered lines: "- pix: " vs "- pix-2: "
    # would otherwise order by ":" vs "-" instead of by name.
    entries = sorted({(_one_line(s.name), _one_line(s.description)) for s in skills})
    if not entries:
        return HEADER + NO_SKILLS_LINE
    lines = [f"- {name}: {description or NO_DESCRIPTION}" for name, description in entries]
    return HEADER + "\n".join(lines) + "\n"
