"""A skill's body on its console page: Markdown without raw HTML, images or unsafe links;
bidi controls visible; hostile piles bounded."""

from __future__ import annotations

import re

import pytest

from api.console.diff_lines import visible
from api.console.skill_text import (
    MAX_MARKUP_CHARS,
    MAX_RENDERED_CHARS,
    render_markdown,
)

HOSTILE = """# Trocas

<script>alert(1)</script> <img src=x onerror=alert(1)> <iframe src="https://evil"></iframe>
<a href="javascript:alert(1)">clique</a>

[pix](javascript:alert(1)) [dados](data:text/html;base64,PHNjcmlwdD4=) [vb](vbscript:x)
[http](http://example.com) [ok](https://example.com/trocas) [email](mailto:loja@example.com)
![foto](https://example.com/a.png) <https://example.com/auto> <javascript:alert(2)>
[ref]: javascript:alert(3)
[usa ref][ref] [JaVaScRiPt](JAVASCRIPT:alert(4)) [espaço]( javascript:alert(5))
"""


def test_no_raw_html_no_images_and_links_only_https_or_mailto() -> None:
    html = str(render_markdown(HOSTILE))
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;script&gt;" in html  # shown as text, not dropped silently
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == [
        "https://example.com/trocas",
        "mailto:loja@example.com",
        "https://example.com/a.png",  # an image is at most a link
        "https://example.com/auto",
    ]
    assert all('rel="noopener noreferrer nofollow"' in a for a in re.findall(r"<a [^>]*>", html))
    assert "<h1>Trocas</h1>" in html


@pytest.mark.parametrize("control", ["\u202a", "\u202e", "\u2066", "\u2069"])
def test_bidi_controls_are_shown_not_applied(control: str) -> None:
    text = f"preço {control}01 RS"
    shown = visible(text)
    assert control not in shown and f"<U+{ord(control):04X}>" in shown
    assert control not in str(render_markdown(text))


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "pile",
    [
        ">" * 50_000,
        "[" * 50_000,
        "*a" * 30_000,
        "`" * 50_000,
        "- " * 30_000,
        "<" * 50_000,
        "[" * MAX_MARKUP_CHARS + "a" * (MAX_RENDERED_CHARS - MAX_MARKUP_CHARS),
        "*a" * (MAX_MARKUP_CHARS // 2) + "b" * (MAX_RENDERED_CHARS - MAX_MARKUP_CHARS),
        ">" * MAX_RENDERED_CHARS,
    ],
)
def test_a_hostile_pile_renders_bounded(pile: str) -> None:
    html = str(render_markdown(pile))
    assert html.count("<blockquote>") <= 100 and html.count("<ul>") <= 100
    assert "<script" not in html


def test_past_a_cap_the_body_is_plain_escaped_text() -> None:
    long_text = str(render_markdown("<b>x</b>" + "a" * MAX_RENDERED_CHARS))
    assert long_text.startswith('<pre class="corpo-texto">&lt;b&gt;')
    piled = str(render_markdown("[x](https://a.b) " + "*" * (MAX_MARKUP_CHARS + 1)))
    assert piled.startswith('<pre class="corpo-texto">[x](https://a.b)') and "<a " not in piled
    within = str(render_markdown("[x](https://a.b) " + "*" * (MAX_MARKUP_CHARS - 10)))
    assert '<a rel="noopener noreferrer nofollow" href="https://a.b">x</a>' in within
