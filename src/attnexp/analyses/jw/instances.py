"""J&W's per-instance tables (§6): importance, permutation and adversary rows for a set of test instances,
batched; the layer that run.py (the per-model driver) and the W&P stage share."""

import time
from collections.abc import Iterator

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.jw.adversary import adversarial_attention
from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out, rows_per_chunk
from attnexp.analyses.jw.permutation import permutation_output_changes, sample_permutations
from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.data.batching import Batch, sequential_batches
from attnexp.models.device import model_device
from attnexp.models.interface import AttentionModel


def real_tokens(scores: torch.Tensor, batch: Batch) -> list[list[float]]:
    """Per-instance lists of the scores at positions 1 .. length-2."""
    return [row[1 : int(n) - 1].tolist() for row, n in zip(scores.double().cpu(), batch.lengths.tolist(), strict=True)]


def _progress(name: str, done: int, total: int, start: float, detail: str = "") -> None:
    print(f"  {name}: {done}/{total} instances, {time.perf_counter() - start:.1f}s{detail}", flush=True)


def importance_table(
    model: AttentionModel, rows: pd.DataFrame, settings: AnalysisSettings, explain_label: bool = False
) -> pd.DataFrame:
    """One row per instance: prediction, attention and the gradient, LOO and IG scores over real tokens. The
    gradient and IG explain the predicted class (QA/NLI; BC: p(positive)), or the rows' `label` with
    `explain_label`. A measure that is not computed (LOO with `bc_loo` false on BC, IG with `ig_steps` null) is NaN.
    The progress lines give each measure's seconds so far: the papers' (gradient, LOO) apart from IG, ours."""
    run_loo = settings.bc_loo or not model.is_binary
    parts, start, seconds = [], time.perf_counter(), {"gradient": 0.0, "LOO": 0.0, "IG": 0.0}

    def timed(name: str, function, *args, **kwargs) -> torch.Tensor:
        began = time.perf_counter()
        result = function(*args, **kwargs)
        seconds[name] += time.perf_counter() - began
        return result

    for batch in _batches(model, rows, settings.batch_size):
        with torch.no_grad():
            output = model(batch)
        target = batch.labels if explain_label else None
        skipped = torch.full(batch.tokens.shape, float("nan"))
        loo = timed("LOO", leave_one_out, model, batch, settings.memory_budget_mb) if run_loo else skipped
        gradient = timed("gradient", gradient_importance, model, batch, target, settings.memory_budget_mb)
        ig = skipped
        if settings.ig_steps is not None:
            ig_rows = rows_per_chunk(model, batch.tokens.shape[1], settings.memory_budget_mb, backward=True)  # (instance, step)
            ig = timed("IG", integrated_gradients, model, batch, settings.ig_steps, ig_rows, target=target)
        parts.append(importance_rows(model, batch, output, gradient, loo, ig))
        measures = ", ".join(f"{name} {value:.1f}s" for name, value in seconds.items())
        _progress("importance", sum(map(len, parts)), len(rows), start, f" ({measures})")
    table = pd.concat(parts, ignore_index=True)
    table["rationale"] = [[int(p) - 1 for p in r] for r in rows["rationale"]]
    return table


def importance_rows(model: AttentionModel, batch: Batch, output, gradient, loo, ig) -> pd.DataFrame:
    """One batch's rows of the importance table: its identifying columns and each measure over the real tokens."""
    return pd.DataFrame(
        {
            **instance_columns(model, batch, output),
            "attention": real_tokens(output.attention, batch),
            "gradient": real_tokens(gradient, batch),
            "loo": real_tokens(loo, batch),
            "ig": real_tokens(ig, batch),
        }
    )


def instance_columns(model: AttentionModel, batch: Batch, output) -> dict:
    """The identifying columns every per-instance analysis table starts with."""
    return {
        "instance_id": batch.instance_ids,
        "length": (batch.lengths - 2).tolist(),
        "label": batch.labels.tolist(),
        "predicted": model.predict(output.logits).tolist(),
        "max_attention": output.attention.max(dim=-1).values.double().tolist(),
    }


def _batches(model: AttentionModel, rows: pd.DataFrame, batch_size: int) -> Iterator[Batch]:
    """The rows in their order as batches on the model's device."""
    device = model_device(model)
    return (batch.to(device) for batch in sequential_batches(rows, batch_size))


def permutation_table(
    model: AttentionModel, rows: pd.DataFrame, settings: AnalysisSettings, generator: torch.Generator
) -> pd.DataFrame:
    parts, start = [], time.perf_counter()
    for batch in _batches(model, rows, settings.batch_size):
        with torch.no_grad():
            output = model(batch)
        permutations = sample_permutations(batch, settings.permutations, generator)
        changes = permutation_output_changes(model, batch, permutations, settings.memory_budget_mb).double().cpu().numpy()
        parts.append(
            pd.DataFrame(
                {
                    **instance_columns(model, batch, output),
                    "median_output_change": np.median(changes, axis=1),
                    "output_changes": list(changes),
                }
            )
        )
        _progress("permutation", sum(map(len, parts)), len(rows), start)
    return pd.concat(parts, ignore_index=True)


def adversary_rows_per_chunk(rows: pd.DataFrame, settings: AnalysisSettings) -> int:
    """Instances optimised together: as many as the memory budget allows (the K x K diversity term dominates)."""
    width = int(rows["length"].max()) + 2 if len(rows) else 1
    per_row = 4 * 32 * (settings.adversary.candidates + 1) ** 2 * width
    return max(1, int(settings.memory_budget_mb * 2**20 // per_row))


def adversary_table(model: AttentionModel, rows: pd.DataFrame, settings: AnalysisSettings, seed: int) -> pd.DataFrame:
    """One row per instance: the epsilon-max adversarial attention and its output. Random starts are drawn per
    instance from (seed, instance id), so the memory budget's chunking changes no start."""
    parts, start = [], time.perf_counter()
    for batch in _batches(model, rows, adversary_rows_per_chunk(rows, settings)):
        result = adversarial_attention(model, batch, settings.adversary, progress_every=100, seed=seed)
        with torch.no_grad():
            predicted = model.predict(model(batch).logits)
        parts.append(
            pd.DataFrame(
                {
                    "instance_id": batch.instance_ids,
                    "length": (batch.lengths - 2).tolist(),
                    "label": batch.labels.tolist(),
                    "predicted": predicted.tolist(),
                    "max_attention": result.original_attention.max(dim=-1).values.double().tolist(),
                    "emax_jsd": result.emax_jsd.double().cpu().numpy(),
                    "emax_tvd": (0.5 * (result.emax_output - result.original_output).abs().sum(-1)).double().cpu().numpy(),
                    "adversarial_attention": real_tokens(result.emax_attention, batch),
                    "adversarial_output": result.emax_output.double().tolist(),
                    "original_output": result.original_output.double().tolist(),
                    "candidate_jsd": result.candidate_jsd.double().tolist(),
                    "candidate_tvd": result.candidate_tvd.double().tolist(),
                }
            )
        )
        _progress("adversary", sum(map(len, parts)), len(rows), start)
    return pd.concat(parts, ignore_index=True)
