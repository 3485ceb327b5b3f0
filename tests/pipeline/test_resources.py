"""The cluster resources table (attnexp.pipeline.resources): lookup, requests, merging, and reading job logs."""

import pytest

from attnexp.pipeline.resources import (
    MB_PER_MIB,
    Cost,
    ResourceTable,
    job_usages,
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


def test_job_usages_reads_finished_jobs_only(tmp_path):
    """A job's log ends with its usage, rule and wildcards (attnexp.runlog.log_to): the rule is read from it, not
    from the log's path; a log still being written, or one without the rule (older runs), is not a finished job."""
    from attnexp.runlog import log_to

    done = tmp_path / "somewhere/else/any-name.log"
    with log_to(done, job=("train", {"dataset": "sst", "encoder": "lstm", "attention": "tanh", "seed": "0"})):
        print("epoch 1/8: ...")
    (tmp_path / "train/sst/lstm-tanh/seed1.log").parent.mkdir(parents=True)
    (tmp_path / "train/sst/lstm-tanh/seed1.log").write_text("epoch 1/8: batch 3/200\n")  # still running
    (tmp_path / "train/sst/lstm-tanh/seed2.log").write_text("job usage: wall 1.0 s, cpu 1.0 s, max rss 9 MiB\n")
    (usage,) = job_usages(tmp_path)
    assert usage.log == str(done) and usage.rule == "train"
    assert usage.wildcards == {"attention": "tanh", "dataset": "sst", "encoder": "lstm", "seed": "0"}
    assert usage.wall_s >= 0 and usage.rss_mib > 0


def test_a_module_prefix_finds_the_rule_s_row():
    """Issue 33: `use rule * from attnexp as attnexp_*` names the rules attnexp_train, attnexp_wp_train, ...; each job
    still gets its own rule's row, never a shorter rule's."""
    from attnexp.pipeline.resources import job_resources

    table = ResourceTable([cost("train", seconds=600), cost("wp_train", seconds=60), cost("*", seconds=1)])
    resources = job_resources(table)
    runtime = lambda name: resources["runtime"]({}, 1, name)  # noqa: E731
    assert table.rule_named("attnexp_wp_train") == "wp_train" and table.rule_named("wp_train") == "wp_train"
    assert runtime("attnexp_train") == runtime("train") > runtime("attnexp_wp_train") == runtime("wp_train")


def test_a_job_s_priority_is_the_chain_it_starts():
    """Issue 38: the W&P base run starts its adversary and, after it, the adversary's diagnostic MLP; its priority
    counts all three, so it runs before an MLP nothing waits for, and a J&W training counts its analyses."""
    from attnexp.pipeline.resources import chain_seconds, job_priority

    table = ResourceTable(
        [
            cost("wp_train", "imdb", seconds=1000),
            cost("wp_adversary", "imdb", seconds=14000),
            cost("wp_jw_adversary", "imdb", seconds=600),
            cost("train", "imdb", seconds=900),
            cost("analyze", "imdb", seconds=1300),
            cost("*", seconds=1),
        ]
    )
    base = {"dataset": "imdb", "variant": "base", "seed": "10"}
    assert chain_seconds(table, "wp_train", base) == 1000 + 14000 + 1000  # base, adversary, mlp_adv
    assert chain_seconds(table, "wp_train", {**base, "variant": "mlp_uniform"}) == 1000
    assert chain_seconds(table, "train", {"dataset": "imdb", "encoder": "lstm"}) == 2200
    priority = job_priority(table)
    assert priority(base, 1, "attnexp_wp_train") == 16000 > priority({**base, "variant": "uniform"}, 1, "wp_train")
