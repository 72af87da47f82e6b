"""Benchmark: match_skills against a naive one-regex-per-keyword loop (exits 1 below the floor).

Run: .venv/bin/python bench/matcher.py
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
import timeit
import uuid
from collections.abc import Callable
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skills.models import LoadedSkill, SkillMatcher
from turn.matcher import compile_matcher, match_skills

SKILL_COUNT = 2_000
KEYWORDS_PER_SKILL = 10  # 8 any_keywords + 2 probe_keywords
SPEEDUP_FLOOR = 20.0
REPEATS = 5
SEED = 20_240_601

# fmt: off
PLAIN_SYLLABLES = ["ba", "be", "ca", "co", "da", "de", "fe", "fi", "ga", "gu", "la", "li",
                   "ma", "mo", "nu", "pa", "pe", "ra", "ri", "sa", "te", "to", "vi", "zo"]
# fmt: on
ACCENTED_SYLLABLES = ["ção", "ções", "ão", "ões", "é", "ê", "á", "ó", "ú", "ça"]

# Skills the message hits, with the keyword it contains (accent-free, so the naive regex,
# which is not accent-insensitive, must agree), and one skill hit only through accent folding.
HIT_SKILLS = {17: "bacolima", 523: "rivedato sagumo", 1_999: "pezolicu"}
ACCENT_ONLY_SKILL = (1_234, "ficação sopema")
ACCENT_ONLY_TEXT = "FICACAO SOPEMA"

MESSAGE_TEMPLATE = (
    "Oi, bom dia! Tudo bem com vocês? Eu fiz um pedido na semana passada pelo site e até "
    "agora não recebi nenhuma atualização sobre a entrega. O código de rastreio que me "
    "mandaram por e-mail não funciona no site dos Correios, aparece como objeto não "
    "encontrado. Vocês podem verificar o que aconteceu? Também queria saber se ainda dá "
    "para trocar o endereço, porque vou viajar no fim do mês e não vai ter ninguém em casa "
    "para receber. Ah, e o boleto que gerei venceu ontem, então preciso de um novo. Sobre "
    "o {hit_a}, minha vizinha comentou que comprou a mesma coisa e pagou "
    "bem menos no Pix à vista; vocês fazem esse desconto para mim também? Se fizerem, "
    "prefiro cancelar o boleto e pagar no Pix hoje mesmo. Outra dúvida: o produto tem "
    "garantia de quanto tempo? E se chegar com defeito, como funciona a devolução, eu "
    "preciso mandar pelos Correios ou vocês buscam aqui? Meu CEP é 01310-100, apartamento "
    "42, bloco B. Vi também o {hit_b} no catálogo e o {hit_c}, e a {accent} que a loja "
    "anunciou. Obrigada pela atenção, aguardo o retorno. Abraços, Marina."
)


def make_word(rng: random.Random, accented: bool) -> str:
    # 3-4 syllables: ~350k distinct words, far more than the 20k first words needed.
    syllables = [rng.choice(PLAIN_SYLLABLES) for _ in range(rng.choice((3, 4)))]
    if accented:
        syllables[-1] = rng.choice(ACCENTED_SYLLABLES)
    return "".join(syllables)


def make_keyword(rng: random.Random, taken: set[str]) -> str:
    while True:
        words = [make_word(rng, accented=rng.random() < 0.3)]
        if rng.random() < 0.3:  # some multi-word phrases
            words.append(make_word(rng, accented=False))
        keyword = " ".join(words)
        # Unique first words: each planted keyword belongs to exactly one skill, so the
        # expected hits are known for the agreement check.
        if words[0] not in taken:
            taken.add(words[0])
            return keyword


def make_skills(rng: random.Random) -> list[LoadedSkill]:
    taken = {kw.split()[0] for kw in [*HIT_SKILLS.values(), ACCENT_ONLY_SKILL[1]]}
    overrides = {**HIT_SKILLS, ACCENT_ONLY_SKILL[0]: ACCENT_ONLY_SKILL[1]}
    skills = []
    for i in range(SKILL_COUNT):
        keywords = [make_keyword(rng, taken) for _ in range(KEYWORDS_PER_SKILL)]
        if i in overrides:
            keywords[3] = overrides[i]
        skills.append(
            LoadedSkill(
                name=f"skill-{i:04d}",
                description=f"Skill sintética {i}",
                body=f"Corpo da skill {i}.",
                matcher=SkillMatcher(any_keywords=keywords[:8], probe_keywords=keywords[8:]),
                version_id=uuid.UUID(int=i),
            )
        )
    return skills


def make_message() -> str:
    hit_a, hit_b, hit_c = (HIT_SKILLS[k] for k in sorted(HIT_SKILLS))
    return MESSAGE_TEMPLATE.format(
        hit_a=hit_a.upper(), hit_b=hit_b, hit_c=hit_c, accent=ACCENT_ONLY_TEXT
    )


def naive_match(skills: list[LoadedSkill], text: str) -> set[str]:
    """The baseline: one re.search per keyword, every keyword of every skill."""
    matched = set()
    for s in skills:
        for kw in s.matcher.any_keywords:
            if re.search(r"\b" + re.escape(kw) + r"\b", text, re.IGNORECASE):
                matched.add(s.name)
        for kw in s.matcher.probe_keywords:
            re.search(r"\b" + re.escape(kw) + r"\b", text, re.IGNORECASE)
    return matched


def best_per_call_s(func: Callable[[], object], number: int) -> float:
    """Min over REPEATS of the mean time per call: the least noisy estimate (timeit's advice)."""
    return min(timeit.repeat(func, number=number, repeat=REPEATS)) / number


def check_agreement(skills: list[LoadedSkill], text: str) -> bool:
    ours = {s.name for s in match_skills(skills, text).matched}
    naive = naive_match(skills, text)
    plain = {f"skill-{i:04d}" for i in HIT_SKILLS}
    accent_only = f"skill-{ACCENT_ONLY_SKILL[0]:04d}"
    print(f"hits: matcher={sorted(ours)}")
    print(f"hits: naive  ={sorted(naive)}")
    ok = naive == plain and ours == plain | {accent_only}
    print(
        f"agreement on accent-free hits: {'ok' if ok else 'MISMATCH'}; "
        f"{accent_only} matched only by the accent-insensitive matcher (expected)"
    )
    return ok


def reloaded(skills: list[LoadedSkill]) -> list[LoadedSkill]:
    """Equal but distinct objects (strings too), as a turn gets from the database each time."""
    # A JSON round trip makes new str objects, so the cache key is compared by value, not id.
    rows = json.loads(
        json.dumps([[s.name, s.description, s.body, s.matcher.to_json()] for s in skills])
    )
    return [
        LoadedSkill(
            name=name,
            description=description,
            body=body,
            matcher=SkillMatcher.from_json(matcher),
            version_id=s.version_id,
        )
        for s, (name, description, body, matcher) in zip(skills, rows, strict=True)
    ]


def main() -> int:
    skills = make_skills(random.Random(SEED))
    text = make_message()
    print(f"{SKILL_COUNT} skills x {KEYWORDS_PER_SKILL} keywords, message {len(text.encode())} B")
    started = time.perf_counter()
    match_skills(skills, text)
    cold_s = time.perf_counter() - started
    agrees = check_agreement(skills, text)

    naive_s = best_per_call_s(lambda: naive_match(skills, text), number=1)
    ours_s = best_per_call_s(lambda: match_skills(skills, text), number=200)
    fresh = reloaded(skills)
    fresh_s = best_per_call_s(lambda: match_skills(fresh, text), number=200)
    rebuilt_s = best_per_call_s(lambda: compile_matcher(skills).match(text), number=5)
    print(f"naive re.search loop:             {naive_s * 1e3:9.3f} ms/call")
    print(f"match_skills, first call (cold):  {cold_s * 1e3:9.3f} ms ({naive_s / cold_s:.1f}x)")
    print(
        f"match_skills, reloaded objects:   {fresh_s * 1e3:9.3f} ms/call ({naive_s / fresh_s:.1f}x)"
    )
    print(
        f"compile_matcher + match:          {rebuilt_s * 1e3:9.3f} ms/call "
        f"({naive_s / rebuilt_s:.1f}x, index rebuilt every call)"
    )
    print(f"match_skills, same list:          {ours_s * 1e3:9.3f} ms/call")
    speedup = naive_s / ours_s
    print(f"matcher speedup: {speedup:.1f}x (floor {SPEEDUP_FLOOR:.0f}x)")
    return 0 if agrees and speedup >= SPEEDUP_FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
