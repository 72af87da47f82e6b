"""Training an intent model: deterministic, learns what separates the labels, and chooses a
threshold that keeps the cross-validated false hits within the budget."""

from __future__ import annotations

from turn.matcher.training import THRESHOLDS, Example, examples, fit, train

POSITIVE = [f"dá pra pagar no boleto {n}?" for n in range(30)] + [
    f"o boleto {n} venceu, e agora" for n in range(30)
]
NEGATIVE = [f"qual o horário de hoje {n}?" for n in range(60)] + [
    f"chegou o pedido {n}, obrigado" for n in range(60)
]


def _data() -> list[Example]:
    texts = POSITIVE + NEGATIVE
    positive = [True] * len(POSITIVE) + [False] * len(NEGATIVE)
    # Interleaved, so every fold holds both labels.
    order = sorted(range(len(texts)), key=lambda i: (i % 3, i))
    return examples([texts[i] for i in order], [positive[i] for i in order], [False] * len(texts))


def test_the_same_examples_give_the_same_weights() -> None:
    assert fit(_data()) == fit(_data())


def test_a_trained_model_separates_what_its_labels_separate() -> None:
    model = train(_data(), max_false_hit_rate=0.0)

    def score(text: str) -> float:
        [example] = examples([text], [False], [False])
        return model.bias + sum(model.weights.get(f, 0.0) for f in example.features)

    assert score("mandei o boleto ontem") > model.threshold
    assert score("qual o horário amanhã?") <= model.threshold
    assert model.cross_validation.false_hit_rate == 0.0
    assert model.cross_validation.recall == 1.0
    assert model.cross_validation.keyword_recall == 0.0


def test_keyword_false_hits_count_against_the_budget() -> None:
    data = [
        Example(e.features, e.positive, keyword_hit=not e.positive and i % 10 == 0)
        for i, e in enumerate(_data())
    ]
    model = train(data, max_false_hit_rate=0.01)
    # Keywords alone exceed the budget: no threshold meets it, the model adds the least it can.
    assert model.cross_validation.keyword_false_hit_rate > 0.01
    assert model.threshold == THRESHOLDS[-1]
