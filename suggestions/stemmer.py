"""The stemmer of customers' questions (keywords.stemmer with this floor and these suffixes).

Like consolidation.stemmer's, but a stem may be as
short as MIN_STEM_CHARS = 3 letters: questions are short and their key words too, and
"pagar"/"pagamento"/"paga" must meet ("pag"), as must "aceita"/"aceitam" ("aceit") and
"entrega"/"entregam" ("entreg"). Words arrive folded (lower case, no accents). Linear in the
word's length (a fixed list of suffixes).
"""

from __future__ import annotations

from keywords.stemmer import make_stemmer, suffix_list

MIN_STEM_CHARS = 3
_SUFFIX_TEXT = """
amentos imentos amento imento mentos mento idades idade icoes icao acoes acao coes cao
ancias ancia encias encia adores adoras ador adora aveis iveis avel ivel
ados adas idos idas ado ada ido ida ando endo indo aram eram iram avam ava ariam aria
amos emos imos ar er ir am em ais eis ois oes aes ns es as os is us s
"""
SUFFIXES = suffix_list(_SUFFIX_TEXT)
stem = make_stemmer(MIN_STEM_CHARS, SUFFIXES)
