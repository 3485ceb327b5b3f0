"""Job settings: from the validated config alone (the schema owns every default), plain data for Snakemake's rerun
check and back, and a changed key reaches exactly the jobs that read it."""

import ast
import dataclasses
import typing

import pytest
import yaml

from attnexp.analyses.az.settings import AZSettings
from attnexp.analyses.jw.settings import AdversarySettings, AnalysisSettings
from attnexp.analyses.wp.settings import WPSettings
from attnexp.config import PACKAGED_SCHEMA
from attnexp.models.settings import Compute, FitSettings, HFSettings
from attnexp.pipeline import settings as job
from attnexp.pipeline.plan import Plan
from tests.conftest import REPO

PLAIN = (dict, list, tuple, str, int, float, bool, type(None))
SCHEMA = yaml.safe_load(PACKAGED_SCHEMA.read_text())["properties"]


def schema_keys(*path: str) -> set[str]:
    node = {"properties": SCHEMA}
    for key in path:
        node = node["properties"][key]
    return set(node["properties"])


def every_job(config: dict) -> dict[str, job.JobSettings]:
    """One settings object of every kind of job of the default config's grid."""
    model = {"dataset": "syn_sentiment", "seed": 0}
    plan = Plan.from_config(config)
    return {
        "synthesize": job.SynthesizeSettings.from_plan(plan, family="sentiment"),
        "agreement": job.SynthesizeSettings.from_plan(plan, family="agreement"),
        "download": job.DownloadSettings.from_plan(plan, archive="sst"),
        "preprocess": job.PreprocessSettings.from_plan(plan, dataset="syn_sentiment"),
        "train": job.TrainSettings.from_plan(plan, encoder="lstm", attention="tanh", **model),
        "transformer": job.TransformerSettings.from_plan(plan, encoder="transformer", attention="self", **model),
        "analyze": job.AnalyzeSettings.from_plan(plan, encoder="lstm", attention="tanh", **model),
        "wp_train": job.WPRunSettings.from_plan(plan, variant="base", **model),
        "wp_adversary": job.WPRunSettings.from_plan(plan, lam="1", **model),
        "wp_jw_adversary": job.WPAnalysisSettings.from_plan(plan, **model),
        "wp_points": job.WPAnalysisSettings.from_plan(plan, dataset="syn_sentiment"),
        "az": job.AZAnalysisSettings.from_plan(plan, **model),
        "table1": job.TableSettings.from_plan(plan, table="table1"),
        "table2": job.TableSettings.from_plan(plan, table="table2"),
        "az_tables": job.TableSettings.from_plan(plan, table="az_tables"),
        "comparison": job.TableSettings.from_plan(plan, table="paper_comparison"),
        "dataset_figures": job.FigureSettings.from_plan(plan, job="dataset_figures", dataset="syn_sentiment"),
        "az_figure": job.FigureSettings.from_plan(plan, job="az_correlation_figure", dataset="syn_agreement"),
        "report": job.ReportSettings.from_plan(plan, snakefile="Snakefile"),
        "comparison_page": job.ComparisonPageSettings.from_plan(plan, configfiles=("config/paper.yaml",)),
    }


def plain(value) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(plain(v) for v in value)
    return isinstance(value, PLAIN)


def test_default_config_is_the_minimal_grid_with_schema_defaults():
    config = job.default_config()
    assert {k: config[k] for k in job.MINIMAL_GRID} == job.MINIMAL_GRID
    assert config["analyses"]["ig_steps"] == SCHEMA["analyses"]["properties"]["ig_steps"]["default"]
    assert job.default_config(seeds=[3])["seeds"] == [3]


def test_settings_are_plain_data_for_snakemake_and_come_back_equal():
    for name, settings in every_job(job.default_config()).items():
        param = settings.as_param()
        assert plain(param), name  # Snakemake compares only builtin values: a dataclass would never rerun
        assert type(settings).from_param(param) == settings, name


REPORTED = ("table1", "table2", "az_tables", "comparison", "dataset_figures", "az_figure", "comparison_page")


def test_the_report_shows_a_jobs_settings_short_and_snakemake_compares_them_whole():
    """Issue 33 finding 1: the HTML report's "Job parameters" (Snakemake's `format_dict`: `name=str(value)`) show a
    job's defining settings, not the plan's lists of every model's files; the params rerun trigger (the `repr`
    Snakemake records) and the job (the pickled `snakemake` object) get the whole settings, as before."""
    import pickle

    from snakemake.logging import format_dict
    from snakemake.persistence import PersistenceBase

    grid = {"datasets": ["syn_sentiment", "syn_nli"], "encoders": ["lstm", "cnn", "average"], "seeds": [0, 1]}
    jobs = every_job(job.default_config(**grid))
    for name, settings in jobs.items():
        param, whole = settings.as_param(), dataclasses.asdict(settings)
        assert param == whole and repr(param) == repr(whole), name
        assert PersistenceBase._serialize_param_builtin(None, param) == repr(whole), name  # what a rerun compares
        loaded = pickle.loads(pickle.dumps(param))
        assert type(loaded) is dict and loaded == whole, name  # what the job reads back, attnexp or not
        assert format_dict({"settings": param}) == f"settings={param.summary}", name
    for name in REPORTED:
        shown = str(jobs[name].as_param())
        assert len(shown) < 400 and "results/" not in shown, (name, shown)
    assert "results/" in repr(jobs["dataset_figures"].as_param())  # there, only not shown
    table2 = str(jobs["table2"].as_param())
    assert table2.startswith("{table: table2, datasets: [syn_sentiment, syn_nli], models: <12 entries>, "), table2
    assert "nan_policy: omit" in table2 and "runs" not in table2  # empty fields (this table reads no runs) left out


def other_gradient() -> str:
    return "grad_l2" if job.default_config()["az"]["gradient"] != "grad_l2" else "grad_x_input"


def test_a_changed_key_reaches_exactly_the_jobs_that_read_it():
    before = every_job(job.default_config())
    changes = {
        "analyses": ({"ig_steps": 7}, {"analyze", "wp_jw_adversary"}),
        "figures": ({"dpi": 99}, {"dataset_figures", "az_figure"}),
        "az": ({"gradient": other_gradient()}, {"az", "az_tables", "az_figure", "comparison"}),  # syn_agreement's rows
        "preprocessing": ({"implicit_extremes": True}, {"preprocess"}),
    }
    for section, (value, readers) in changes.items():
        after = every_job(job.default_config(**{section: value}))
        changed = {name for name in before if before[name].as_param() != after[name].as_param()}
        assert changed == readers | {"report", "comparison_page"}, section  # both show the whole config


def test_a_w_and_p_job_does_not_rerun_when_another_dataset_joins_or_leaves():
    """A narrowed run (`--config datasets='[x]'`) or one more W&P dataset leaves the other datasets' W&P jobs'
    parameters, so Snakemake's params trigger reruns none of them."""
    grid = ["syn_sentiment", "syn_agreement"]
    alone, both = ({"datasets": grid, "wp": {"datasets": names}} for names in (grid[:1], grid))
    before, after = every_job(job.default_config(**alone)), every_job(job.default_config(**both))
    assert {name for name in before if before[name].as_param() != after[name].as_param()} <= {"report", "comparison_page"}


def test_the_comparison_page_records_the_config_as_it_differs_from_the_schema_defaults():
    assert job.config_changes(job.default_config()) == job.MINIMAL_GRID  # the grid, which has no default, always
    steps = job.default_config()["analyses"]["ig_steps"] + 1
    changed = job.config_changes(job.default_config(seeds=[0, 1], analyses={"ig_steps": steps}))
    assert changed == {**job.MINIMAL_GRID, "seeds": [0, 1], "analyses": {"ig_steps": steps}}


def test_the_device_stays_as_configured_until_the_job_resolves_it():
    settings = job.TrainSettings.from_plan(
        Plan.from_config(job.default_config(device="auto")), "syn_sentiment", "lstm", "tanh", 0
    )
    assert settings.fit.device == "auto"
    from attnexp.models.device import resolve_device

    assert job.resolved(settings.fit).device == resolve_device("auto")


# Where each domain settings field comes from: a schema section (its keys of the same name) or, for a field with
# another name or place, the schema path it is read from; None: not a config key (a wildcard, a derived value).
ORIGINS = {
    AZSettings: ("az",),
    WPSettings: ("wp",),
    AdversarySettings: ("analyses", "adversary"),
    AnalysisSettings: ("analyses",),
    FitSettings: (),
    HFSettings: ("hf", "train"),
    Compute: (),
}
ELSEWHERE = {
    "lam": ("analyses", "adversary", "lambda"),
    "init_scale": None,  # the authors' constant, documented as not a key
    "batch_size": ("hyperparameters",),
    "nan_policy": ("analyses", "kendall", "nan_policy"),
    "device": ("device",),
    "padded_lstm": ("padded_lstm",),
    "fused_adam": ("fused_adam",),
    "deterministic": ("seeding", "deterministic"),
    "select_on": ("model_selection", "split"),
    "seed": None,
    "epochs": ("hyperparameters",),
    "learning_rate": ("az", "train", "learning_rate"),
    "weight_decay": None,  # J&W's constant (models.settings)
    "amsgrad": ("az", "train", "amsgrad"),
    "name": None,
    "checkpoint": ("hf", "models"),
    "gguf_file": ("hf", "models"),
    "kind": ("hf", "models"),
    "prompt": ("hf", "models"),
    "verbalizer": ("hf", "models"),
    "few_shot": ("hf", "models"),
    "finetune": ("hf", "models"),
    "allow_download": ("hf", "allow_download"),
    "max_length": ("hf", "max_length"),
}


def exists(path: tuple[str, ...]) -> bool:
    node = {"properties": SCHEMA}
    for key in path:
        properties = node.get("properties", {})
        if key not in properties:
            return bool(node.get("additionalProperties"))  # e.g. hyperparameters.<dataset>, hf.models.<name>
        node = properties[key]
    return True


@pytest.mark.parametrize("kind", list(ORIGINS), ids=lambda kind: kind.__name__)
def test_every_settings_field_comes_from_the_schema(kind):
    section = ORIGINS[kind]
    own = schema_keys(*section) if section else set()
    for field in dataclasses.fields(kind):
        if field.name in own or dataclasses.is_dataclass(typing.get_type_hints(kind)[field.name]):
            continue
        assert field.name in ELSEWHERE, f"{kind.__name__}.{field.name} is not a schema key"
        origin = ELSEWHERE[field.name]
        assert origin is None or exists(origin), f"{kind.__name__}.{field.name}: {origin} is not in the schema"


@pytest.mark.parametrize("kind", [AZSettings, WPSettings, AnalysisSettings, FitSettings, HFSettings, Compute])
def test_no_settings_field_has_a_code_default(kind):
    defaults = [f.name for f in dataclasses.fields(kind) if f.default is not dataclasses.MISSING]
    assert defaults == []


def test_the_builders_index_the_validated_config_without_fallbacks():
    for module in ("settings.py", "plan.py"):
        tree = ast.parse((REPO / "src/attnexp/pipeline" / module).read_text())
        gets = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("get", "setdefault")]
        assert gets == [], f"pipeline/{module} falls back with .get at lines {gets}"
