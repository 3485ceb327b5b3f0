"""Exactness of the batched J&W analyses against plain per-instance reference implementations kept here."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from captum.attr import IntegratedGradients
from scipy.spatial.distance import jensenshannon
from scipy.stats import kendalltau

from attnexp.analyses.divergences import LN2, jsd, tvd
from attnexp.analyses.jw.adversary import adversarial_attention, initial_logits
from attnexp.analyses.jw.importance import deletion_batch, gradient_importance, integrated_gradients, leave_one_out
from attnexp.analyses.jw.kendall import kendall_tau, kendall_tau_per_instance, summarise_group, summarise_kendall
from attnexp.analyses.jw.permutation import identity_permutations, permutation_output_changes, sample_permutations
from attnexp.analyses.jw.rationale import cue_auc, cue_mask, precision_at_k, rationale_recovery
from attnexp.analyses.jw.settings import AdversarySettings
from attnexp.data.batching import Batch, collate, padded_rows
from attnexp.models.classifier import AttentionClassifier
from attnexp.pipeline.settings import analysis_settings
from tests.factories import adversary_settings, tiny_model_config

torch.set_num_threads(1)
LENGTHS = [1, 2, 5, 9, 3]  # real tokens, ragged, including a one-token instance
MODELS = [
    ("bc", "lstm", "tanh"),
    ("bc", "cnn", "dot"),
    ("bc", "average", "tanh"),
    ("nli", "lstm", "dot"),
    ("qa", "cnn", "tanh"),
    ("qa", "average", "dot"),
]


def make_model(task: str, encoder: str, attention: str, seed: int = 0) -> AttentionClassifier:
    torch.manual_seed(seed)
    model = AttentionClassifier(tiny_model_config(task, encoder, attention)).eval()
    with torch.no_grad():  # larger weights so that outputs react clearly to the inputs
        for parameter in model.parameters():
            parameter.mul_(3.0)
    return model


def make_rows(task: str, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = {
        "instance_id": [f"i{k}" for k in range(len(LENGTHS))],
        "tokens": [[2, *rng.integers(4, 30, n).tolist(), 3] for n in LENGTHS],
        "label": rng.integers(0, 2, len(LENGTHS)).tolist(),
    }
    if task != "bc":
        rows["question"] = [[2, *rng.integers(4, 30, int(rng.integers(1, 4))).tolist(), 3] for _ in LENGTHS]
    return pd.DataFrame(rows)


def single(rows: pd.DataFrame, i: int) -> Batch:
    return collate(rows.iloc[i : i + 1])


def real(scores: torch.Tensor, i: int, n: int) -> torch.Tensor:
    return scores[i, 1 : n + 1]


@pytest.fixture(params=MODELS, ids=["-".join(m) for m in MODELS])
def case(request):
    task, encoder, attention = request.param
    return make_model(task, encoder, attention), make_rows(task)


# ---------------------------------------------------------------------------------------------- importance


def reference_gradient(model: AttentionClassifier, batch: Batch) -> torch.Tensor:
    embedded = model.embed(batch.tokens).detach().requires_grad_(True)
    encoded = model.encode(batch, embedded)
    attention = model.attend(encoded, batch).detach()
    distribution = model.distribution(model.decode(encoded, attention, batch))[0]
    target = 1 if model.is_binary else int(distribution.argmax())
    distribution[target].backward()
    return (embedded.grad * embedded).sum(-1).abs()[0]


def test_gradient_matches_per_instance_reference(case):
    model, rows = case
    batched = gradient_importance(model, collate(rows))
    for i, n in enumerate(LENGTHS):
        expected = reference_gradient(model, single(rows, i))[1 : n + 1]
        torch.testing.assert_close(real(batched, i, n), expected, atol=1e-5, rtol=1e-4)
    assert (batched * ~collate(rows).real_mask).abs().sum() == 0


def test_gradient_matches_finite_differences_with_attention_fixed(case):
    model, rows = case
    model = model.double()
    batch = collate(rows)
    scores = gradient_importance(model, batch)
    embedded = model.embed(batch.tokens).detach()
    with torch.no_grad():
        output = model(batch)
        target = None if model.is_binary else model.predict(output.logits)

        def probability(e):
            p = model.distribution(model.decode(model.encode(batch, e), output.attention, batch))
            return p[:, 1] if target is None else p.gather(1, target[:, None]).squeeze(1)

        h = 1e-6
        for t in range(1, max(LENGTHS) + 1):
            up, down = embedded.clone(), embedded.clone()
            up[:, t] *= 1 + h
            down[:, t] *= 1 - h
            directional = ((probability(up) - probability(down)) / (2 * h)).abs()
            live = batch.real_mask[:, t]
            torch.testing.assert_close(scores[live, t], directional[live], atol=1e-6, rtol=1e-4)


def test_gradient_treats_the_attention_as_a_constant(case):
    """J&W §6.1: the gradient flows through the hidden states only. On these models the attention depends on the
    input, so the gradient with the attention left in the graph differs; the importance must equal the detached one."""
    model, rows = case
    batch = collate(rows)
    scores = gradient_importance(model, batch)
    with torch.no_grad():
        target = None if model.is_binary else model.predict(model(batch).logits)
    by_attention = {}
    for detached in (True, False):
        embedded = model.embed(batch.tokens).detach().requires_grad_(True)
        encoded = model.encode(batch, embedded)
        attention = model.attend(encoded, batch)
        p = model.distribution(model.decode(encoded, attention.detach() if detached else attention, batch))
        p = p[:, 1] if target is None else p.gather(1, target[:, None])[:, 0]
        (gradient,) = torch.autograd.grad(p.sum(), embedded)
        by_attention[detached] = (gradient * embedded).sum(-1).abs() * batch.real_mask
    torch.testing.assert_close(scores, by_attention[True], atol=1e-6, rtol=1e-5)
    assert (scores - by_attention[False]).abs().max() > 1e-3


def reference_loo(model: AttentionClassifier, rows: pd.DataFrame, i: int) -> torch.Tensor:
    tokens = list(rows.iloc[i]["tokens"])
    with torch.no_grad():
        original = model.distribution(model(single(rows, i)).logits)
        changes = []
        for t in range(1, len(tokens) - 1):
            deleted = rows.iloc[i : i + 1].copy()
            deleted["tokens"] = [tokens[:t] + tokens[t + 1 :]]
            changes.append(float(tvd(model.distribution(model(collate(deleted)).logits), original)))
    return torch.tensor(changes)


@pytest.mark.parametrize("budget", [256.0, 1e-4])  # one chunk, and one deletion per chunk
def test_leave_one_out_matches_per_position_loop(case, budget):
    model, rows = case
    batched = leave_one_out(model, collate(rows), memory_budget_mb=budget)
    for i, n in enumerate(LENGTHS):
        torch.testing.assert_close(real(batched, i, n), reference_loo(model, rows, i), atol=1e-5, rtol=1e-4)


def test_deletion_batch_removes_exactly_one_token():
    batch = collate(make_rows("bc"))
    deleted, instance, position = deletion_batch(batch)
    assert len(instance) == sum(LENGTHS)
    for row, (i, t) in enumerate(zip(instance.tolist(), position.tolist(), strict=True)):
        original = batch.tokens[i, : batch.lengths[i]].tolist()
        assert deleted.tokens[row, : deleted.lengths[row]].tolist() == original[:t] + original[t + 1 :]
        assert (deleted.tokens[row, deleted.lengths[row] :] == 0).all()


def reference_ig(model: AttentionClassifier, batch: Batch, steps: int) -> torch.Tensor:
    """Gauss-Legendre IG on one instance, written out: sum_j w_j * grad f(b + a_j (x - b)) * (x - b)."""
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    nodes, weights = (nodes + 1) / 2, weights / 2
    embedded = model.embed(batch.tokens).detach()
    baseline = embedded * ~batch.real_mask[..., None]
    with torch.no_grad():
        target = 1 if model.is_binary else int(model(batch).logits.argmax())
    total = torch.zeros_like(embedded)
    for a, w in zip(nodes, weights, strict=True):
        point = (baseline + float(a) * (embedded - baseline)).requires_grad_(True)
        encoded = model.encode(batch, point)
        model.distribution(model.decode(encoded, model.attend(encoded, batch), batch))[0, target].backward()
        total += float(w) * point.grad
    return (total * (embedded - baseline)).sum(-1).abs()[0]


def test_integrated_gradients_match_written_out_reference(case):
    model, rows = case
    batched = integrated_gradients(model, collate(rows), steps=8)
    for i, n in enumerate(LENGTHS):
        torch.testing.assert_close(real(batched, i, n), reference_ig(model, single(rows, i), 8)[1 : n + 1], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("measure", ["gradient", "IG"])
def test_a_ragged_batch_runs_in_groups_of_like_lengths(measure):
    """Issue 35: the gradient and integrated gradients pad no short instance to the batch's longest: every pass runs
    instances within SLACK of its own width, trimmed to it (the per-instance references above check the numbers)."""
    from attnexp.analyses.jw.importance import SLACK

    model, rows = make_model("bc", "lstm", "tanh"), make_rows("bc")
    batch = collate(rows)
    passes = []
    encode = model.encode

    def spy(batch, embedded=None):
        passes.append((batch.tokens.shape[1], int(batch.lengths.min()), int(batch.lengths.max())))
        return encode(batch, embedded)

    model.encode = spy
    scores = gradient_importance(model, batch) if measure == "gradient" else integrated_gradients(model, batch, steps=4)
    assert scores.shape == batch.tokens.shape
    assert {width for width, _, _ in passes} == {11, 7, 5, 3}  # lengths 3, 4, 7, 11, 5: 4 joins 5 (within SLACK 0.8)
    assert all(longest == width and shortest >= SLACK * width for width, shortest, longest in passes)


def test_integrated_gradients_complete_to_the_output_difference():
    model, rows = make_model("bc", "average", "tanh").double(), make_rows("bc")
    batch = collate(rows)
    embedded = model.embed(batch.tokens).detach()
    baseline = embedded * ~batch.real_mask[..., None]

    def forward(inputs, tokens, lengths):
        expanded = Batch(tokens, lengths, torch.zeros_like(lengths), [])
        encoded = model.encode(expanded, inputs)
        return model.distribution(model.decode(encoded, model.attend(encoded, expanded), expanded))

    signed, delta = IntegratedGradients(forward).attribute(
        embedded,
        baselines=baseline,
        target=1,
        additional_forward_args=(batch.tokens, batch.lengths),
        n_steps=200,
        return_convergence_delta=True,
    )
    assert delta.abs().max() < 1e-4
    unsigned = integrated_gradients(model, batch, steps=200)
    torch.testing.assert_close(unsigned, signed.sum(-1).abs() * batch.real_mask)


def test_integrated_gradients_keep_the_qa_candidate_mask():
    """CNN-QA: the explained probability is over the instance's candidate answers only. Candidates exclude the
    answer the unmasked model would pick, so a forward pass without the mask explains another distribution;
    the batched IG must agree with the written-out reference (which decodes with the mask) and complete to
    the masked p(x) - p(baseline)."""
    model, rows = make_model("qa", "cnn", "tanh").double(), make_rows("qa")
    with torch.no_grad():
        unmasked = model(collate(rows)).logits
    rows["candidates"] = list((unmasked.argsort(-1).argsort(-1) < 2).numpy())  # the two least likely answers
    batch = collate(rows)
    batched = integrated_gradients(model, batch, steps=16)
    for i, n in enumerate(LENGTHS):
        expected = reference_ig(model, single(rows, i), 16)
        torch.testing.assert_close(real(batched, i, n), expected[1 : n + 1], atol=1e-7, rtol=1e-6)

    one = single(rows, 3)  # the longest instance: signed attributions of the reference complete to the output gap
    embedded = model.embed(one.tokens).detach()
    baseline = embedded * ~one.real_mask[..., None]
    with torch.no_grad():
        target = int(model(one).logits.argmax())
        gap = [
            model.distribution(model.decode(model.encode(one, e), model.attend(model.encode(one, e), one), one))[0, target]
            for e in (embedded, baseline)
        ]
    nodes, weights = np.polynomial.legendre.leggauss(64)  # ReLU kinks: slow convergence, hence 64 nodes and atol
    signed = torch.zeros_like(embedded)
    for a, w in zip((nodes + 1) / 2, weights / 2, strict=True):
        point = (baseline + float(a) * (embedded - baseline)).requires_grad_(True)
        encoded = model.encode(one, point)
        model.distribution(model.decode(encoded, model.attend(encoded, one), one))[0, target].backward()
        signed += float(w) * point.grad
    torch.testing.assert_close((signed * (embedded - baseline)).sum(), gap[0] - gap[1], atol=1e-3, rtol=0)
    assert bool(one.candidates[0, target]) and not bool(one.candidates[0, int(unmasked[3].argmax())])


# ---------------------------------------------------------------------------------------------- divergences, Kendall


def test_jsd_equals_scipy_jensenshannon_squared():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(7), size=5), rng.dirichlet(np.ones(7), size=5)
    p[0, :3] = 0
    p[0] /= p[0].sum()
    ours = jsd(torch.tensor(p), torch.tensor(q)).numpy()
    expected = [jensenshannon(a, b, base=math.e) ** 2 for a, b in zip(p, q, strict=True)]
    np.testing.assert_allclose(ours, expected, atol=1e-8)
    assert (ours <= LN2).all()


@pytest.mark.parametrize("n", [2, 5, 33, 34, 60])
def test_kendall_tau_equals_scipy(n):
    rng = np.random.default_rng(n)
    for x, y in [
        (rng.normal(size=n), rng.normal(size=n)),
        (rng.integers(0, 3, n).astype(float), rng.normal(size=n)),
        (np.arange(n, dtype=float), np.arange(n, dtype=float)),
    ]:
        tau, p, method = kendall_tau(x, y)
        expected = kendalltau(x, y)
        assert tau == pytest.approx(expected.statistic, nan_ok=True) and p == pytest.approx(expected.pvalue, nan_ok=True)
        explicit = kendalltau(x, y, method=method)
        assert p == pytest.approx(explicit.pvalue, nan_ok=True)


def _kendall_cases(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows of every kind scipy branches on: tie-free, ties in x, ties in both, identical, reversed, nearly sorted
    (one discordant pair past 33 tokens), constant, and a NaN."""
    rows = [
        (rng.normal(size=n), rng.normal(size=n)),
        (rng.integers(0, 3, n).astype(float), rng.normal(size=n)),
        (rng.integers(0, 4, n).astype(float), rng.integers(0, 2, n).astype(float)),
        (np.arange(n, dtype=float), np.arange(n, dtype=float)),
        (np.arange(n, dtype=float), -np.arange(n, dtype=float)),
        (np.arange(n, dtype=float), np.r_[1.0, 0.0, np.arange(2, n)][:n]),
        (np.ones(n), rng.normal(size=n)),
        (np.r_[np.nan, rng.normal(size=n - 1)], rng.normal(size=n)),
    ]
    return np.stack([x for x, _ in rows]), np.stack([y for _, y in rows])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 33, 34, 60, 128])
def test_kendall_tau_batch_equals_scipy_row_by_row(n):
    from attnexp.analyses.jw.kendall import kendall_tau_batch

    x, y = _kendall_cases(n, np.random.default_rng(n))
    tau, p, exact = kendall_tau_batch(x, y)
    for row in range(len(x)):
        expected_tau, expected_p, method = kendall_tau(x[row], y[row])
        np.testing.assert_allclose(tau[row], expected_tau, rtol=1e-13, atol=0, equal_nan=True)
        np.testing.assert_allclose(p[row], expected_p, rtol=1e-12, atol=0, equal_nan=True)
        assert exact[row] == (method == "exact" and not np.isnan(expected_tau)), (n, row)


def test_kendall_per_instance_mixes_batched_and_long_vectors():
    """Instances of several lengths, some past the batched maximum, in their own order: the same table as scipy
    called per instance."""
    from attnexp.analyses.jw.kendall import BATCHED_MAX_LENGTH

    rng = np.random.default_rng(5)
    lengths = [3, 40, 3, BATCHED_MAX_LENGTH + 7, 12, 40, 1, BATCHED_MAX_LENGTH]
    columns = {
        name: [rng.integers(0, 5, n).astype(float) if k % 2 else rng.normal(size=n) for k, n in enumerate(lengths)]
        for name in ("attention", "gradient", "loo")
    }
    importance = pd.DataFrame({"instance_id": [f"i{k}" for k in range(len(lengths))], "predicted": [0, 1] * 4, **columns})
    table = kendall_tau_per_instance(importance, ["attn_grad", "grad_loo"])
    assert list(table["pair"]) == ["attn_grad"] * 8 + ["grad_loo"] * 8
    assert list(table["instance_id"]) == list(importance["instance_id"]) * 2
    for record in table.itertuples():
        left, right = {"attn_grad": ("attention", "gradient"), "grad_loo": ("gradient", "loo")}[record.pair]
        row = importance.set_index("instance_id").loc[record.instance_id]
        tau, p, method = kendall_tau(row[left], row[right])
        assert record.tau == pytest.approx(tau, rel=1e-13, nan_ok=True)
        assert record.p_value == pytest.approx(p, rel=1e-12, nan_ok=True)
        assert record.is_nan == math.isnan(tau) and (record.method == method or math.isnan(tau))


def test_kendall_tau_is_nan_for_constant_or_single_token():
    assert math.isnan(kendall_tau([1.0], [2.0])[0])
    assert math.isnan(kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])[0])


def test_kendall_summary_policies():
    rng = np.random.default_rng(3)
    importance = pd.DataFrame(
        {
            "instance_id": [f"i{k}" for k in range(40)],
            "predicted": rng.integers(0, 2, 40),
            "attention": [rng.random(int(n)).tolist() for n in rng.integers(1, 12, 40)],
        }
    )
    importance["gradient"] = [(np.asarray(a) + rng.normal(scale=0.3, size=len(a))).tolist() for a in importance["attention"]]
    taus = kendall_tau_per_instance(importance, ["attn_grad"])
    assert taus["is_nan"].any()
    omit = summarise_kendall(taus, ["neg", "pos"], "omit")
    propagate = summarise_kendall(taus, ["neg", "pos"], "propagate")
    assert list(omit["group"]) == ["Overall", "class neg", "class pos"]
    valid = taus[~taus["is_nan"]]
    overall = omit.iloc[0]
    assert overall["mean"] == pytest.approx(valid["tau"].mean())
    assert overall["std"] == pytest.approx(valid["tau"].std(ddof=0))
    assert overall["sig_frac"] == pytest.approx((valid["p_value"] <= 0.05).mean())
    assert overall["n"] == len(valid) and overall["n_nan"] == taus["is_nan"].sum()
    assert math.isnan(propagate.iloc[0]["mean"]) and propagate.iloc[0]["n"] == len(taus)
    assert propagate.iloc[0]["sig_frac"] == pytest.approx((valid["p_value"] <= 0.05).sum() / len(taus))
    assert summarise_group(taus.iloc[:0])["n"] == 0
    with pytest.raises(ValueError, match="nan_policy"):
        summarise_group(taus, "drop")


# ---------------------------------------------------------------------------------------------- permutation


def test_permutations_shuffle_only_real_positions():
    batch = collate(make_rows("bc"))
    permutations = sample_permutations(batch, 20, torch.Generator().manual_seed(0))
    for i, n in enumerate(LENGTHS):
        for p in permutations[i]:
            assert sorted(p[1 : n + 1].tolist()) == list(range(1, n + 1))
            assert p[0] == 0 and (p[n + 1 :] == torch.arange(n + 1, batch.tokens.shape[1])).all()


def test_permutation_matches_per_instance_reference(case):
    model, rows = case
    batch = collate(rows)
    permutations = sample_permutations(batch, 7, torch.Generator().manual_seed(0))
    batched = permutation_output_changes(model, batch, permutations, memory_budget_mb=1e-4)
    with torch.no_grad():
        for i in range(len(LENGTHS)):
            one = single(rows, i)
            output = model(one)
            for k in range(7):
                index = permutations[i, k, : one.tokens.shape[1]]
                changed = model.distribution(model.decode(output.encoded, output.attention[:, index], one))
                expected = tvd(changed, model.distribution(output.logits))[0]
                assert float(batched[i, k]) == pytest.approx(float(expected), abs=1e-5)


def test_identity_permutation_changes_nothing(case):
    model, rows = case
    batch = collate(rows)
    assert permutation_output_changes(model, batch, identity_permutations(batch, 3)).abs().max() < 1e-6


# ---------------------------------------------------------------------------------------------- adversary


def reference_adversary(model, one: Batch, init: torch.Tensor, settings: AdversarySettings):
    """Eq. 2 for one instance, written out candidate by candidate."""
    with torch.no_grad():
        output = model(one)
        original = model.distribution(output.logits)[0]
    mask = one.real_mask[0]
    z = init.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([z], lr=settings.lr, amsgrad=True)
    epsilon = settings.hinge_epsilon(model.config.task)
    for _ in range(settings.steps):
        alphas = [torch.softmax(z[k].masked_fill(~mask, -math.inf), -1).masked_fill(~mask, 0) for k in range(settings.candidates)]
        loss = 0
        for a in alphas:
            change = tvd(model.distribution(model.decode(output.encoded, a[None], one))[0], original)
            loss = loss - jsd(a, output.attention[0]) + settings.lam * torch.relu(change - epsilon)
        loss = loss - sum(jsd(a, b) for a in alphas for b in alphas) / settings.candidates**2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return torch.stack(
            [torch.softmax(z[k].masked_fill(~mask, -math.inf), -1).masked_fill(~mask, 0) for k in range(settings.candidates)]
        )


def test_adversary_matches_per_instance_reference(case):
    model, rows = case
    batch = collate(rows)
    settings = adversary_settings(candidates=3, steps=15)
    init = initial_logits(batch, settings, torch.Generator().manual_seed(0))
    result = adversarial_attention(model, batch, settings, init=init)
    for i in range(len(LENGTHS)):
        one = single(rows, i)
        width = one.tokens.shape[1]
        expected = reference_adversary(model, one, init[i : i + 1, :, :width][0], settings)
        torch.testing.assert_close(result.candidates[i, :, :width], expected, atol=1e-5, rtol=1e-4)


def test_adversary_reports_candidates_within_bounds(case):
    model, rows = case
    batch = collate(rows)
    result = adversarial_attention(model, batch, adversary_settings(steps=40), torch.Generator().manual_seed(1))
    emax_tvd = tvd(result.emax_output, result.original_output)
    assert (emax_tvd <= result.epsilon + 1e-7).all()
    assert ((result.emax_jsd >= 0) & (result.emax_jsd <= LN2)).all()
    assert (result.candidate_jsd <= LN2 + 1e-7).all()
    torch.testing.assert_close(result.emax_jsd, jsd(result.emax_attention, result.original_attention))
    torch.testing.assert_close(result.emax_attention.sum(-1), torch.ones(batch.size))
    assert (result.candidates * ~batch.real_mask[:, None, :]).abs().sum() == 0


def test_adversary_thresholds_follow_the_quirk():
    assert adversary_settings().report_epsilon("bc") == 0.01 and adversary_settings().report_epsilon("qa") == 0.05
    quirk = adversary_settings(code_thresholds=True)
    assert quirk.report_epsilon("bc") == quirk.report_epsilon("nli") == 0.05 and quirk.hinge_epsilon("qa") == 0.01


def _spec_jsd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """J&W spec §6.5: JSD = 1/2 KL(p||m) + 1/2 KL(q||m), m = (p + q) / 2, natural log, clamped, 1e-10 in the logs."""
    p, q = p.clamp(0, 1), q.clamp(0, 1)
    m = (p + q) / 2
    return sum(0.5 * (a * (torch.log(a + 1e-10) - torch.log(m + 1e-10))).sum() for a in (p, q))


def _spec_output_change(task: str, new: torch.Tensor, old: torch.Tensor, code_thresholds: bool) -> torch.Tensor:
    """The hinge's output change: TVD (DEFAULT); quirk: |dp| for BC, the L1 distance sum_c |d softmax| for QA/NLI."""
    if not code_thresholds:
        return 0.5 * (new - old).abs().sum()
    return (new[1] - old[1]).abs() if task == "bc" else (new - old).abs().sum()


SPEC_HINGE_EPSILON = {False: {"bc": 0.01, "qa": 0.05, "nli": 0.05}, True: {"bc": 0.01, "qa": 0.01, "nli": 0.01}}
SPEC_REPORT_EPSILON = {False: {"bc": 0.01, "qa": 0.05, "nli": 0.05}, True: {"bc": 0.05, "qa": 0.05, "nli": 0.05}}


def eq2_adversary(model, one: Batch, init: torch.Tensor, steps: int, lam: float, lr: float, code_thresholds: bool):
    """J&W Eq. 2 for one instance from the spec alone: logits on the real tokens only, one candidate at a time,
    L = sum_k [-JSD(a_k, a_hat) + lam relu(dy_k - eps)] - 1/K^2 sum_{k,k'} JSD(a_k, a_k'); then the epsilon-max
    pick among the final candidates and the original. Returns (candidates over real tokens, emax JSD)."""
    task, n = model.config.task, int(one.lengths[0]) - 2
    with torch.no_grad():
        output = model(one)
        original = model.distribution(output.logits)[0]
    hat = output.attention[0, 1 : n + 1]
    z = init[:, 1 : n + 1].clone().requires_grad_(True)
    optimizer = torch.optim.Adam([z], lr=lr, amsgrad=True)

    def decoded(alpha):  # the frozen model's output distribution for attention alpha over the real tokens
        full = torch.zeros(one.tokens.shape[1], dtype=alpha.dtype)
        full[1 : n + 1] = alpha
        return model.distribution(model.decode(output.encoded, full[None], one))[0]

    for _ in range(steps):
        alphas = torch.softmax(z, -1)
        loss = 0
        for alpha in alphas:
            change = _spec_output_change(task, decoded(alpha), original, code_thresholds)
            loss = loss - _spec_jsd(alpha, hat) + lam * torch.relu(change - SPEC_HINGE_EPSILON[code_thresholds][task])
        loss = loss - sum(_spec_jsd(a, b) for a in alphas for b in alphas) / len(alphas) ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        alphas = torch.softmax(z, -1)
        pool = [(_spec_jsd(a, hat), 0.5 * (decoded(a) - original).abs().sum()) for a in alphas] + [(0.0, 0.0)]
        emax = max(float(j) for j, change in pool if change <= SPEC_REPORT_EPSILON[code_thresholds][task])
    return alphas, emax


@pytest.mark.parametrize(
    "task, encoder, attention, code_thresholds",
    [("bc", "lstm", "tanh", False), ("bc", "lstm", "tanh", True), ("qa", "cnn", "tanh", True), ("nli", "average", "dot", False)],
    ids=["bc-paper", "bc-quirk", "qa-quirk-2tvd", "nli-paper"],
)
def test_adversary_matches_eq2_written_from_the_spec(task, encoder, attention, code_thresholds):
    """Pins the definition, not the implementation: the paper's thresholds (TVD, 0.01 BC / 0.05 QA/NLI) and the
    authors' (hinge 0.01 on |dp| or on 2 TVD for QA/NLI, report 0.05), written out from spec §6.5."""
    model, rows = make_model(task, encoder, attention).double(), make_rows(task)
    batch = collate(rows)
    settings = adversary_settings(candidates=3, steps=8, code_thresholds=code_thresholds)
    init = initial_logits(batch, settings, torch.Generator().manual_seed(2)).double()
    result = adversarial_attention(model, batch, settings, init=init)
    assert result.epsilon == SPEC_REPORT_EPSILON[code_thresholds][task]
    for i, n in enumerate(LENGTHS):
        one = single(rows, i)
        width = one.tokens.shape[1]
        expected, emax = eq2_adversary(model, one, init[i, :, :width], settings.steps, 500.0, 0.01, code_thresholds)
        torch.testing.assert_close(result.candidates[i, :, 1 : n + 1], expected, atol=1e-6, rtol=1e-5)
        assert float(result.emax_jsd[i]) == pytest.approx(emax, abs=1e-7)


@pytest.mark.parametrize(
    "task, encoder, code_thresholds", [("bc", "lstm", False), ("qa", "cnn", True), ("nli", "average", False)]
)
def test_adversarial_gradient_equals_autograd_of_eq2(task, encoder, code_thresholds):
    """The step's hand-written divergence gradients plus autograd through the decoder give autograd's gradient of
    the whole loss (up to the EPS terms it drops, < 4e-10 here), from starts far from and near uniform."""
    from attnexp.analyses.jw.adversary import adversarial_gradient, adversarial_loss, pair_halves

    model, rows = make_model(task, encoder, "tanh").double(), make_rows(task)
    batch = collate(rows)
    settings = adversary_settings(candidates=4, code_thresholds=code_thresholds)
    with torch.no_grad():
        output = model(batch)
        original = model.distribution(output.logits)
        decode = model.decoder(output.encoded, batch)
    halves = pair_halves(settings.candidates, torch.float64)
    for scale in (3.0, 0.01):
        logits = (scale * initial_logits(batch, settings, torch.Generator().manual_seed(3)).double()).requires_grad_(True)
        loss = adversarial_loss(model, output.encoded, batch, logits, output.attention, original, settings, halves=halves)
        (expected,) = torch.autograd.grad(loss.sum(), [logits])
        actual = adversarial_gradient(model, decode, batch, logits.detach(), output.attention, original, settings, halves)
        torch.testing.assert_close(actual, expected, atol=1e-9, rtol=1e-7)
        masked = logits.detach().masked_fill(~batch.real_mask[:, None, :], float("-inf"))
        again = adversarial_gradient(model, decode, batch, masked, output.attention, original, settings, halves, masked=True)
        torch.testing.assert_close(again, expected, atol=1e-9, rtol=1e-7)
        assert (expected * ~batch.real_mask[:, None, :]).abs().sum() == 0


def test_adversary_table_does_not_depend_on_the_memory_budget():
    """Random starts are drawn per instance (seeded by seed and instance id): one chunk for all instances and one
    instance per chunk give the same numbers; the starts differ between seeds and between instances."""
    from dataclasses import replace

    from attnexp.analyses.jw.instances import adversary_rows_per_chunk, adversary_table
    from tests.factories import validated_config

    model, rows = make_model("qa", "cnn", "tanh"), make_rows("qa")
    rows["length"] = rows["tokens"].map(len) - 2
    settings = replace(analysis_settings(validated_config(), batch_size=8), adversary=adversary_settings(candidates=3, steps=10))
    whole, split = replace(settings, memory_budget_mb=256.0), replace(settings, memory_budget_mb=1e-6)
    assert adversary_rows_per_chunk(rows, whole) >= len(rows) and adversary_rows_per_chunk(rows, split) == 1
    batch = collate(rows)
    starts = initial_logits(batch, settings.adversary, seed=7)
    for i in range(len(rows)):  # exactly the same start for an instance alone as in the whole batch
        alone = initial_logits(single(rows, i), settings.adversary, seed=7)
        assert torch.equal(alone[0], starts[i, :, : alone.shape[-1]])
    one_chunk = adversary_table(model, rows, whole, seed=7)
    # equal up to float rounding (kernels for different batch shapes round differently)
    pd.testing.assert_frame_equal(adversary_table(model, rows, split, seed=7), one_chunk, check_exact=False, rtol=1e-5, atol=1e-6)
    other_seed = adversary_table(model, rows, whole, seed=8)
    assert not np.allclose(np.concatenate(other_seed["candidate_jsd"]), np.concatenate(one_chunk["candidate_jsd"]))


# ---------------------------------------------------------------------------------------------- rationale


def test_rationale_measures():
    scores = padded_rows([[0.1, 0.9, 0.2, 0.8], [0.9, 0.1, 0.8, 0.2], [0.5, 0.5, 0.1]], fill=np.nan)
    cues = cue_mask([[1, 3], [1, 3], [1]], scores.shape[1])
    np.testing.assert_array_equal(precision_at_k(scores, cues), [1.0, 0.0, 0.0])  # a tie: the earlier position first
    frame = pd.DataFrame({"length": [4], "rationale": [[]], "attention": [[0.1, 0.2, 0.3, 0.4]]})
    assert rationale_recovery(frame, ["attention"]).empty


def test_rationale_scores_equal_a_per_instance_reference():
    """Every instance at once over padded scores = one instance at a time with scikit-learn's ROC-AUC and a stable
    sort (ties among the scores, ragged lengths, an instance whose every token is a cue)."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 12, size=40)
    vectors = [rng.integers(0, 4, size=n) / 4 for n in lengths]  # few values: many ties
    cues = [np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False)) for n in lengths]
    scores, mask = padded_rows(vectors, fill=np.nan), cue_mask(cues, int(lengths.max()))
    expected_precision = [np.isin(np.argsort(-v, kind="stable")[: len(c)], c).mean() for v, c in zip(vectors, cues, strict=True)]
    expected_auc = [
        roc_auc_score(np.isin(np.arange(len(v)), c), v) if len(c) < len(v) else np.nan for v, c in zip(vectors, cues, strict=True)
    ]
    assert any(len(c) == len(v) for v, c in zip(vectors, cues, strict=True))
    np.testing.assert_allclose(precision_at_k(scores, mask), expected_precision)
    np.testing.assert_allclose(cue_auc(scores, mask), expected_auc)
    frame = pd.DataFrame({"length": lengths, "rationale": [list(c) for c in cues], "attention": [list(v) for v in vectors]})
    row = rationale_recovery(frame, ["attention"]).iloc[0]
    assert row["auc"] == pytest.approx(np.nanmean(expected_auc))
    assert row["precision_at_k"] == pytest.approx(np.mean(expected_precision))


def test_mean_pairwise_jsd_equals_all_pairs_of_jsd():
    from attnexp.analyses.jw.adversary import mean_pairwise_jsd

    attention = torch.softmax(3 * torch.randn(4, 5, 9, generator=torch.Generator().manual_seed(0)), -1)
    attention[0, :, 6:] = 0
    attention[0] /= attention[0].sum(-1, keepdim=True)
    expected = jsd(attention[:, :, None, :], attention[:, None, :, :]).mean(dim=(-1, -2))
    torch.testing.assert_close(mean_pairwise_jsd(attention), expected, atol=1e-6, rtol=1e-5)
