"""The erasure tests (Serrano & Smith; ERASER) against per-instance reference implementations written from the spec
(loops here only), and their defining cases: erasing nothing, a uniform model, a planted-token model, the seeds."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.analyses.divergences import jsd
from attnexp.analyses.erasure.attention import erase, first_flip, single_weight
from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency, kept_batch, length_chunks, top_counts
from attnexp.analyses.erasure.instances import erasure_tables
from attnexp.analyses.erasure.rankings import random_draws, ranks
from attnexp.analyses.erasure.settings import ErasureSettings
from attnexp.analyses.jw.importance import gradient_importance
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
    one, n = single(rows, i), LENGTHS[i]
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


@pytest.mark.parametrize("budget", [256.0, 1e-6])  # every k at once, and one k per chunk
def test_first_flip_matches_per_instance_reference(case, budget):
    model, rows, scores = case
    batched = first_flip(model, collate(rows), scores, memory_budget_mb=budget)
    expected = [[reference_first_flip(model, rows, scores, i, r) for r in range(RANKINGS)] for i in range(len(rows))]
    np.testing.assert_allclose(batched.numpy(), np.array(expected), equal_nan=True)


def test_first_flip_flips_somewhere():
    """The reference comparison must see flips on some of the models, or it compares NaN with NaN only."""
    flips = 0
    for task, encoder, attention in CASES:
        model = tiedcls(task) if encoder == "transformer" else make_model(task, encoder, attention)
        rows = make_rows(task)
        scores = torch.rand(len(rows), 4, collate(rows).tokens.shape[1], generator=torch.Generator().manual_seed(0))
        flips += int(torch.isfinite(first_flip(model, collate(rows), scores)).sum())
    assert flips > 0


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


# ------------------------------------------------------------------------------------------- random baseline


def test_random_baseline_is_seeded_and_per_instance():
    batch = collate(make_rows("bc"))
    scores, items = random_draws(batch, seed=4)
    again, again_items = random_draws(batch, seed=4)
    assert torch.equal(scores, again) and torch.equal(items, again_items)
    other, _ = random_draws(batch, seed=5)
    assert not torch.equal(scores, other)
    alone, alone_items = random_draws(batch.select(slice(3, 4)), seed=4)  # the same draw outside its batch
    assert torch.equal(alone[0, : alone.shape[1]], scores[3, : alone.shape[1]]) and alone_items[0] == items[3]
    real = batch.real_mask
    assert ((items >= 1) & (items <= real.sum(-1))).all() and (scores[~real] == 0).all() and (scores[real] > 0).all()


def test_tables_reproducible_and_rationale_rows_only_where_planted():
    model, rows = make_model("qa", "cnn", "tanh"), make_rows("qa")
    rows["rationale"] = [[1], [], [2, 3], [], [1]]
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"instance_id": rows["instance_id"], "attention": [rng.random(n).tolist() for n in LENGTHS]})
    settings = ErasureSettings(bins=BINS, memory_budget_mb=256.0)
    first = erasure_tables(model, rows, scores, settings, seed=1, batch_size=2, progress=False)
    again = erasure_tables(model, rows, scores, settings, seed=1, batch_size=2, progress=False)
    rebatched = erasure_tables(model, rows, scores, settings, seed=1, batch_size=3, progress=False)
    for a, b, c in zip(first, again, rebatched, strict=True):
        pd.testing.assert_frame_equal(a, b)  # the same settings: the same bytes
        # another batching pads differently, so some CPU kernels (AVX-512 convolutions) round differently
        pd.testing.assert_frame_equal(a, c, check_exact=False, rtol=1e-5, atol=1e-6)
    attention, inputs = first
    assert set(attention["ranking"]) == {"attention", "random", "rationale", "attention_gradient", "attention_x_gradient"}
    assert sorted(attention.loc[attention["ranking"] == "rationale", "instance_id"]) == ["i0", "i2", "i4"]
    assert (inputs.groupby(["instance_id", "ranking"]).size() == len(BINS)).all()
    assert attention.loc[attention["ranking"] != "attention", "jsd_top"].isna().all()
    different = erasure_tables(model, rows, scores, settings, seed=2, batch_size=2, progress=False)[1]
    random = inputs["ranking"] == "random"
    assert not np.allclose(inputs.loc[random, "comprehensiveness"], different.loc[random, "comprehensiveness"])


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


@pytest.mark.parametrize("task", ["bc", "nli"])
def test_transformer_self_erases_every_heads_cls_row_as_masked_keys(task):
    """The standard Transformer's erasure is its last block's [CLS] query with the erased keys masked (every head),
    written here with the block's own forward, one instance and one set at a time."""
    model, rows = self_transformer(task), make_rows(task)
    batch = collate(rows)
    erased = (
        torch.rand(batch.size, 3, batch.tokens.shape[1], generator=torch.Generator().manual_seed(2)) < 0.4
    ) & batch.real_mask[:, None]
    erased[:, 0] = False  # erasing nothing
    with torch.no_grad():
        output = model(batch)
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


def test_transformer_self_gets_the_attention_test_without_attention_gradients():
    model, rows = self_transformer(), make_rows("bc")
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"instance_id": rows["instance_id"], "raw": [rng.random(n + 1).tolist() for n in LENGTHS]})
    settings = ErasureSettings(bins=BINS, memory_budget_mb=256.0)
    attention, inputs = erasure_tables(model, rows, scores, settings, seed=0, batch_size=5, offset=0, progress=False)
    assert set(attention["ranking"]) == {"attention", "raw", "random"} and set(inputs["ranking"]) == {"raw", "random"}
    single = attention[(attention["ranking"] == "attention") & (attention["n"] >= 2)]
    assert len(single) == sum(n >= 2 for n in LENGTHS) and single["jsd_top"].notna().all()
