"""The pt-BR words conversation.handoff.request reads (pure data and one spelling check).

Every word is written as `keywords.words.words_of` returns it: casefolded, without
accents, stretched letters written once, WhatsApp abbreviations already read (``vc`` ->
``voce``, ``pra`` -> ``para``, ``n`` -> ``nao``, ``to`` -> ``estou``, ``qro`` -> ``quero``,
``dexa`` -> ``deixa``). So ``Você``, ``vc`` and ``voce`` are one entry here. What follows are
the words the matcher has no reason to know: the ways a customer names a person, the bot,
and the verbs that ask for one.
"""

from __future__ import annotations

# How a person of the business is named. Each kind is read by its own frames.
HUMAN = frozenset({"humano", "humana", "humanos", "hmn", "umano", "humanu", "humamo"})
PERSON = frozenset({"pessoa", "pessoas", "pesoa", "psoa", "pssoa"})
SOMEONE = frozenset({"alguem", "algm", "alguen", "algem", "auguem"})
NOBODY = frozenset({"ninguem", "ningem", "nimguem", "ngm"})
PEOPLE = frozenset({"gente"})
# People in a role of the business (a talk or transfer frame makes them a request).
STAFF = frozenset(
    {
        "gerente",
        "gerencia",
        "responsavel",
        "dono",
        "dona",
        "proprietario",
        "proprietaria",
        "funcionario",
        "funcionaria",
        "vendedor",
        "vendedora",
        "consultor",
        "consultora",
        "supervisor",
        "supervisora",
        "operador",
        "operadora",
        "financeiro",
        "comercial",
        "setor",
        "suporte",
        "sac",
        "recepcao",
    }
)
# The bot, as a customer who refuses it names it ("ia" is also the verb ir: left out).
ROBOT = frozenset(
    {"robo", "robos", "robozinho", "bot", "chatbot", "maquina", "automatico", "automatica"}
)
# Person words a line may be made of alone (conversation.handoff.request reads such a line whole).
ATTENDANT_KINDS = HUMAN | frozenset({"atendente", "atendentes"})
# After "atendente", words that make it the bot ("atendente virtual").
NOT_A_PERSON = frozenset(
    {"virtual", "virtuais", "digital", "eletronico", "eletronica", "automatico", "automatica"}
)

# The attendant, spelled right; `is_attendant` also takes a slip of one letter.
_ATTENDANT = "atendente"
_ATTENDANT_SPELLINGS = frozenset({"atendente", "atendentes", "atentende", "atendt"})
# Real words one slip away ("atendeste": you served).
_NOT_ATTENDANT = frozenset({"atendeste"})
# A slip of one letter in "atendente(s)" keeps the word between 8 and 11 letters.
_ATTENDANT_MIN_CHARS = len(_ATTENDANT) - 1
_ATTENDANT_MAX_CHARS = len(_ATTENDANT) + 2

# Words that may stand between a frame's verb or preposition and the person it names.
DETERMINERS = frozenset(
    {"um", "uma", "o", "a", "os", "as", "algum", "alguma", "nenhum", "nenhuma", "ser"}
)
# Between a talk verb and "com": "falar direto com o dono".
ADVERBS = frozenset({"direto", "diretamente", "logo", "agora", "ja", "urgente", "rapidinho"})
# "com" as customers type it ("falar c/ atendente", "fala cm alguem").
WITH = frozenset({"com", "c", "cm", "co", "cum"})
# Verbs (and the noun "atendimento") that, followed by "com" and a person, ask to talk to one.
TALK_VERBS = frozenset(
    {
        "falar",
        "fala",
        "falo",
        "falr",
        "flar",
        "fla",
        "conversar",
        "conversa",
        "converso",
        "resolver",
        "resolve",
        "atendimento",
        "contato",
    }
)
# "falando com" asks only in the present ("to falando com uma pessoa?"), not "tava falando".
PRESENT_AUXILIARIES = frozenset({"estou", "esta", "estamos", "tou"})
# Verbs that hand the customer over: "me passa pra", "me transfere pro", "me coloca com".
TRANSFER_VERBS = frozenset(
    {
        "passa",
        "passar",
        "passe",
        "transfere",
        "transferir",
        "transfira",
        "encaminha",
        "encaminhar",
        "encaminhe",
        "coloca",
        "colocar",
        "coloque",
        "direciona",
        "direcionar",
        "redireciona",
        "joga",
        "manda",
        "mandar",
        "pede",
        "pedir",
        "peca",
    }
)
TO = frozenset({"para", "pro", "pros", "p", "pr", "prum", "pruma", "ao", "com"})
# Verbs that ask for an attendant or a human by name alone: "quero um atendente", "cadê o
# humano". Only those two kinds: "preciso de alguém" is as often a fitter or a courier.
CALL_VERBS = frozenset(
    {
        "quero",
        "queria",
        "preciso",
        "precisava",
        "precisamos",
        "precisando",
        "solicito",
        "arruma",
        "arranja",
        "chama",
        "chamar",
        "chame",
        "cade",
        "cad",
        "kd",
        "kde",
    }
)
# Of those, the ones that also call "alguém" or a role ("chama alguém aí", "cadê o dono").
SUMMON_VERBS = frozenset({"chama", "chamar", "chame", "cade", "kd"})
# "tem alguém aí?", "vcs tem atendente?", "existe atendente?".
HAVE = frozenset({"tem", "tm", "ten", "existe", "ha", "teria", "tera"})
# What makes "alguém"/"uma pessoa" after "tem" mean someone to talk to, not a fitter.
HERE = frozenset({"ai", "ae", "aqui", "online", "on", "disponivel", "acordado", "ou"})
# "tem alguém pra falar comigo?", "alguém pode me atender?".
SERVE_VERBS = frozenset(
    {
        "atender",
        "atende",
        "falar",
        "conversar",
        "responder",
        "responde",
        "conversa",
        "fala",
    }
)
# Help asks for a person only with nothing after it: "tem alguém pra me ajudar aí?", not
# "tem alguém pra me ajudar a montar?".
HELP_VERBS = frozenset({"ajudar", "ajuda"})
# "de verdade", "de vdd", "real": a real person is wished for.
REAL = frozenset({"verdade", "vdd", "vdade", "verdadi"})
REAL_ADJECTIVES = frozenset({"real", "reais"})
# "atendimento humano", "suporte humano", "atendente humano".
SERVICE_NOUNS = frozenset({"atendimento", "suporte", "atendente", "resposta", "contato"})
# Before "atendimento humano", words that describe it ("que atendimento humano!", "esse
# atendimento humano de vocês"), and after it, words that go on describing it.
# ("esta" is also "tá", so it is not one of them.)
DESCRIBING = frozenset({"que", "esse", "essa", "seu", "sua", "nosso", "nossa"})
DESCRIPTION_GOES_ON = frozenset({"e", "foi", "foram", "era", "muito", "mais", "como", "de"})
# "ser atendido por uma pessoa".
SERVED = frozenset({"atendido", "atendida", "atendidos", "atendidas", "respondido", "respondida"})
BY = frozenset({"por", "pelo", "pela"})
# "me passa o contato de um atendente", "qual o número do gerente".
CONTACT_NOUNS = frozenset(
    {"contato", "numero", "telefone", "whats", "whatsapp", "zap", "celular", "fone"}
)
OF = frozenset({"de", "do", "da"})
# "é humano?" asks who is answering only when its subject is the one answering.
IS = frozenset({"e", "eh", "es", "seria"})
INTERLOCUTORS = frozenset({"voce", "voces", "ce", "tu", "isso", "aqui", "ai", "quem"})

# Negation: a negator before a wish verb (or before the frame's verb itself) cancels a
# request: "não quero falar com atendente", "não precisa chamar atendente", "sem falar com".
NEGATORS = frozenset({"nao", "nem", "nunca", "jamais", "sem"})
WISH_VERBS = frozenset(
    {
        "quero",
        "queria",
        "quer",
        "preciso",
        "precisa",
        "precisamos",
        "precisava",
        "precisar",
        "gostaria",
        "vou",
        "vai",
        "quis",
        "prefiro",
        "pretendo",
    }
)
# Words that may stand between a negator and the verb it negates ("não quero mais falar").
NEGATION_GAP = frozenset({"me", "te", "eu", "mais", "mesmo", "ser", "de"})
# Refusing the bot: "chega de robô", "cansei desse robô", "odeio robô".
REFUSALS = frozenset(
    {"chega", "cansei", "cansado", "cansada", "odeio", "detesto", "aguento", "suporto", "gosto"}
)
# "só tem robô?", "é só robô aqui?".
ONLY = frozenset({"so", "somente", "apenas"})

# A line that is nothing but an attendant or a human and these ("atendente pfv", "HUMANO!!").
FILLERS = frozenset(
    {
        "um",
        "uma",
        "o",
        "a",
        "por",
        "favor",
        "pfv",
        "pf",
        "pfvr",
        "pls",
        "plis",
        "porfavor",
        "urgente",
        "agora",
        "ja",
        "ai",
        "ae",
        "oi",
        "ola",
        "opa",
        "ei",
        "alo",
        "de",
        "verdade",
        "vdd",
        "real",
    }
)


def _one_slip(word: str, right: str) -> bool:
    """`word` is `right` with at most one letter added, dropped, changed, or two neighbours
    swapped (one optimal-string-alignment edit), in time linear in the word."""
    if word == right:
        return True
    if abs(len(word) - len(right)) > 1:
        return False
    start = 0
    while start < min(len(word), len(right)) and word[start] == right[start]:
        start += 1
    w, r = word[start:], right[start:]
    if len(w) == len(r):
        swapped = len(w) >= 2 and w[0] == r[1] and w[1] == r[0] and w[2:] == r[2:]
        return swapped or w[1:] == r[1:]
    return w[1:] == r if len(w) > len(r) else w == r[1:]


def is_attendant(word: str) -> bool:
    """The attendant: atendente(s), or either with one slip (atendende, atendnte, atemdente).
    Real words one slip away are excluded ("atendendo" is two slips away)."""
    if word in _ATTENDANT_SPELLINGS:
        return True
    if not (_ATTENDANT_MIN_CHARS <= len(word) <= _ATTENDANT_MAX_CHARS) or word[0] != "a":
        return False
    if word in _NOT_ATTENDANT:
        return False
    return _one_slip(word, _ATTENDANT) or _one_slip(word, _ATTENDANT + "s")
