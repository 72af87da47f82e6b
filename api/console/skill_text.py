"""A skill's text as the console shows it, pure: its Markdown body rendered safely, and bidi
control characters made visible.

The body is a business's or an agent's text (the agent's is model output: hostile). Rendered
by markdown-it-py's CommonMark preset with raw HTML off (an HTML tag shows as its text), the
image rule off (`![x](y)` is at most a link) and links only to `https:` and `mailto:` (any
other link, `javascript:` and `data:` included, is left as text). Whatever markdown-it
writes has every text escaped; the one place a page takes it unescaped is this module's
Markup.

Work is bounded. markdown-it-py is pure Python at about 2-14 µs per character (measured
here: ordinary prose at the low end, a crafted pile of `[`, `*a` or `![` at the high end),
so a text is rendered as Markdown only up to MAX_RENDERED_CHARS characters and
MAX_MARKUP_CHARS characters of inline markup; past either it is shown as plain, escaped
text. At the caps the worst crafted body measured here costs about 70 ms (a 200-line skill
body, the package's cap for a skill with keywords, is well inside them); the preset's
nesting cap keeps a pile of `>` shallow.

Bidi controls can make a text read differently from what it is (a diff line, a keyword):
they are shown as `<U+202E>`, never applied (api.console.diff_lines.visible, the one rule).
"""

from __future__ import annotations

import re
from typing import Final

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from api.console.diff_lines import visible

# 200 lines (the package's cap for an injected body) of 100 characters; a longer body (an
# index-only skill's) shows as plain text.
MAX_RENDERED_CHARS: Final = 20_000
# Characters that start inline markup (links, images, emphasis, code, autolinks): prose has a
# few per line; thousands are a crafted pile, which costs the parser the most per character.
MAX_MARKUP_CHARS: Final = 4_000
_MARKUP: Final = re.compile(r"[\[\]*_`<!]")
_SAFE_SCHEMES: Final = ("https://", "mailto:")


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(_SAFE_SCHEMES)


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.validateLink = _safe_link  # type: ignore[method-assign]
    return md


_MD: Final = _renderer()


def render_markdown(text: str) -> Markup:
    """The body as safe HTML (module docstring)."""
    shown = visible(text)
    if len(shown) > MAX_RENDERED_CHARS or len(_MARKUP.findall(shown)) > MAX_MARKUP_CHARS:
        return Markup('<pre class="corpo-texto">{}</pre>').format(shown)
    rendered = _MD.render(shown)
    # Links leave the console: no referrer, no access to this page.
    rendered = rendered.replace("<a href=", '<a rel="noopener noreferrer nofollow" href=')
    return Markup(rendered)


def bidi_escaped(text: str) -> Markup:
    """A plain text for a template, escaped, its bidi controls visible (the `bidi` filter)."""
    return escape(visible(text))
