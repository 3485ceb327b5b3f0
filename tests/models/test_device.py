"""The `device` setting: resolution and its errors (CPU machines), and on a CUDA machine a tiny model trained and
analysed on the GPU agrees with the same run on the CPU."""

import os

import numpy as np
import pytest
import torch

from attnexp.analyses.jw.instances import adversary_table, importance_table, permutation_table
from attnexp.errors import ConfigError
from attnexp.models import device as device_module
from attnexp.models.device import ONEDNN_CACHE, gpu_jobs, resolve_device, set_threads
from attnexp.models.train import build_model, fit
from attnexp.pipeline.settings import analysis_settings
from tests.factories import train_settings, validated_config


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(device_module, "cuda_available", lambda: False)


def test_auto_falls_back_to_the_cpu_and_cpu_is_always_the_cpu(no_cuda):
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"
    assert not gpu_jobs("auto")


def test_auto_is_cuda_exactly_where_torch_sees_a_gpu():
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("setting", ["cuda", "cuda:1"])
def test_cuda_without_a_gpu_is_a_config_error_naming_the_fix(no_cuda, setting):
    with pytest.raises(ConfigError, match="device: auto"):
        resolve_device(setting)
    with pytest.raises(ConfigError):
        gpu_jobs(setting)


def test_gpu_jobs_switch_skips_the_local_check_but_not_the_spelling(no_cuda):
    assert gpu_jobs("cuda", True) is True
    assert gpu_jobs("auto", False) is False
    with pytest.raises(ConfigError, match="not one of"):
        gpu_jobs("gpu", True)


def test_schema_rejects_a_malformed_device_and_defaults_to_auto():
    assert validated_config()["device"] == "auto"
    with pytest.raises(ConfigError):
        validated_config(device="gpu0")


CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize(
    "other",
    [pytest.param("cpu", id="cpu-twice"), pytest.param("cuda", id="cpu-cuda", marks=[pytest.mark.cuda, CUDA])],
)
def test_training_and_analyses_on_another_device_agree_with_the_cpu(planted_sentiment, other):
    """The same run on the CPU and on `other`: on the CPU twice it checks the comparison itself on every machine (the
    CUDA case ran nowhere for months and drifted from the analyses' signatures); on a GPU, that the devices agree."""
    instances, meta = planted_sentiment
    config = validated_config(analyses={"adversary": {"steps": 20}, "permutations": 8, "ig_steps": 8})
    analysis = analysis_settings(config, batch_size=32)
    rows = instances[instances["split"] == "test"].head(40).reset_index(drop=True)
    runs = []
    for device in ("cpu", other):
        model = build_model(meta, "lstm", "tanh", embedding_dim=16, hidden_size=16, seed=0)
        result = fit(model, instances, train_settings(3, 32, seed=0, device=device), progress=lambda _: None)
        assert next(result.model.parameters()).device.type == device
        runs.append(
            (
                result,
                importance_table(result.model, rows, analysis),
                permutation_table(result.model, rows, analysis, torch.Generator().manual_seed(0)),
                adversary_table(result.model, rows, analysis, seed=1),
            )
        )
    (cpu, *cpu_tables), (gpu, *gpu_tables) = runs
    assert cpu.best_epoch == gpu.best_epoch
    np.testing.assert_allclose(cpu.history["train_loss"], gpu.history["train_loss"], rtol=1e-3)
    assert abs(cpu.test_metrics["roc_auc"] - gpu.test_metrics["roc_auc"]) < 0.02
    for cpu_table, gpu_table in zip(cpu_tables, gpu_tables, strict=True):
        assert (cpu_table["instance_id"] == gpu_table["instance_id"]).all()
    for column in ("attention", "gradient", "ig"):
        np.testing.assert_allclose(np.concatenate(cpu_tables[0][column]), np.concatenate(gpu_tables[0][column]), atol=1e-3)
    np.testing.assert_allclose(cpu_tables[1]["median_output_change"], gpu_tables[1]["median_output_change"], atol=1e-3)
    np.testing.assert_allclose(cpu_tables[2]["emax_jsd"], gpu_tables[2]["emax_jsd"], atol=0.05)


def test_a_job_turns_onednn_primitive_cache_off_unless_the_environment_sizes_it(monkeypatch):
    """Length-sorted batches have a new width almost every batch; oneDNN's per-shape cache would only grow."""
    threads = torch.get_num_threads()
    monkeypatch.delenv(ONEDNN_CACHE, raising=False)
    set_threads(threads)
    assert os.environ[ONEDNN_CACHE] == "0"
    monkeypatch.setenv(ONEDNN_CACHE, "64")
    set_threads(threads)
    assert os.environ[ONEDNN_CACHE] == "64"
