"""J&W's tables equal an independent, per-instance aggregation of the analysis tables; the shared writer writes
CSV + Markdown + LaTeX with rounded numbers."""

import numpy as np
import pandas as pd
import pytest

from attnexp import paths
from attnexp.report import tables as writer
from attnexp.report.jw import tables
from tests.fakes import fake_analyses, fake_instances, fake_meta

CLASSES = {"bc_set": ["neg", "pos"], "qa_set": [f"a{i}" for i in range(5)]}


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(3)
    rows = []
    for dataset, classes in CLASSES.items():
        instances = fake_instances(25, len(classes), rng)
        for encoder in ("lstm", "average"):
            for seed in (0, 1, 2):
                kendall = fake_analyses(instances, len(classes), rng)["kendall"]
                rows.append({"dataset": dataset, "encoder": encoder, "attention": "tanh", "seed": seed, "kendall": kendall})
    return rows


def reference_group(taus: list[tuple[float, float, bool]], nan_policy: str) -> dict:
    kept = [(t, p) for t, p, undefined in taus if not (undefined and nan_policy == "omit")]
    values = [t for t, _ in kept]
    n = len(kept)
    return {
        "mean": sum(values) / n if n else np.nan,
        "std": float(np.sqrt(sum((v - sum(values) / n) ** 2 for v in values) / n)) if n else np.nan,
        "sig_frac": sum(1 for _, p in kept if p <= 0.05) / n if n else np.nan,
        "n": n,
        "n_nan": sum(1 for *_, undefined in taus if undefined),
    }


@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
def test_table2_matches_a_per_instance_loop(models, nan_policy):
    table = (
        tables.table2(models, CLASSES, nan_policy, {"n_resamples": 200})
        .set_index(["dataset", "encoder", "attention", "pair", "group"])
        .sort_index()
    )
    for dataset, classes in CLASSES.items():
        for encoder in ("lstm", "average"):
            per_seed = {}
            for model in (m for m in models if m["dataset"] == dataset and m["encoder"] == encoder):
                groups = {}
                for row in model["kendall"].itertuples():
                    per_class = model["kendall"]["predicted"].nunique() < 4
                    names = ["Overall"] + ([f"class {classes[row.predicted]}"] if per_class else [])
                    for name in names:
                        groups.setdefault((row.pair, name), []).append((row.tau, row.p_value, row.is_nan))
                for key, taus in groups.items():
                    per_seed.setdefault(key, []).append(reference_group(taus, nan_policy))
            assert len(per_seed) == len(table.loc[(dataset, encoder, "tanh")])
            for (pair, group), seeds in per_seed.items():
                got = table.loc[(dataset, encoder, "tanh", pair, group)]
                for column in ("mean", "std", "sig_frac"):
                    expected = np.mean([s[column] for s in seeds])
                    assert got[column] == pytest.approx(expected, nan_ok=True), (pair, group, column)
                assert got["n"] == sum(s["n"] for s in seeds)
                assert got["n_nan"] == sum(s["n_nan"] for s in seeds)
                assert got["n_seeds"] == 3
                if np.isfinite(got["mean"]):
                    assert got["ci_low"] <= got["mean"] <= got["ci_high"]


def test_per_class_groups_only_below_four_classes(models):
    table = tables.table2(models, CLASSES, "omit", {"n_resamples": 200})
    assert set(table.loc[table["dataset"] == "qa_set", "group"]) == {"Overall"}
    assert set(table.loc[table["dataset"] == "bc_set", "group"]) == {"Overall", "class neg", "class pos"}


def test_per_class_groups_follow_the_number_of_distinct_predicted_classes(models):
    """J&W §6.3 (authors: `np.unique(yhat)`): class rows when fewer than 4 distinct classes are *predicted*,
    one per predicted class, whatever the number of classes; in the analyses summary and in Table 2."""
    from attnexp.analyses.jw.kendall import summarise_kendall

    qa = [m for m in models if m["dataset"] == "qa_set"]
    narrowed = [{**m, "kendall": m["kendall"].assign(predicted=m["kendall"]["predicted"] % 2 + 3)} for m in qa]
    assert set(tables.table2(narrowed, CLASSES, "omit", {"n_resamples": 100})["group"]) == {"Overall", "class a3", "class a4"}
    assert set(summarise_kendall(narrowed[0]["kendall"], CLASSES["qa_set"])["group"]) == {"Overall", "class a3", "class a4"}
    one_class = next(m for m in models if m["dataset"] == "bc_set")["kendall"].assign(predicted=1)
    assert list(summarise_kendall(one_class, CLASSES["bc_set"])["group"].unique()) == ["Overall", "class pos"]
    assert set(tables.kendall_per_seed(one_class, CLASSES["bc_set"])["group"]) == {"Overall", "class pos"}


def test_cross_measure_matches_a_per_instance_loop(models):
    table = tables.cross_measure(models, bootstrap_options={"n_resamples": 200}).set_index(["dataset", "encoder", "measure"])
    for dataset in CLASSES:
        chosen = [m for m in models if m["dataset"] == dataset and m["encoder"] == "lstm"]
        differences = []
        for model in chosen:
            tau = {}
            for row in model["kendall"].itertuples():
                tau[(row.instance_id, row.pair)] = np.nan if row.is_nan else row.tau
            ids = {i for i, _ in tau}
            values = [tau[(i, "grad_loo")] - tau[(i, "attn_loo")] for i in ids]
            differences.append(np.nanmean(values))
        got = table.loc[(dataset, "lstm", "gradloo_minus_attnloo")]
        assert got["mean"] == pytest.approx(np.mean(differences))


def test_legacy_labels_swap_names_not_values(models):
    plain = tables.cross_measure(models[:2], bootstrap_options={"n_resamples": 100})
    legacy = tables.cross_measure(models[:2], legacy_labels=True, bootstrap_options={"n_resamples": 100})
    assert set(legacy["measure"]) >= {"ag", "al", "gl"} and "attn_loo" not in set(legacy["measure"])
    ag = legacy.loc[legacy["measure"] == "ag", "mean"].to_numpy()
    assert np.allclose(ag, plain.loc[plain["measure"] == "attn_loo", "mean"].to_numpy())


def test_seed_interval():
    assert np.isnan(writer.seed_interval([0.3])).all()
    low, high = writer.seed_interval([0.1, 0.2, 0.4, 0.3], n_resamples=500)
    assert 0.1 <= low <= 0.25 <= high <= 0.4
    assert writer.seed_interval([0.2, 0.2]) == (0.2, 0.2)


def test_table1_reports_metric_by_task():
    rng = np.random.default_rng(0)
    metas = {"bc_set": fake_meta("bc_set", "bc", ["0", "1"], rng), "qa_set": fake_meta("qa_set", "qa", list("abcde"), rng)}
    metrics = [
        {"dataset": d, "encoder": "lstm", "attention": "tanh", "seed": s, "accuracy": 0.5 + s / 10, "f1_positive": 0.2 + s / 10}
        for d in metas
        for s in (0, 1)
    ]
    table = tables.table1(metas, metrics, {"n_resamples": 100}).set_index("dataset")
    assert table.loc["bc_set", "metric"] == "f1_positive" and table.loc["bc_set", "mean"] == pytest.approx(0.25)
    assert table.loc["qa_set", "metric"] == "accuracy" and table.loc["qa_set", "mean"] == pytest.approx(0.55)
    counts = metas["bc_set"]["class_counts"]["train"]
    assert table.loc["bc_set", "train_by_class"] == f"{counts['0'] + counts['1']} ({counts['0']}/{counts['1']})"
    assert table.loc["bc_set", "vocab_size"] == len(metas["bc_set"]["vocab"])


def test_rationale_recovery_averages_seeds_and_keeps_header_when_empty():
    frames = [
        pd.DataFrame(
            {
                "dataset": "s",
                "encoder": "lstm",
                "attention": "tanh",
                "seed": seed,
                "measure": ["attention", "loo"],
                "precision_at_k": [0.2 * seed, 0.5],
                "auc": [0.6, 0.1 * seed],
                "n": 10,
            }
        )
        for seed in (1, 2)
    ]
    table = tables.rationale_table(frames, {"n_resamples": 100}).set_index("measure")
    assert table.loc["attention", "precision_at_k"] == pytest.approx(0.3)
    assert table.loc["loo", "auc"] == pytest.approx(0.15)
    assert table.loc["loo", "n"] == 20
    empty = tables.rationale_table([frames[0].iloc[:0]])
    assert empty.empty and "precision_at_k" in empty.columns


def test_write_table_round_trips_and_renders(tmp_path, models):
    table = tables.table2(models, CLASSES, "omit", {"n_resamples": 100})
    display = tables.table2_display(table, ["bc_set", "qa_set"], ["attn_grad", "attn_loo", "grad_loo"])
    files = {k: tmp_path / f"t.{k}" for k in ("csv", "md", "tex")}
    writer.write_table(table, files, caption="caption", display=display)
    back = pd.read_csv(files["csv"])
    assert np.allclose(back["mean"], table["mean"], equal_nan=True)
    assert files["md"].read_text().startswith("caption\n\n| Dataset")
    latex = files["tex"].read_text()
    assert r"\begin{tabular}" in latex and "±" not in latex and r"$\pm$" in latex
    assert list(display["Dataset"]).index("qa_set") > list(display["Dataset"]).index("bc_set")


def test_write_table_rounds_numbers_in_markdown_and_latex_only(tmp_path):
    table = pd.DataFrame({"dataset": ["a", "b"], "n": [3, 40], "f1": [0.123456, np.nan], "note": ["x", 0.5]})
    files = {k: tmp_path / f"t.{k}" for k in ("csv", "md", "tex")}
    writer.write_table(table, files, caption="Numbers.")
    assert pd.read_csv(files["csv"])["f1"].iloc[0] == 0.123456
    markdown, latex = files["md"].read_text(), files["tex"].read_text()
    for text in (markdown, latex):
        assert "0.123" in text and "0.1235" not in text and "0.500" in text and "nan" not in text.lower()
    assert "–" in markdown  # NaN
    assert "--" in latex and r"\caption{Numbers.}" in latex


def test_table_paths_are_per_paper():
    assert paths.table_files("jw", "table2_kendall") == {
        ext: f"results/tables/jw/table2_kendall.{ext}" for ext in ("csv", "md", "tex", "html")
    }


def test_write_table_writes_an_html_page_the_report_shows_inline(tmp_path):
    table = pd.DataFrame({"dataset": ["a<b", "c"], "f1": [0.123456, np.nan]})
    files = {k: tmp_path / f"t.{k}" for k in ("csv", "md", "tex", "html")}
    writer.write_table(table, files, caption="W&P Table 2: F1.")
    page = files["html"].read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<tr>") == 3  # header + two rows
    assert "W&amp;P Table 2: F1." in page and "a&lt;b" in page  # caption and cells escaped
    assert ">0.123<" in page and "0.1235" not in page and ">–<" in page  # rounded like the Markdown
    assert '<th style="text-align:right">f1</th>' in page


def test_dataset_order_follows_the_paper():
    names = ["syn_nli", "syn_babi2", "imdb", "syn_sentiment", "zzz", "sst", "babi1"]
    assert tables.dataset_order(names) == ["syn_sentiment", "sst", "imdb", "babi1", "syn_babi2", "syn_nli", "zzz"]


@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
def test_single_seed_table2_equals_the_analyses_kendall_summary(models, nan_policy):
    from attnexp.analyses.jw.kendall import summarise_kendall

    model = models[0]
    classes = CLASSES[model["dataset"]]
    ours = tables.table2([model], CLASSES, nan_policy).set_index(["pair", "group"])
    theirs = summarise_kendall(model["kendall"], classes, nan_policy).set_index(["pair", "group"])
    assert sorted(ours.index) == sorted(theirs.index)
    for column in ("mean", "std", "sig_frac", "n", "n_nan"):
        assert np.allclose(ours.loc[theirs.index, column].astype(float), theirs[column].astype(float), equal_nan=True), column


def test_table2_shows_the_number_of_instances_per_group(models):
    table = tables.table2(models, CLASSES, "omit", {"n_resamples": 100})
    display = tables.table2_display(table, ["bc_set", "qa_set"], ["attn_grad", "attn_loo"])
    assert list(display.columns[:4]) == ["Dataset", "Group", "Model", "n"]
    for row in display.itertuples(index=False):
        kendalls = [m["kendall"] for m in models if m["dataset"] == row.Dataset and f"{m['encoder']}-tanh" == row.Model]
        per_pair = [k[k["pair"] == "attn_grad"] for k in kendalls]
        if row.Group != "Overall":
            index = CLASSES[row.Dataset].index(row.Group.removeprefix("class "))
            per_pair = [k[k["predicted"] == index] for k in per_pair]
        assert row.n == sum(len(k) for k in per_pair) > 0  # undefined τ included, summed over the seeds


def test_table1_flags_a_model_near_chance_and_shows_the_scores_first():
    rng = np.random.default_rng(0)
    meta = fake_meta("bc_set", "bc", ["neg", "pos"], rng)
    meta["class_counts"]["test"] = {"0": 60, "1": 40}
    metrics = [
        {"dataset": "bc_set", "encoder": "lstm", "attention": "tanh", "seed": 0, "accuracy": 0.62, "f1_positive": 0.3, "n": 100},
        {"dataset": "bc_set", "encoder": "cnn", "attention": "tanh", "seed": 0, "accuracy": 0.8, "f1_positive": 0.7, "n": 100},
    ]
    table = tables.table1({"bc_set": meta}, metrics).set_index("encoder")
    assert table.loc["lstm", "chance_rate"] == pytest.approx(0.6)
    assert table.loc["lstm", "near_chance_seeds"] == 1 and table.loc["cnn", "near_chance_seeds"] == 0
    display = tables.table1_display(table.reset_index(), ["bc_set"])
    assert list(display.columns[:4]) == ["Dataset", "metric", "lstm-tanh", "cnn-tanh"]
    assert display.loc[0, "lstm-tanh"] == "0.300 (near chance)" and display.loc[0, "cnn-tanh"] == "0.700"
    assert "near chance" in tables.CAPTIONS["table1"]


def test_many_classes_show_their_total_alone():
    rng = np.random.default_rng(1)
    stats = tables.dataset_statistics({"qa": fake_meta("qa", "qa", list("abcdef"), rng)})
    assert stats.loc[0, "test_by_class"] == str(stats.loc[0, "test"])


def test_cross_measure_and_rationale_tables_show_the_analysed_instances_per_model(models):
    """Every analyses table says how many test instances it used (`n`, summed over seeds), and its caption says
    that they may be the seeded sample of `analyses.test_sample`."""
    some = [
        {**m, "kendall": m["kendall"][m["kendall"]["instance_id"].isin(sorted(set(m["kendall"]["instance_id"]))[:9])]}
        for m in models
    ]
    display = tables.cross_measure_display(tables.cross_measure(some, bootstrap_options={"n_resamples": 100}), list(CLASSES))
    assert list(display.columns[:3]) == ["Dataset", "Model", "n"]
    assert set(display["n"]) == {3 * 9}  # 9 instances in each of 3 seeds, whatever τ is undefined
    frame = pd.DataFrame(
        {
            "dataset": "s",
            "encoder": "lstm",
            "attention": "tanh",
            "seed": 0,
            "measure": ["loo"],
            "precision_at_k": 0.5,
            "auc": 0.7,
            "n": 12,
        }
    )
    assert tables.rationale_display(tables.rationale_table([frame]), ["s"])["n"].tolist() == [12]
    for name in ("table2", "cross_measure", "rationale_recovery"):
        assert "analyses.test_sample" in tables.CAPTIONS[name], name
