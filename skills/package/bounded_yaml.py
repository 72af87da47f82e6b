"""Load a SKILL.md frontmatter's YAML with bounded work: text in, mapping out, no I/O.

The frontmatter is untrusted (an uploaded package, or a model's `skill_manage patch`), so it
is read in three steps, each bounded by the one before:
1. size: at most MAX_FRONTMATTER_BYTES of UTF-8, checked before any YAML runs;
2. pre-scan: libyaml's event stream, stopped at the first anchor (`&a`), alias (`*a`), merge
   key (`<<`) or collection nested deeper than MAX_FRONTMATTER_DEPTH. What passes loads into
   a tree no bigger than its text: no alias can repeat a subtree (billion laughs) and no merge
   key can multiply one (PyYAML 6.0.0-6.0.3 expand `<<` exponentially);
3. load: yaml.CSafeLoader (libyaml's scanner and parser in C, PyYAML's safe constructor).
   There is no fallback to the pure-Python scanner, which spends 0.7-5 s on 8 KiB of nested
   `[`: PyYAML's wheels ship libyaml, and importing this module fails where it is missing.

Every refusal is `skill_frontmatter_invalid` with a pt-BR message that says what to fix.
"""

from __future__ import annotations

from typing import Any

import yaml

# ImportError without libyaml, on purpose: see step 3 above.
from yaml import CSafeLoader

from skills.package.errors import PackageErrorCode, SkillPackageError
from skills.package.limits import MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH

_MERGE_TAG = "tag:yaml.org,2002:merge"
_MERGE_KEY = "<<"
# The loader raises more than YAMLError on hostile input: RecursionError on deep nesting (the
# pre-scan stops that first), ValueError on impossible dates such as 2024-13-45.
_YAML_ERRORS = (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError)


def load_frontmatter(frontmatter: str) -> dict[Any, Any]:
    """The frontmatter as a mapping, or SkillPackageError(skill_frontmatter_invalid)."""
    if len(frontmatter.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise _invalid(
            f"O frontmatter do SKILL.md passa de {MAX_FRONTMATTER_BYTES} bytes. Deixe nele só "
            "name, description, as palavras-chave e os campos curtos do padrão (license, "
            "metadata...); as instruções vão no corpo."
        )
    try:
        _prescan(frontmatter)
        meta = yaml.load(frontmatter, Loader=CSafeLoader)
    except _YAML_ERRORS as exc:
        raise _invalid(
            "O frontmatter do SKILL.md não é um YAML válido. Confira a indentação e use "
            "aspas em textos com ':' ou '#'."
        ) from exc
    if not isinstance(meta, dict):
        raise _invalid("O frontmatter do SKILL.md precisa ser um mapa YAML com name e description.")
    return meta


def _prescan(frontmatter: str) -> None:
    """Walk libyaml's events once and stop at the first construct we refuse; at most one
    event per character of a text already capped, so the walk is bounded too."""
    depth = 0
    for event in yaml.parse(frontmatter, Loader=CSafeLoader):
        if isinstance(event, yaml.AliasEvent) or (
            isinstance(event, yaml.NodeEvent) and event.anchor is not None
        ):
            raise _invalid(
                "O frontmatter do SKILL.md usa âncoras ou referências do YAML ('&nome' ou "
                "'*nome'), que não são aceitas. Escreva cada valor por extenso e use aspas em "
                "textos que começam com '&' ou '*'."
            )
        if isinstance(event, yaml.ScalarEvent) and _is_merge(event):
            raise _invalid(
                "O frontmatter do SKILL.md usa a chave de mescla '<<' do YAML, que não é aceita. "
                "Escreva os campos por extenso (ou use aspas se '<<' for texto)."
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONTMATTER_DEPTH:
                raise _invalid(
                    f"O frontmatter do SKILL.md tem listas ou mapas aninhados em mais de "
                    f"{MAX_FRONTMATTER_DEPTH} níveis. Deixe nele só name, description e "
                    "metadata com textos simples."
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _is_merge(event: yaml.ScalarEvent) -> bool:
    # A plain `<<` resolves to the merge tag (as a key it merges, elsewhere the loader fails);
    # a quoted '<<' is only text. `!!merge` spells the tag out.
    plain = bool(event.implicit and event.implicit[0])
    return event.tag == _MERGE_TAG or (plain and event.value == _MERGE_KEY)


def _invalid(message: str) -> SkillPackageError:
    return SkillPackageError(message, code=PackageErrorCode.FRONTMATTER_INVALID)
