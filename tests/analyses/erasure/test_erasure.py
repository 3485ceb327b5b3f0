"""The erasure tests (Serrano & Smith; ERASER) against per-instance reference implementations written from the spec
(loops here only), and their defining cases: erasing nothing, a uniform model, a planted-token model, the seeds."""

import copy
import math

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.analyses.divergences import jsd
from attnexp.analyses.erasure.attention import erase, first_flip, single_weight
from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency, kept_batch, top_counts
from attnexp.analyses.erasure.instances import erasure_tables
from attnexp.analyses.erasure.rankings import attention_gradients, random_draws, ranks
from attnexp.analyses.erasure.settings import ErasureSettings
from attnexp.analyses.jw.importance import gradient_importance, length_chunks
from attnexp.data.batching import collate
from attnexp.models.classifier import AttentionClassifier, ModelConfig
from attnexp.models.transformer import build_transformer
from tests.analyses.jw.test_measures import LENGTHS, make_model, make_rows, single

torch.set_num_threads(1)
BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
RANKINGS = 3


def tiedcls(task: str):
    torch.manual_seed(0)
    meta = {"vocab": [f"w{i}" for i in range(30)], "classes": ["a", "b"] if task == "bc" else list("abcd"), "task": task}
    return build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="tiedcls").eval()


ENCODER_TASKS = [  # every encoder x task, the attention alternating
    (task, encoder, ("tanh", "dot")[(i + j) % 2])
    for i, task in enumerate(("bc", "qa", "nli"))
    for j, encoder in enumerate(("lstm", "cnn", "average"))
]
CASES = [*ENCODER_TASKS, ("bc", "transformer", "tiedcls"), ("nli", "transformer", "tiedcls")]


@pytest.fixture(params=CASES, ids=["-".join(m) for m in CASES])
def case(request):
    task, encoder, attention = request.param
    model = tiedcls(task) if encoder == "transformer" else make_model(task, encoder, attention)
    rows = make_rows(task)
    scores = torch.rand(len(rows), RANKINGS, collate(rows).tokens.shape[1], generator=torch.Generator().manual_seed(3))
    scores[:, 1, :3] = 0.5  # ties, broken by position
    return model, rows, scores


def order_of(scores: torch.Tensor, n: int) -> list[int]:
    """The spec's total order over the real positions 1..n: higher score first, earlier position first on ties."""
    return sorted(range(1, n + 1), key=lambda t: (-float(scores[t]), t))


def predicted_class(model, logits: torch.Tensor) -> int:
    return int(model.predict(logits)[0])


def reference_first_flip(model, rows, scores, i: int, r: int) -> float:
    one, n = single(rows, i), len(rows["tokens"].iloc[i]) - 2
    with torch.no_grad():
        output = model(one)
        decision = predicted_class(model, output.logits)
        erased = []
        for t in order_of(scores[i, r], n)[: n - 1]:  # one weight always remains
            erased.append(t)
            alpha = output.attention.clone()
            alpha[0, erased] = 0.0
            alpha = alpha / alpha.sum()
            if predicted_class(model, model.decode(output.encoded, alpha, one)) != decision:
                return len(erased) / n
    return float("nan")


def flipping_rows(task: str, count: int = 27) -> pd.DataFrame:
    """Rows of 1 .. 9 real tokens (three of each length), questions for QA/NLI."""
    rng = np.random.default_rng(5)
    lengths = [1 + k % 9 for k in range(count)]
    rows = {
        "instance_id": [f"f{k}" for k in range(count)],
        "tokens": [[2, *rng.integers(4, 30, n).tolist(), 3] for n in lengths],
        "label": [k % 2 for k in range(count)],
    }
    if task != "bc":
        rows["question"] = [[2, *rng.integers(4, 30, int(rng.integers(1, 4))).tolist(), 3] for _ in lengths]
    return pd.DataFrame(rows)


@pytest.fixture(params=CASES, ids=["-".join(m) for m in CASES])
def flipping(request):
    """A model of every case whose decisions flip under erasure (the shared `case` models mostly never flip, so a
    first-flip comparison on them is mostly of NaN with NaN): J&W models without an output bias (the decision is
    then made by the states, which differ in sign from token to token), the Transformer's weights x 5 (at its
    initial scale the words barely move the [CLS] output)."""
    task, encoder, attention = request.param
    model = tiedcls(task) if encoder == "transformer" else make_model(task, encoder, attention)
    with torch.no_grad():
        if encoder == "transformer":
            for name, parameter in model.named_parameters():
                if "ln" not in name:
                    parameter.mul_(5.0)
        else:
            model.output.bias.zero_()
    rows = flipping_rows(task)
    scores = torch.rand(len(rows), RANKINGS, collate(rows).tokens.shape[1], generator=torch.Generator().manual_seed(3))
    scores[:, 1, :3] = 0.5  # ties, broken by position
    return model, rows, scores


MIN_FLIP_SHARE = 0.25  # of the (instance, ranking) cells with n >= 2, those that flip (finite in both)


@pytest.mark.parametrize("budget", [256.0, 1e-6])  # every k at once, and one k per chunk
def test_first_flip_matches_per_instance_reference(flipping, budget):
    model, rows, scores = flipping
    batched = first_flip(model, collate(rows), scores, memory_budget_mb=budget)
    expected = np.array([[reference_first_flip(model, rows, scores, i, r) for r in range(RANKINGS)] for i in range(len(rows))])
    np.testing.assert_allclose(batched.numpy(), expected, equal_nan=True)
    several = rows["tokens"].map(len).to_numpy() - 2 >= 2
    assert np.isfinite(expected[several]).mean() >= MIN_FLIP_SHARE  # the comparison is of flips, not of NaN with NaN


def test_single_weight_matches_per_instance_reference(case):
    model, rows, _ = case
    batch = collate(rows)
    items = torch.tensor([[1, n] for n in LENGTHS])  # the first and the last real item
    divergence, change, flipped = single_weight(model, batch, items)
    for i, n in enumerate(LENGTHS):
        one = single(rows, i)
        with torch.no_grad():
            output = model(one)
            for m, t in enumerate(items[i].tolist()):
                if n < 2:
                    assert math.isnan(divergence[i, m]) and math.isnan(change[i, m]) and not flipped[i, m]
                    continue
                alpha = output.attention.clone()
                alpha[0, t] = 0.0
                logits = model.decode(output.encoded, alpha / alpha.sum(), one)
                expected = jsd(model.distribution(logits), model.distribution(output.logits))
                torch.testing.assert_close(divergence[i, m].float(), expected[0], atol=1e-6, rtol=1e-4)
                output_change = 0.5 * (model.distribution(logits) - model.distribution(output.logits)).abs().sum()
                torch.testing.assert_close(change[i, m].float(), output_change, atol=1e-6, rtol=1e-4)
                assert bool(flipped[i, m]) == (predicted_class(model, logits) != predicted_class(model, output.logits))


def reference_eraser(model, rows, scores, i: int, r: int) -> tuple[list[float], list[float]]:
    tokens, n = list(rows.iloc[i]["tokens"]), LENGTHS[i]

    def probability(kept: list[int], c: int | None = None):
        variant = rows.iloc[i : i + 1].copy()
        variant["tokens"] = [kept]
        with torch.no_grad():
            logits = model(collate(variant)).logits
        return model.distribution(logits)[0], predicted_class(model, logits)

    original, c = probability(tokens)
    comprehensiveness, sufficiency = [], []
    for k in BINS:
        top = set(order_of(scores[i, r], n)[: math.ceil(round(k * n, 9))])
        deleted = [tok for t, tok in enumerate(tokens) if t not in top]
        kept = [tok for t, tok in enumerate(tokens) if t in top or t in (0, len(tokens) - 1)]
        comprehensiveness.append(float(original[c] - probability(deleted)[0][c]))
        sufficiency.append(float(original[c] - probability(kept)[0][c]))
    return comprehensiveness, sufficiency


@pytest.mark.parametrize("budget", [256.0, 1e-6])  # one chunk, and one variant per chunk
def test_comprehensiveness_and_sufficiency_match_per_instance_reference(case, budget):
    model, rows, scores = case
    comprehensiveness, sufficiency = comprehensiveness_sufficiency(model, collate(rows), scores, BINS, budget)
    for i in range(len(rows)):
        for r in range(RANKINGS):
            expected = reference_eraser(model, rows, scores, i, r)
            np.testing.assert_allclose(comprehensiveness[i, r].numpy(), expected[0], atol=1e-5)
            np.testing.assert_allclose(sufficiency[i, r].numpy(), expected[1], atol=1e-5)
    assert comprehensiveness.abs().max() > 1e-3  # the models react: the comparison is not of zeros


def test_top_counts_are_ceilings_without_float_error():
    counts = top_counts(torch.tensor([30, 10, 1, 7]), BINS)
    assert counts.tolist() == [[1, 2, 3, 6, 15], [1, 1, 1, 2, 5], [1, 1, 1, 1, 1], [1, 1, 1, 2, 4]]


def test_ties_are_broken_by_position():
    real = torch.tensor([[False, True, True, True, True, False]])
    scores = torch.tensor([[9.0, 1.0, 2.0, 2.0, 1.0, 9.0]])
    assert ranks(scores, real).tolist() == [[4, 2, 0, 1, 3, 5]]


# ---------------------------------------------------------------------------------------- defining cases


def test_erasing_nothing_changes_nothing(case):
    model, rows, _ = case
    batch = collate(rows)
    with torch.no_grad():
        output = model(batch)
        kept = erase(output.attention, torch.zeros_like(batch.real_mask))
        torch.testing.assert_close(kept, output.attention)
        torch.testing.assert_close(model.decoder(output.encoded, batch)(kept), output.logits, atol=1e-5, rtol=1e-4)
        everything = kept_batch(batch, torch.arange(batch.size), batch.padding_mask)
        assert torch.equal(everything.tokens, batch.tokens) and torch.equal(everything.lengths, batch.lengths)
        torch.testing.assert_close(model(everything).logits, output.logits)


def test_uniform_model_erasing_all_but_one_leaves_that_items_output():
    model = make_model("bc", "average", "uniform")
    batch = collate(make_rows("bc"))
    with torch.no_grad():
        output = model(batch)
        for i, n in enumerate(LENGTHS):
            for keep in range(1, n + 1):
                erased = batch.real_mask.clone()
                erased[:, keep] = False
                alpha = erase(output.attention, erased)[i]
                assert alpha[keep] == 1 and alpha.sum() == 1
                alone = model.output(output.encoded.hidden[i, keep])  # the output of that item's state alone
                logits = model.decoder(output.encoded, batch)(erase(output.attention, erased))
                torch.testing.assert_close(logits[i], alone[0], atol=1e-5, rtol=1e-5)


PLANTED = 7  # the token the planted model depends on


def planted_model() -> AttentionClassifier:
    """BC, Average encoder, uniform attention: every token but PLANTED embeds to 0 (so its state is 0), PLANTED to a
    vector the output reads strongly; the bias is very negative, so without PLANTED the model says 0 (p ~ 3e-7)."""
    torch.manual_seed(0)
    sizes = {"embedding_dim": 4, "hidden_size": 4}
    config = ModelConfig(vocab_size=30, n_classes=2, task="bc", encoder="average", attention="uniform", **sizes)
    model = AttentionClassifier(config).eval()
    with torch.no_grad():
        model.embedding.weight.zero_()
        model.embedding.weight[PLANTED] = 1.0
        model.encoder.projection.weight.copy_(torch.eye(4))
        model.encoder.projection.bias.zero_()
        model.output.weight.fill_(40.0)
        model.output.bias.fill_(-15.0)
    return model.double()  # the gradient of a saturated sigmoid stays above 0


def planted_rows() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    tokens = []
    for n in (3, 4, 5, 6):
        words = rng.choice([w for w in range(8, 30)], n).tolist()
        words[int(rng.integers(n))] = PLANTED
        tokens.append([2, *words, 3])
    return pd.DataFrame({"instance_id": [f"p{i}" for i in range(4)], "tokens": tokens, "label": [1] * 4})


def test_planted_token_flips_at_k1_under_gradient_and_comprehensiveness_is_p_c():
    model, rows = planted_model(), planted_rows()
    batch = collate(rows)
    gradient = gradient_importance(model, batch)
    with torch.no_grad():
        output = model(batch)
    p_c = model.distribution(output.logits)[:, 1]
    assert (model.predict(output.logits) == 1).all()
    n = batch.real_mask.sum(-1)
    fractions = first_flip(model, batch, gradient[:, None, :])[:, 0]
    torch.testing.assert_close(fractions, 1.0 / n.double())
    comprehensiveness, sufficiency = comprehensiveness_sufficiency(model, batch, gradient[:, None, :], BINS)
    smallest = 0  # ceil(0.01 n) = 1 covers the one planted token
    torch.testing.assert_close(comprehensiveness[:, 0, smallest], p_c, atol=1e-6, rtol=0)
    assert (sufficiency[:, 0, smallest].abs() < 0.05).all()  # the planted token alone keeps (most of) the decision


# ------------------------------------------------------------------------------------ underflow (float32)


def underflow_model() -> AttentionClassifier:
    """BC, Average encoder, dot attention with its vector x 6000: the scores lie thousands apart, so in float32 every
    attention weight but the top one is exactly 0 and renormalising the weights left after erasing the top one gives
    nothing to renormalise (the logit fell to the bias); the definition is the softmax of the scores left."""
    model = make_model("bc", "average", "dot")
    with torch.no_grad():
        model.attention.w.weight.mul_(6000.0)
    return model


def definition_logit(model: AttentionClassifier, rows: pd.DataFrame, i: int, kept: list[int]) -> float:
    """Instance i's logit with only the positions `kept` left, in float64: the attention is the softmax of their scores
    (spec §2), written out with the model's modules."""
    exact = copy.deepcopy(model).double()
    one = single(rows, i)
    with torch.no_grad():
        hidden, _ = exact.encoder(exact.embed(one.tokens), one.lengths)
        weights = torch.softmax(exact.attention(hidden, None)[0, kept], dim=0)
        return float(exact.output((weights[:, None] * hidden[0, kept]).sum(0))[0])


def test_erasing_the_top_weight_is_the_softmax_of_the_scores_left_when_the_others_underflow():
    model, rows = underflow_model(), make_rows("bc")
    batch = collate(rows)
    n = batch.real_mask.sum(-1)
    several = [i for i in range(batch.size) if n[i] >= 2]
    with torch.no_grad():
        output = model(batch)
        top = output.attention.argmax(-1)
        assert ((output.attention > 0).sum(-1) == 1).all()  # float32: every weight but the top one is 0
        erased = torch.nn.functional.one_hot(top, batch.tokens.shape[1]).bool()
        logits = model.decode_erased(output.encoded, erased[:, None, :], batch, output.attention)[:, 0]
        _, change, _ = single_weight(model, batch, top[:, None], output)
    left = {i: [t for t in range(1, int(n[i]) + 1) if t != int(top[i])] for i in several}
    for i in several:  # the decoded output and the single-weight test's |dp|
        expected = definition_logit(model, rows, i, left[i])
        assert float(logits[i]) == pytest.approx(expected, rel=1e-4, abs=1e-4)
        full = definition_logit(model, rows, i, list(range(1, int(n[i]) + 1)))
        dp = abs(torch.sigmoid(torch.tensor(expected)) - torch.sigmoid(torch.tensor(full)))
        assert float(change[i, 0]) == pytest.approx(float(dp), abs=1e-5)
    assert any(abs(float(logits[i]) - float(model.output.bias.detach())) > 0.1 for i in several)  # not the bias
    kept = erase(output.attention, erased, output.encoded.scores)  # the weights themselves
    exact = copy.deepcopy(model).double()
    for i in several:
        one = single(rows, i)
        with torch.no_grad():
            hidden, _ = exact.encoder(exact.embed(one.tokens), one.lengths)
            expected_weights = torch.softmax(exact.attention(hidden, None)[0, left[i]], dim=0)
        torch.testing.assert_close(kept[i, left[i]].double(), expected_weights, atol=1e-6, rtol=0)
        assert float(kept[i].sum()) == pytest.approx(1.0, abs=1e-6)


def reference_first_flip_exact(model, rows, scores, i: int, r: int) -> float:
    """First flip of instance i under ranking r from `definition_logit` (float64; the decision: logit > 0)."""
    n = len(rows["tokens"].iloc[i]) - 2
    decision = definition_logit(model, rows, i, list(range(1, n + 1))) > 0
    order = order_of(scores[i, r], n)
    for k in range(1, n):
        if (definition_logit(model, rows, i, sorted(order[k:])) > 0) != decision:
            return k / n
    return float("nan")


@pytest.mark.parametrize("budget", [256.0, 1e-6])
def test_first_flip_is_the_softmax_of_the_scores_left_when_the_kept_weights_underflow(budget):
    model, rows = underflow_model(), flipping_rows("bc")
    batch = collate(rows)
    with torch.no_grad():
        output = model(batch)
    scores = model.attention(output.encoded.hidden, None).masked_fill(~batch.real_mask, float("-inf")).detach()
    below_top = scores < scores.amax(-1, keepdim=True)
    assert (output.attention[below_top] == 0).all()  # float32: every weight below the top score is 0
    random = torch.rand(batch.size, 2, batch.tokens.shape[1], generator=torch.Generator().manual_seed(1))
    scores = torch.cat([output.attention[:, None].double(), random.double()], dim=1) * batch.real_mask[:, None]
    fractions = first_flip(model, batch, scores, output, budget)
    expected = [[reference_first_flip_exact(model, rows, scores, i, r) for r in range(3)] for i in range(batch.size)]
    np.testing.assert_allclose(fractions.numpy(), np.array(expected), equal_nan=True)
    assert np.isfinite(np.array(expected)).mean() >= 0.25


def test_a_guided_model_erases_its_guide_weights_not_the_unused_scores():
    """W&P's guided MLP attends with given weights (its own attention module, uniform, is unused): it keeps no scores,
    so erasure renormalises the guide, in `decode_erased` and in the first-flip sums."""
    from attnexp.analyses.wp.donors import DonorTable, GuidedClassifier

    rows = make_rows("bc")
    rng = np.random.default_rng(0)
    guides = {i: (w := rng.random(n) ** 4) / w.sum() for i, n in zip(rows["instance_id"], LENGTHS, strict=True)}
    model = GuidedClassifier(make_model("bc", "average", "tanh").config, DonorTable(guides)).eval()
    batch = collate(rows)
    with torch.no_grad():
        output = model(batch)
        assert output.encoded.scores is None
        erased = torch.rand(batch.size, 3, batch.tokens.shape[1], generator=torch.Generator().manual_seed(4)) < 0.5
        kept = output.attention[:, None] * ~erased
        expected = model.decoder(output.encoded, batch)(kept / kept.sum(-1, keepdim=True).clamp(min=1e-30))
        torch.testing.assert_close(model.decode_erased(output.encoded, erased, batch, output.attention), expected)
    scores = torch.rand(batch.size, RANKINGS, batch.tokens.shape[1], generator=torch.Generator().manual_seed(3))
    expected = [[reference_first_flip(model, rows, scores, i, r) for r in range(RANKINGS)] for i in range(len(rows))]
    np.testing.assert_allclose(first_flip(model, batch, scores).numpy(), np.array(expected), equal_nan=True)


# ---------------------------------------------------------------------------- attention-layer gradients

GRADIENT_CASES = [
    ("bc", "average", "dot"),  # predicts both classes on these rows
    ("bc", "cnn", "dot"),
    ("bc", "lstm", "tanh"),  # predicts the negative class on every row
    ("qa", "cnn", "tanh"),
    ("nli", "lstm", "dot"),
    ("nli", "transformer", "tiedcls"),
]


@pytest.mark.parametrize(("task", "encoder", "attention"), GRADIENT_CASES, ids=["-".join(c) for c in GRADIENT_CASES])
def test_attention_gradients_match_central_differences_of_the_predicted_class(task, encoder, attention):
    """d p_c / d alpha_t (Serrano & Smith's attention-layer ranking) is the derivative of the probability of the
    predicted class c (for BC the negative class on instances predicted negative, not always the positive one) with
    alpha_t moved alone, the states fixed: against central differences of `decode`, in float64."""
    model = (tiedcls(task) if encoder == "transformer" else make_model(task, encoder, attention)).double()
    batch = collate(make_rows(task))
    with torch.no_grad():
        output = model(batch)
    gradient, product = attention_gradients(model, batch, output)
    predicted = model.predict(output.logits)
    if task == "bc":  # the predicted class: both classes, or the negative one on every row
        assert set(predicted.tolist()) == ({0} if encoder == "lstm" else {0, 1})
    step = 1e-6
    for i in range(batch.size):
        for t in range(batch.tokens.shape[1]):
            if not batch.real_mask[i, t]:
                assert gradient[i, t] == 0 and product[i, t] == 0
                continue
            moved = [output.attention.clone() for _ in range(2)]
            moved[0][i, t] += step
            moved[1][i, t] -= step
            with torch.no_grad():
                p = [model.distribution(model.decode(output.encoded, a, batch))[i, predicted[i]] for a in moved]
            expected = float(p[0] - p[1]) / (2 * step)
            assert float(gradient[i, t]) == pytest.approx(expected, rel=1e-5, abs=1e-8), (i, t)
            assert float(product[i, t]) == pytest.approx(expected * float(output.attention[i, t]), rel=1e-5, abs=1e-8)
    assert gradient.abs().max() > 1e-3  # the comparison is not of zeros


# ------------------------------------------------------------------------------------------- random baseline


def test_random_baseline_is_seeded_and_per_instance():
    batch = collate(make_rows("bc"))
    top = torch.ones(batch.size, dtype=torch.long)
    scores, items = random_draws(batch, seed=4, top=top)
    again, again_items = random_draws(batch, seed=4, top=top)
    assert torch.equal(scores, again) and torch.equal(items, again_items)
    other, _ = random_draws(batch, seed=5, top=top)
    assert not torch.equal(scores, other)
    alone, alone_items = random_draws(batch.select(slice(3, 4)), seed=4, top=top[3:4])  # the same draw outside its batch
    assert torch.equal(alone[0, : alone.shape[1]], scores[3, : alone.shape[1]]) and alone_items[0] == items[3]
    real = batch.real_mask
    assert ((items >= 1) & (items <= real.sum(-1))).all() and (scores[~real] == 0).all() and (scores[real] > 0).all()


def varied_rows(count: int = 36, tied_every: int = 3) -> pd.DataFrame:
    """BC rows of 1 .. 9 real tokens; every `tied_every`-th instance repeats one token (the average encoder then
    gives it tied attention weights, so its top item is position 1 by the tie rule)."""
    rng = np.random.default_rng(7)
    lengths = [1 + k % 9 for k in range(count)]
    tokens = [[5] * n if k % tied_every == 0 else rng.integers(4, 30, n).tolist() for k, n in enumerate(lengths)]
    ids, labels = [f"v{k}" for k in range(count)], [k % 2 for k in range(count)]
    return pd.DataFrame({"instance_id": ids, "tokens": [[2, *t, 3] for t in tokens], "label": labels})


def test_random_single_weight_is_never_the_top_item_and_covers_the_others():
    """Serrano & Smith's `rand_nontop` (spec §2): r is uniform over the n - 1 real items other than the top one i*,
    never i* itself (drawn from all n items, r = i* on 1/n of the instances); with n < 2 there is no other item."""
    batch = collate(varied_rows())
    n = batch.real_mask.sum(-1)
    scores = torch.rand(batch.tokens.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    scores[::4] = 0.5  # tied scores: the tie rule's top item, position 1
    top = ranks(scores, batch.real_mask).argmin(-1)
    assert (top[::4] == 1).all() and len(set(top[n >= 3].tolist())) > 3  # varied tops, first and inner positions
    drawn = [set() for _ in range(batch.size)]
    for seed in range(120):
        _, items = random_draws(batch, seed=seed, top=top)
        several = n >= 2
        assert (items[several] != top[several]).all(), f"seed {seed}: the random item is the top item"
        assert ((items >= 1) & (items <= n.clamp(min=1))).all() and (items[~several] == 1).all()
        for row, item in enumerate(items.tolist()):
            drawn[row].add(item)
    for row, count in enumerate(n.tolist()):  # every other real item is drawn, for every length and top position
        expected = set(range(1, count + 1)) - {int(top[row])} if count >= 2 else {1}
        assert drawn[row] == expected, (row, count, int(top[row]))


def test_erasure_tables_pair_the_top_attention_weight_with_another_random_one(monkeypatch):
    """The single-weight test erases alpha's top item (ties: the earliest) and a random item that is never it, for
    every instance of every batch (also instances with tied attention weights), and is undefined for n < 2."""
    model, rows = make_model("bc", "average", "tanh"), varied_rows()
    pairs = []

    def recorded(model, batch, items, output=None):
        pairs.append((batch.instance_ids, items, output.attention, batch.real_mask.sum(-1)))
        return single_weight(model, batch, items, output)

    monkeypatch.setattr("attnexp.analyses.erasure.instances.single_weight", recorded)
    scores = pd.DataFrame({"instance_id": rows["instance_id"], "gradient": [[1.0] * (len(t) - 2) for t in rows["tokens"]]})
    settings = ErasureSettings(bins=(0.5,), memory_budget_mb=256.0)
    for seed in range(4):
        attention, _ = erasure_tables(model, rows, scores, settings, seed=seed, batch_size=12, progress=False)
        single = attention[attention["ranking"] == "attention"]
        assert single.loc[single["n"] < 2, "jsd_top"].isna().all() and single.loc[single["n"] >= 2, "jsd_top"].notna().all()
    assert len(pairs) == 4 * 3
    for ids, items, alpha, n in pairs:
        for row, (instance_id, count) in enumerate(zip(ids, n.tolist(), strict=True)):
            if count < 2:
                continue
            real = alpha[row, 1 : 1 + count]
            top, other = int(items[row, 0]), int(items[row, 1])
            assert top == 1 + int(torch.nonzero(real == real.max())[0])  # alpha's top item, the earliest of ties
            if int(instance_id[1:]) % 3 == 0:  # one repeated token: tied weights, so the top item is position 1
                assert torch.equal(real, real[:1].expand_as(real)) and top == 1
            assert other != top and 1 <= other <= count, (instance_id, top, other)


def test_length_chunks_cover_every_variant_once_with_bounded_padding():
    lengths = torch.tensor([3, 30, 29, 10, 12, 30, 2, 25, 9])
    chunks = length_chunks(lengths, lambda width: 2)
    covered = torch.cat(chunks)
    assert sorted(covered.tolist()) == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) <= 2 and lengths[chunk].min() >= 0.8 * lengths[chunk].max()


def self_transformer(task: str = "bc"):
    torch.manual_seed(1)
    meta = {"vocab": [f"w{i}" for i in range(30)], "classes": ["a", "b"] if task == "bc" else list("abcd"), "task": task}
    return build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="self").eval()


def sharpen_last_layer(model, scale: float = 150.0):
    """The last layer's queries and keys x `scale`: its [CLS] scores lie hundreds apart, so in float32 most of its
    weights are exactly 0 (in float64 none is)."""
    with torch.no_grad():
        weight, bias = model.blocks[-1].attn.qkv.weight, model.blocks[-1].attn.qkv.bias
        weight[: 2 * model.config.width].mul_(scale)
        bias[: 2 * model.config.width].mul_(scale)
    return model


@pytest.mark.parametrize("sharp", [False, True], ids=["plain", "underflow"])
@pytest.mark.parametrize("task", ["bc", "nli"])
def test_transformer_self_erases_every_heads_cls_row_as_masked_keys(task, sharp):
    """The standard Transformer's erasure is its last block's [CLS] query with the erased keys masked (every head),
    written here with the block's own forward, one instance and one set at a time. `sharp`: the last layer's [CLS]
    rows are (nearly) one-hot in float32 and the third set erases every head's top key, so what every head keeps
    has underflowed to 0: the masked softmax of the scores is still defined."""
    model, rows = self_transformer(task), make_rows(task)
    model = sharpen_last_layer(model) if sharp else model
    batch = collate(rows)
    erased = (
        torch.rand(batch.size, 3, batch.tokens.shape[1], generator=torch.Generator().manual_seed(2)) < 0.4
    ) & batch.real_mask[:, None]
    erased[:, 0] = False  # erasing nothing
    with torch.no_grad():
        output = model(batch)
        if sharp:
            cls_rows = output.encoded.maps[:, -1, :, 0, :]  # [B, heads, L]
            erased[:, 2] = torch.zeros_like(erased[:, 2]).scatter_(1, cls_rows.argmax(-1), True) & batch.real_mask
            left = cls_rows * ~erased[:, 2, None, :]
            assert ((left.sum(-1) == 0).all(-1) & (batch.real_mask.sum(-1) >= 3)).any()  # nothing left in any head
        logits = model.decode_erased(output.encoded, erased, batch, output.attention)
        torch.testing.assert_close(logits[:, 0], output.logits, atol=1e-5, rtol=1e-4)
        for i in range(len(rows)):
            one = single(rows, i)
            width = one.tokens.shape[1]
            x = model.embed(one.tokens)
            question = model._question(one)
            if question is not None:
                x = torch.cat([x[:, :1] + question[:, None], x[:, 1:]], dim=1)
            for block in model.blocks[:-1]:
                x, _ = block(x, model.key_mask(one))
            for k in range(3):
                keys = model.key_mask(one) & ~erased[i : i + 1, k, :width]
                y, _ = model.blocks[-1](x, keys, queries=1)
                expected = model.output_logits(model.ln_f(y[:, 0]), question, one, several=False)
                torch.testing.assert_close(logits[i, k], expected[0], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("task", ["bc", "nli"])
def test_transformer_tiedcls_erasure_is_defined_when_the_kept_weights_underflow(task):
    """The "tiedcls" model erases its one head-averaged distribution; with a sharp last layer, erasing every word but the one it
    weighs least leaves a weight that is 0 in float32 on some instances (every head's). Against the float64 model,
    where none underflows: the word left gets weight 1."""
    model, rows = sharpen_last_layer(tiedcls(task)), make_rows(task)
    batch = collate(rows)
    exact = copy.deepcopy(model).double()
    with torch.no_grad():
        output, reference = model(batch), exact(batch)
        lowest = reference.attention.masked_fill(~batch.real_mask, 2.0).argmin(-1)
        erased = batch.real_mask & ~torch.nn.functional.one_hot(lowest, batch.tokens.shape[1]).bool()
        assert ((output.attention * ~erased).sum(-1) == 0).sum() >= 2  # float32: nothing left to renormalise
        assert ((reference.attention * ~erased).sum(-1) > 0).all()  # float64: defined
        logits = model.decode_erased(output.encoded, erased[:, None], batch, output.attention)[:, 0]
        kept = reference.attention * ~erased
        expected = exact.decode(reference.encoded, kept / kept.sum(-1, keepdim=True), batch)
    torch.testing.assert_close(logits.double(), expected, atol=1e-5, rtol=1e-4)


def test_transformer_self_gets_the_attention_test_without_attention_gradients():
    model, rows = self_transformer(), make_rows("bc")
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"instance_id": rows["instance_id"], "raw": [rng.random(n + 1).tolist() for n in LENGTHS]})
    settings = ErasureSettings(bins=BINS, memory_budget_mb=256.0)
    attention, inputs = erasure_tables(model, rows, scores, settings, seed=0, batch_size=5, offset=0, progress=False)
    assert set(attention["ranking"]) == {"attention", "raw", "random"} and set(inputs["ranking"]) == {"raw", "random"}
    single = attention[(attention["ranking"] == "attention") & (attention["n"] >= 2)]
    assert len(single) == sum(n >= 2 for n in LENGTHS) and single["jsd_top"].notna().all()
