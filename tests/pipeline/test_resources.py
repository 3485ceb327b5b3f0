"""The cluster resources table (attnexp.pipeline.resources): lookup, requests, merging, and reading job logs."""

import pytest

from attnexp.pipeline.resources import (
    MB_PER_MIB,
    Cost,
    ResourceTable,
    job_usages,
    log_rule,
    request,
)


def cost(rule="train", dataset="*", model="*", seconds=600.0, mib=1000.0, source="estimate") -> Cost:
    return Cost(rule, dataset, model, seconds, mib, source)


TABLE = ResourceTable(
    [
        cost(seconds=3600),
        cost(dataset="imdb", model="*", seconds=2000),
        cost(dataset="imdb", model="lstm", seconds=1000),
        cost(dataset="synthetic", seconds=10),
        cost(rule="synthesize_*", seconds=5),
        cost(rule="synthesize_agreement", seconds=7),
    ]
)


@pytest.mark.parametrize(
    ("rule", "dataset", "model", "synthetic", "seconds"),
    [
        ("train", "imdb", "lstm", False, 1000),  # the dataset's and model's own row
        ("train", "imdb", "cnn", False, 2000),  # the dataset's row for any model
        ("train", "syn_sentiment", "cnn", True, 10),  # generated data
        ("train", "my_reviews", "lstm", False, 3600),  # a dataset not listed: the rule's default
        ("synthesize_nli", None, None, False, 5),  # a rule pattern
        ("synthesize_agreement", None, None, False, 7),  # an exact rule name before a pattern
    ],
)
def test_a_job_takes_its_most_specific_row(rule, dataset, model, synthetic, seconds):
    assert TABLE.cost(rule, dataset, model, synthetic).runtime_s == seconds


def test_a_rule_without_a_row_is_an_error_naming_it():
    with pytest.raises(KeyError, match="wp_adversary"):
        TABLE.cost("wp_adversary", "imdb")


def test_job_cost_reads_the_dataset_and_encoder_wildcards():
    assert TABLE.job_cost("train", {"dataset": "imdb", "encoder": "lstm", "seed": "0"}).runtime_s == 1000
    assert TABLE.job_cost("train", {"dataset": "imdb", "variant": "base"}).runtime_s == 2000


def test_request_has_headroom_a_floor_and_grows_with_each_attempt():
    big = request(cost(seconds=3600, mib=4000))
    assert big.runtime == 120 and big.mem_mb >= 1.5 * 4000 * MB_PER_MIB
    assert request(cost(seconds=3600, mib=4000), attempt=2) == type(big)(2 * big.runtime, 2 * big.mem_mb)
    small = request(cost(seconds=1, mib=10))
    assert small.runtime == 10 and small.mem_mb == 1000
    assert request(cost(seconds=3600), runtime_scale=2).runtime == 240


def test_measured_rows_are_not_replaced_by_predictions(tmp_path):
    table = ResourceTable([cost(dataset="sst", seconds=50, source="measured"), cost(dataset="imdb", seconds=900)], "# head")
    merged = table.merged(
        [cost(dataset="sst", seconds=70, source="predicted"), cost(dataset="imdb", seconds=1100, source="predicted")]
    )
    assert merged.cost("train", "sst").runtime_s == 50
    assert merged.cost("train", "imdb").runtime_s == 1100
    assert merged.merged([cost(dataset="sst", seconds=60, source="measured")]).cost("train", "sst").runtime_s == 60
    merged.write(tmp_path / "resources.tsv")
    again = ResourceTable.read(tmp_path / "resources.tsv")
    assert again.header == "# head" and again.rows == merged.rows


def test_an_unknown_source_is_refused(tmp_path):
    path = tmp_path / "resources.tsv"
    path.write_text("rule\tdataset\tmodel\truntime_s\tmem_mib\tsource\tnote\ntrain\t*\t*\t1\t1\tguess\t\n")
    with pytest.raises(ValueError, match="source"):
        ResourceTable.read(path)


@pytest.mark.parametrize(
    ("log", "rule", "model"),
    [
        ("train/imdb/lstm-tanh/seed0.log", "train", "lstm"),
        ("train/syn_agreement/transformer-self/seed0.log", "train_transformer", "transformer"),
        ("analyses/imdb/average-dot/seed2.log", "analyze", "average"),
        ("wp/imdb/adversarial/seed10/lambda0.1.log", "wp_adversary", None),
        ("wp/imdb/base/seed10/jw_adversary.log", "wp_jw_adversary", None),
        ("wp/imdb/mlp_base/seed10.log", "wp_train", None),
        ("wp/imdb/seed_figures.log", "wp_variance_figures", None),
        ("figures/jw/imdb.log", "dataset_figures", None),
        ("figures/jw/summary.log", "summary_figures", None),
        ("raw/synthetic/sentiment.log", "synthesize_sentiment", None),
        ("preprocess/imdb.log", "preprocess", None),
    ],
)
def test_a_log_path_names_its_rule(log, rule, model):
    found, wildcards = log_rule(log)
    assert found == rule
    assert wildcards.get("encoder") == model
    if "imdb" in log:
        assert wildcards["dataset"] == "imdb"


def test_job_usages_reads_finished_jobs_only(tmp_path):
    done = tmp_path / "train/sst/lstm-tanh/seed0.log"
    done.parent.mkdir(parents=True)
    done.write_text("epoch 1/8: ...\njob usage: wall 53.2 s, cpu 52.0 s, max rss 929 MiB\n")
    (tmp_path / "train/sst/lstm-tanh/seed1.log").write_text("epoch 1/8: batch 3/200\n")  # still running
    (usage,) = job_usages(tmp_path)
    assert (usage.rule, usage.wildcards["dataset"], usage.wall_s, usage.cpu_s, usage.rss_mib) == ("train", "sst", 53.2, 52.0, 929)
