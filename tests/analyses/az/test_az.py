"""Abnar & Zuidema stage: Transformer, rollout, flow, importance, Spearman, agreement generator."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import spearmanr

from attnexp.analyses.az.flow import attention_flow, batch_flow
from attnexp.analyses.az.importance import blank_out, input_gradients
from attnexp.analyses.az.rollout import head_average, raw_relevance, residual_augment, rollout, rollout_relevance
from attnexp.analyses.correlation import spearman_ragged, spearman_rows
from attnexp.data.batching import collate
from attnexp.datasets.generated.agreement import CLASSES, NOUNS, PLACES, agreement_frame, plural, read_linzen_tsv
from attnexp.models.checkpoint import load_model, save_model
from attnexp.models.transformer import build_transformer

torch.set_num_threads(1)


def random_maps(rng, batch=2, layers=3, heads=2, n=6):
    return torch.softmax(torch.as_tensor(rng.normal(size=(batch, layers, heads, n, n)) * 2), dim=-1)


def tiny_rows(task="bc", n=4, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 9, size=n)
    rows = {
        "instance_id": [f"x{i}" for i in range(n)],
        "tokens": [[2, *rng.integers(4, 30, k), 3] for k in lengths],
        "label": rng.integers(0, 2 if task == "bc" else 3, size=n),
        "length": lengths,
    }
    if task != "bc":
        rows["question"] = [[2, *rng.integers(4, 30, 3), 3] for _ in range(n)]
    return pd.DataFrame(rows)


def tiny_model(task="bc", seed=0, attention="self"):
    torch.manual_seed(seed)
    meta = {"vocab": [str(i) for i in range(30)], "classes": ["a", "b"] if task == "bc" else ["a", "b", "c"], "task": task}
    return build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=16, attention=attention).eval()


def reference_flow_graph(attention: np.ndarray) -> nx.DiGraph:
    """A&Z §3.5 from the definition: head-averaged attention W_k [L, n, n], capacities (W_k + I) / 2 with rows
    renormalised, one edge from node (k, i) to node (k-1, j) per layer k = 1 .. L, named by (layer, position)."""
    graph = nx.DiGraph()
    layers, n, _ = attention.shape
    for k in range(1, layers + 1):
        capacity = attention[k - 1] + np.eye(n)
        capacity = capacity / capacity.sum(axis=1, keepdims=True)
        for i in range(n):
            for j in range(n):
                graph.add_edge((k, i), (k - 1, j), capacity=float(capacity[i, j]))
    return graph


def test_rollout_of_identity_attention_is_identity():
    maps = torch.eye(5).expand(1, 4, 3, 5, 5)
    products = rollout(residual_augment(head_average(maps)))
    assert torch.allclose(products, torch.eye(5).expand(1, 4, 5, 5))


def test_rollout_rows_sum_to_one_and_layer_one_matches_flow():
    rng = np.random.default_rng(1)
    maps = random_maps(rng)
    lengths = torch.tensor([6, 6])
    augmented = residual_augment(head_average(maps))
    assert torch.allclose(rollout(augmented).sum(-1), torch.ones(2, 3, 6, dtype=maps.dtype))
    roll = rollout_relevance(maps, lengths)
    flow, _ = batch_flow(augmented.numpy(), lengths.numpy(), progress=False)
    assert np.allclose(flow.sum(-1), 1)
    assert np.allclose(roll[:, 0].numpy(), augmented[:, 0, 0].numpy())
    assert np.allclose(flow[:, 0], augmented[:, 0, 0].numpy(), atol=1e-5)


def test_relevance_ignores_padding():
    rng = np.random.default_rng(2)
    maps = random_maps(rng, batch=1, n=5)
    padded = torch.zeros(1, 3, 2, 7, 7, dtype=maps.dtype)
    padded[..., :5, :5] = maps
    padded[..., 5:, :5] = 0.2
    for fn in (raw_relevance, rollout_relevance):
        assert torch.allclose(fn(padded, torch.tensor([5]))[..., :5], fn(maps, torch.tensor([5])))
        assert fn(padded, torch.tensor([5]))[..., 5:].abs().max() == 0


@pytest.mark.parametrize("seed", range(4))
def test_flow_equals_networkx_max_flow(seed):
    rng = np.random.default_rng(seed)
    layers, n = int(rng.integers(1, 4)), int(rng.integers(2, 9))
    maps = random_maps(rng, 1, layers, 2, n)
    augmented = residual_augment(head_average(maps))[0].numpy()
    query = int(rng.integers(n))
    ours = attention_flow(augmented, query=query, normalise=False)
    graph = reference_flow_graph(maps[0].mean(dim=1).numpy())
    reference = np.array(
        [[nx.maximum_flow_value(graph, (layer, query), (0, j)) for j in range(n)] for layer in range(1, layers + 1)]
    )
    assert np.abs(ours - reference).max() < 1e-5
    assert ours.min() >= 0 and ours.max() <= 1 + 1e-6
    assert np.abs(attention_flow(augmented, query=query, solver="networkx") - attention_flow(augmented, query=query)).max() < 1e-5


def test_batched_flow_equals_per_example_flow():
    rng = np.random.default_rng(6)
    lengths = np.array([5, 3, 6, 4])
    augmented = np.zeros((4, 3, 6, 6))
    for b, n in enumerate(lengths):
        augmented[b, :, :n, :n] = residual_augment(head_average(random_maps(rng, 1, 3, 2, int(n))))[0].numpy()
    for max_problems in (1, 30, 10_000):
        flows, seconds = batch_flow(augmented, lengths, progress=False, max_problems=max_problems)
        assert (seconds > 0).all()
        for b, n in enumerate(lengths):
            assert np.allclose(flows[b, :, :n], attention_flow(augmented[b, :, :n, :n]))
            assert flows[b, :, n:].max(initial=0) == 0
    rows, _ = batch_flow(augmented, lengths, row="max_over_rows", progress=False)
    n = lengths[0]
    expected = np.max([attention_flow(augmented[0, :, :n, :n], query=q) for q in range(n)], axis=0)
    assert np.allclose(rows[0, :, :n], expected / expected.sum(-1, keepdims=True))


def test_flow_is_permutation_equivariant():
    rng = np.random.default_rng(5)
    augmented = residual_augment(head_average(random_maps(rng, 1, 3, 2, 6)))[0].numpy()
    perm = rng.permutation(6)
    permuted = augmented[:, perm][:, :, perm]
    query = int(np.nonzero(perm == 0)[0][0])
    assert np.allclose(attention_flow(permuted, query=query), attention_flow(augmented)[:, perm], atol=1e-5)


def test_spearman_equals_scipy_with_ties_and_constants():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, size=(20, 7)).astype(float), rng.normal(size=(20, 7))
    a[0] = 1.0
    ours = spearman_rows(a, b)
    expected = np.array([spearmanr(x, y).statistic for x, y in zip(a, b, strict=True)])
    assert np.isnan(ours[0]) and np.isnan(expected[0])
    assert np.allclose(ours[1:], expected[1:])
    assert np.allclose(spearman_rows(b, b), 1)
    starts, stops = np.zeros(20, dtype=int), rng.integers(3, 8, size=20)
    ragged = spearman_ragged(b, a, starts, stops)
    for i in range(1, 20):
        assert np.isclose(ragged[i], spearmanr(b[i, : stops[i]], a[i, : stops[i]]).statistic, equal_nan=True)


@pytest.mark.parametrize("task", ["bc", "nli"])
def test_transformer_interface_and_exact_decode(task, tmp_path):
    standard, batch = tiny_model(task), collate(tiny_rows(task))
    reading = standard(batch).attention
    assert torch.allclose(reading.sum(-1), torch.ones(batch.size)) and reading.masked_select(~batch.real_mask).abs().max() == 0
    with pytest.raises(ValueError, match="tiedcls"):
        standard.decode(standard.encode(batch), reading, batch)
    model = tiny_model(task, attention="tiedcls")
    out = model(batch)
    assert torch.allclose(out.attention.sum(-1), torch.ones(batch.size))
    assert out.attention.masked_select(~batch.real_mask).abs().max() == 0
    swapped = torch.stack([out.attention, out.attention.flip(-1) * batch.real_mask], dim=1)
    assert torch.allclose(model.decode(out.encoded, swapped, batch)[:, 0], out.logits, atol=1e-6)
    maps = out.encoded.maps
    assert maps.shape == (batch.size, 2, 2, batch.tokens.shape[1], batch.tokens.shape[1])
    assert torch.allclose(maps.sum(-1)[:, :, :, 0], torch.ones(batch.size, 2, 2))
    save_model(model, tmp_path / "m.pt")
    assert torch.allclose(load_model(tmp_path / "m.pt")(batch).logits, out.logits)


def test_transformer_ignores_padding():
    model, rows = tiny_model(), tiny_rows()
    alone = torch.cat([model(collate(rows.iloc[[i]])).logits for i in range(len(rows))])
    assert torch.allclose(model(collate(rows, extra_padding=3)).logits, alone, atol=1e-5)


def test_blank_out_and_gradients_match_per_example_reference():
    model, rows = tiny_model(), tiny_rows()
    batch = collate(rows)
    blank = blank_out(model, batch)
    gradients = input_gradients(model, batch)
    assert set(gradients) == {"grad_x_input", "grad_l2"}  # no gradient-only form on the pre-LN Transformer
    gxi, l2 = gradients["grad_x_input"], gradients["grad_l2"]
    for i in range(len(rows)):
        tokens = list(rows["tokens"].iloc[i])
        single = collate(rows.iloc[[i]])
        p = model.distribution(model(single).logits)[0, rows["label"].iloc[i]]
        for j in range(len(tokens)):
            variant = rows.iloc[[i]].assign(tokens=[[*tokens[:j], 1, *tokens[j + 1 :]]])
            q = model.distribution(model(collate(variant)).logits)[0, rows["label"].iloc[i]]
            assert torch.isclose(blank[i, j], (p - q).abs(), atol=1e-6)
        embedded = model.embed(single.tokens).detach().requires_grad_(True)
        prob = model.distribution(model.logits(single, embedded))[0, rows["label"].iloc[i]]
        prob.backward()
        assert torch.allclose(gxi[i, : len(tokens)], (embedded.grad[0] * embedded[0]).sum(-1).abs(), atol=1e-6)
        assert torch.allclose(l2[i, : len(tokens)], embedded.grad[0].norm(dim=-1), atol=1e-6)
    assert blank.masked_select(~batch.padding_mask).abs().max() == 0
    assert torch.allclose(blank_out(model, batch, memory_budget_mb=0.001), blank, atol=1e-6)


def test_agreement_labels_are_correct_by_construction():
    frame = agreement_frame(7, {"train": 300, "dev": 10, "test": 10})
    singular, plurals = set(NOUNS + PLACES), {plural(n) for n in NOUNS + PLACES}
    for row in frame.itertuples():
        words = row.text.split()
        subject = words[row.subject]
        assert subject in (plurals if row.label == 1 else singular)
        assert subject.rstrip("s") in NOUNS or subject in ("child", "children")
        assert str(row.subject) == row.rationale
    assert 0.3 < frame["label"].mean() < 0.7 and (frame["n_attractors"] > 0).mean() > 0.3
    assert len(CLASSES) == 2
    assert [plural(w) for w in ("city", "boy", "child", "dog")] == ["cities", "boys", "children", "dogs"]


def test_linzen_reader_cuts_before_the_verb(tmp_path):
    path = tmp_path / "agr.tsv"
    pd.DataFrame(
        {
            "sentence": ["the keys to the cabinet are here", "the dog runs"],
            "verb_index": [6, 3],
            "subj_index": [2, 2],
            "verb_pos": ["VBP", "VBZ"],
            "n_diff_intervening": [1, 0],
        }
    ).to_csv(path, sep="\t", index=False)
    frame = read_linzen_tsv(path)
    assert list(frame["text"]) == ["the keys to the cabinet", "the dog"]
    assert list(frame["label"]) == [1, 0] and list(frame["subject"]) == [1, 1]


@pytest.mark.parametrize("task", ["bc", "qa"])
def test_transformer_trains_with_the_shared_training_loop(task):
    from attnexp.models.train import fit
    from tests.factories import train_settings

    rows = pd.concat(
        [tiny_rows(task, 24, seed=s).assign(split=split) for s, split in ((0, "train"), (1, "dev"), (2, "test"))],
        ignore_index=True,
    )
    rows["instance_id"] = [f"x{i}" for i in range(len(rows))]
    model = tiny_model(task)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = fit(model, rows, train_settings(2, 8, seed=0), progress=lambda _: None)
    assert len(result.history) == 2 and 0 <= result.test_metrics["accuracy"] <= 1
    assert any(not torch.equal(before[k], v) for k, v in result.model.state_dict().items())


def test_config_az_defaults_and_errors():
    from attnexp.config import PACKAGED_SCHEMA, ConfigError, validate_config

    schema = PACKAGED_SCHEMA
    base = {"datasets": ["syn_sentiment"], "encoders": ["lstm"], "attentions": ["tanh"], "seeds": [0]}
    config = validate_config(dict(base), schema)
    assert config["az"]["flow_solver"] == "scipy" and config["az"]["model"]["n_layers"] == 6
    with pytest.raises(ConfigError, match="relevance_row"):
        validate_config({**base, "az": {"relevance_row": "mean"}}, schema)


@pytest.mark.slow
def test_az_stage_end_to_end(tmp_path):
    from attnexp import paths
    from tests.workflow.helpers import snakemake, tiny_config

    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    result = snakemake(tmp_path, "az", config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    combined = paths.az_combined_files()
    summary = pd.read_csv(tmp_path / combined["summary"])
    assert set(summary["method"]) == {"raw", "rollout", "flow"} and summary["layer"].max() == 2
    assert summary["n"].eq(20).all() and summary["mean"].between(-1, 1).all() and summary["n_seeds"].eq(1).all()
    recovery = pd.read_csv(tmp_path / combined["recovery"])
    assert recovery["top1"].between(0, 1).all()
    for stem in ("correlations", "subject_recovery", "importance_recovery"):
        for path in paths.table_files("az", stem).values():
            assert (tmp_path / path).stat().st_size > 0
    assert "L2" in (tmp_path / paths.table_files("az", "correlations")["md"]).read_text()
    standard = paths.model_files("syn_agreement", "transformer", "self", 0)
    assert "dev_accuracy" in pd.read_csv(tmp_path / standard["history"]).columns  # the spec's recipe
    assert (tmp_path / paths.analysis_files("syn_agreement", "transformer", "tiedcls", 0)["kendall_summary"]).exists()
    assert not (tmp_path / paths.analysis_files("syn_agreement", "transformer", "self", 0)["kendall_summary"]).exists()
    for stem in ("syn_agreement/correlation_by_layer", "syn_agreement/cls_maps_seed0"):
        for path in paths.figure_files("az", stem).values():
            assert (tmp_path / path).stat().st_size > 0


def test_subject_recovery_matches_a_per_example_reference():
    from attnexp.analyses.az.measures import subject_recovery

    rng = np.random.default_rng(4)
    lengths = rng.integers(4, 9, size=12)
    relevance = pd.DataFrame(
        {
            "length": lengths,
            "raw": [[list(rng.random(n))] for n in lengths],
            "rollout": [[list(rng.random(n))] for n in lengths],
            "flow": [[list(rng.random(n))] for n in lengths],
            **{k: [list(rng.random(n)) for n in lengths] for k in ("blankout", "grad", "grad_x_input")},
        }
    )
    truth = pd.Series(  # n positions: [CLS] + the words, no closing marker
        [sorted(rng.choice(np.arange(1, n), size=int(rng.integers(1, 3)), replace=False).tolist()) for n in lengths]
    )
    table = subject_recovery(relevance, truth, "t").set_index(["method", "layer"])
    for method, layer, column in (("raw", 1, lambda r: r[0]), ("blankout", 0, lambda r: r)):
        top1, rr = [], []
        for i, n in enumerate(lengths):
            values = np.asarray(column(relevance[method].iloc[i]))[1:n]
            order = np.argsort(-values)
            ranks = [int(np.nonzero(order == p - 1)[0][0]) + 1 for p in truth[i]]
            top1.append(min(ranks) == 1)
            rr.append(1 / min(ranks))
        assert np.isclose(table.loc[(method, layer), "top1"], np.mean(top1))
        assert np.isclose(table.loc[(method, layer), "mrr"], np.mean(rr))


@pytest.mark.parametrize("task", ["bc", "nli"])
def test_jw_analyses_run_on_the_transformer(task):
    from attnexp.analyses.jw.adversary import adversarial_attention
    from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out
    from attnexp.analyses.jw.permutation import identity_permutations, permutation_output_changes, sample_permutations
    from tests.factories import adversary_settings

    model, batch = tiny_model(task, attention="tiedcls"), collate(tiny_rows(task))
    real = batch.real_mask
    for scores in (gradient_importance(model, batch), leave_one_out(model, batch), integrated_gradients(model, batch, steps=4)):
        assert scores.shape == batch.tokens.shape and torch.isfinite(scores).all()
        assert scores.masked_select(~real).abs().max() == 0
    assert permutation_output_changes(model, batch, identity_permutations(batch)).abs().max() < 1e-6
    permutations = sample_permutations(batch, 5, torch.Generator().manual_seed(0))
    assert permutation_output_changes(model, batch, permutations).shape == (4, 5)
    result = adversarial_attention(model, batch, adversary_settings(candidates=2, steps=3), torch.Generator().manual_seed(0))
    assert result.emax_attention.shape == batch.tokens.shape and torch.isfinite(result.emax_jsd).all()
    assert torch.allclose(result.emax_attention.sum(-1), torch.ones(len(batch.lengths)), atol=1e-5)
    # the chosen attention, swapped into the model, gives the reported output, within epsilon of the original
    with torch.no_grad():
        swapped = model.distribution(model.decode(model.encode(batch), result.emax_attention, batch))
    assert torch.allclose(swapped, result.emax_output, atol=1e-5)
    assert (0.5 * (result.emax_output - result.original_output).abs().sum(-1) <= result.epsilon + 1e-6).all()
    allowed = result.candidate_jsd.masked_fill(result.candidate_tvd > result.epsilon, 0.0)
    assert (result.emax_jsd >= allowed.max(dim=1).values - 1e-6).all()


def test_dense_rank_quirk_agrees_without_ties_only():
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(5, 9)), rng.normal(size=(5, 9))
    assert np.allclose(spearman_rows(a, b, "dense_rank_formula"), spearman_rows(a, b))
    tied = np.array([[0, 0, 0, 0, 1.0, 2, 3, 4]])
    other = np.arange(8.0)[None, :]
    assert not np.isclose(spearman_rows(tied, other, "dense_rank_formula"), spearman_rows(tied, other)).any()


def test_summary_nan_policy_and_cumulative_quirk():
    from attnexp.analyses.az.measures import summarise_correlations

    table = pd.DataFrame(
        {
            "example_id": ["a", "b", "a", "b"],
            "task": "t",
            "layer": [1, 1, 2, 2],
            "method": "raw",
            "importance": "grad",
            "rho": [0.5, np.nan, 1.0, -0.5],
            "n": 5,
        }
    )
    table["is_nan"] = table["rho"].isna()
    options = {"nan_policy": "zero", "cumulative_layer_lists": False}
    zero = summarise_correlations(table, **options).set_index("layer")
    assert np.isclose(zero.loc[1, "mean"], 0.25) and zero.loc[1, "n_nan"] == 1 and zero.loc[1, "n"] == 2
    assert np.isclose(zero.loc[1, "std"], np.std([0.5, 0.0]))
    omit = summarise_correlations(table, **{**options, "nan_policy": "omit"}).set_index("layer")
    assert np.isclose(omit.loc[1, "mean"], 0.5) and omit.loc[1, "n"] == 1
    pooled = summarise_correlations(table, **{**options, "cumulative_layer_lists": True}).set_index("layer")
    assert np.isclose(pooled.loc[2, "mean"], np.mean([0.5, 0.0, 1.0, -0.5]))


def test_same_seed_gives_the_same_transformer_whatever_ran_before(tmp_path):
    """The seed fixes the initial weights too (regression: the model was once built before seeding)."""
    from attnexp.data.preprocess import write_preprocessed
    from attnexp.pipeline.settings import TransformerSettings
    from attnexp.pipeline.train import run_train_transformer
    from tests.factories import train_settings

    rows = pd.concat(
        [tiny_rows("bc", 24, seed=s).assign(split=split) for s, split in ((0, "train"), (1, "dev"), (2, "test"))],
        ignore_index=True,
    )
    rows["instance_id"] = [f"x{i}" for i in range(len(rows))]
    meta = {"vocab": [str(i) for i in range(30)], "classes": ["a", "b"], "task": "bc", "options": {}, "comparable": False}
    write_preprocessed(rows, meta, tmp_path / "instances.parquet", tmp_path / "meta.json")

    def run(name, disturb):
        torch.manual_seed(disturb)
        out = {
            k: tmp_path / name / f"{k}.{ext}"
            for k, ext in (("model", "pt"), ("history", "csv"), ("config", "yaml"), ("metrics", "json"))
        }
        options = {"n_layers": 2, "n_heads": 2, "width": 16, "dropout": 0.1, "max_length": 16}
        settings = TransformerSettings(
            dataset="tiny",
            attention="self",
            seed=3,
            model=options,
            recipe="spec",
            patience=3,
            fit=train_settings(2, 8, seed=3, paper="az", learning_rate=1e-3),
        )
        inputs = {"instances": tmp_path / "instances.parquet", "meta": tmp_path / "meta.json"}
        run_train_transformer(inputs=inputs, outputs=out, settings=settings)
        return torch.load(out["model"], weights_only=True)["state_dict"]

    first, second = run("a", 0), run("b", 12345)
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)


def _relevance(model, rows, rollout_residual=True):
    from attnexp.analyses.az.measures import relevance_and_importance

    options = {"batch_size": 3, "relevance_row": "cls", "flow_solver": "scipy", "score": "prob_gold"}
    return relevance_and_importance(model, rows, rollout_residual=rollout_residual, progress=lambda _: None, **options)


def test_az_vectors_cover_cls_and_the_words_without_a_closing_marker():
    """A&Z §2.1: the input is [CLS] + the words (up to the verb); no position for a trailing end marker."""
    rows = tiny_rows(n=5)
    relevance = _relevance(tiny_model(), rows)
    words = rows["tokens"].map(lambda t: t[1:-1])
    assert relevance["length"].tolist() == [len(w) + 1 for w in words]
    assert relevance["tokens"].tolist() == [[2, *w] for w in words]
    assert "grad" not in relevance  # identically zero on the pre-LN Transformer: not stored
    for column in ("blankout", "grad_x_input", "grad_l2"):
        assert relevance[column].map(len).tolist() == relevance["length"].tolist()
    for method in ("raw", "rollout", "flow"):
        assert all(len(layer) == n for r, n in zip(relevance[method], relevance["length"], strict=True) for layer in r)
        assert all(np.isclose(sum(layer), 1) for r in relevance[method] for layer in r)


def test_rollout_residual_ablation_changes_rollout_but_never_flow():
    model, rows = tiny_model(), tiny_rows(n=3)
    with_residual, without = _relevance(model, rows, True), _relevance(model, rows, False)

    def values(frame, method):
        return np.concatenate([np.asarray(layer) for r in frame[method] for layer in r])

    assert np.allclose(values(with_residual, "flow"), values(without, "flow"))
    assert np.allclose(values(with_residual, "raw"), values(without, "raw"))
    assert not np.allclose(values(with_residual, "rollout"), values(without, "rollout"))


@pytest.mark.parametrize("attention", ["self", "tiedcls"])
def test_pre_ln_transformer_ignores_a_shift_of_one_input_vector_so_grad_is_refused(attention):
    """A&Z §4: every path from e_j passes a LayerNorm, so s(e_j + c·1) = s(e_j) and Σ_d ∂s/∂e_jd = 0 exactly. The
    measure the tables report instead (grad_x_input) is far above the rounding noise that `grad` holds."""
    from attnexp.analyses.az import gradient_measure

    torch.manual_seed(0)
    meta = {"vocab": [str(i) for i in range(30)], "classes": ["a", "b"], "task": "bc"}
    model = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=16, attention=attention)
    model = model.double().eval()
    for parameter in model.parameters():  # trained-looking weights: not the near-identity of the 0.02 init
        parameter.data.normal_(0, 0.3)
    batch = collate(tiny_rows())
    embedded = model.embed(batch.tokens).detach()
    shifted = embedded.clone()
    shifted[:, 1] += 3.0
    base = model.logits(batch, embedded)
    assert (base - model.logits(batch, shifted)).abs().max() < 1e-10  # the shift by 3·1 changes nothing
    assert (base - model.logits(batch, embedded * 1.5)).abs().max() > 1e-3  # while a scaling does

    embedded.requires_grad_(True)
    score = model.distribution(model.logits(batch, embedded)).gather(-1, batch.labels[:, None]).sum()
    (grad,) = torch.autograd.grad(score, embedded)
    real = torch.arange(batch.tokens.shape[1])[None, :] < model.input_lengths(batch)[:, None]  # [CLS] + the words
    assert grad.norm(dim=-1)[real].min() > 1e-6  # the score does depend on every input vector ...
    assert grad.sum(-1).abs()[real].max() < 1e-12 * grad.abs().max()  # ... but not on its component along 1

    measured = input_gradients(model.float(), batch)
    assert "grad" not in measured and model.input_shift_invariant
    eps_scale = torch.finfo(torch.float32).eps * grad.abs().max().item()
    assert measured["grad_x_input"][real].median() > 1e3 * eps_scale  # many orders above rounding noise
    assert gradient_measure("auto", model.input_shift_invariant) == "grad_x_input"
    with pytest.raises(ValueError, match="identically zero"):
        gradient_measure("grad", model.input_shift_invariant)
