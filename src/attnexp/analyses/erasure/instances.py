"""The erasure tests of a set of test instances, batched: per-instance tables of the first-flip and single-weight
tests (`erasure_attention.parquet`) and of comprehensiveness and sufficiency per bin (`erasure_input.parquet`)."""

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from attnexp.analyses.erasure import (
    ATTENTION_COLUMNS,
    ATTENTION_GRADIENT,
    ATTENTION_X_GRADIENT,
    INPUT_COLUMNS,
    RANDOM,
    RATIONALE,
)
from attnexp.analyses.erasure.attention import first_flip, single_weight
from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency
from attnexp.analyses.erasure.rankings import attention_gradients, random_draws, ranks, rationale_scores, scores_from_lists
from attnexp.analyses.erasure.settings import ErasureSettings
from attnexp.data.batching import sequential_batches
from attnexp.models.device import model_device
from attnexp.models.interface import AttentionModel


def usable_rankings(scores: pd.DataFrame) -> list[str]:
    """The ranking columns of `scores` (per-instance lists) that are defined everywhere (LOO skipped: NaN)."""
    return [c for c in scores.columns if c != "instance_id" and not scores[c].map(lambda v: bool(np.isnan(v).any())).any()]


def has_rationale(rows: pd.DataFrame) -> bool:
    return "rationale" in rows and bool((rows["rationale"].map(len) > 0).any())


def erasure_tables(
    model: AttentionModel,
    rows: pd.DataFrame,
    scores: pd.DataFrame,
    settings: ErasureSettings,
    *,
    seed: int,
    batch_size: int,
    attention_test: bool = True,
    offset: int = 1,
    progress: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(attention table, input table) for the instances `rows` and the rankings in `scores` (row i: rows' instance
    i; one column per ranking, lists over the real tokens, entry j at position j + `offset`), plus `random` (seeded
    by `seed` per instance) and, where instances have planted cues, `rationale` (those instances only).

    `attention_test`: also Serrano & Smith's test (`model.decode_erased`), with the model's own attention (`attention`,
    which carries the single-weight test) and their two attention-layer rankings where the model decodes one attention
    vector (`swappable`); otherwise the attention table has no rows."""
    if len(scores) != len(rows) or list(scores["instance_id"]) != list(rows["instance_id"]):
        raise ValueError("the scores must list the same instances as the rows, in the same order")
    named = usable_rankings(scores)
    oracle = has_rationale(rows)
    attention_parts, input_parts, start = [], [], time.perf_counter()
    device = model_device(model)
    for number, batch in enumerate(b.to(device) for b in sequential_batches(rows, batch_size)):
        first = number * batch_size
        part = slice(first, first + batch.size)
        with torch.no_grad():
            output = model(batch)
        given = {name: scores_from_lists(scores[name].iloc[part], batch, offset) for name in named}
        top = ranks(output.attention.double(), batch.real_mask).argmin(-1)  # position of rank 0: alpha's top item
        random, item = random_draws(batch, seed, top)  # the single-weight test's random item: never the top one
        given[RANDOM] = random
        if oracle:
            given[RATIONALE] = rationale_scores(rows["rationale"].iloc[part], batch)
        planted = rows["rationale"].iloc[part].map(len).to_numpy() > 0 if oracle else None
        n = batch.real_mask.sum(-1).cpu().numpy()
        ids = np.asarray(batch.instance_ids, dtype=object)
        stacked = torch.stack(list(given.values()), dim=1)
        comprehensiveness, sufficiency = comprehensiveness_sufficiency(
            model, batch, stacked, settings.bins, settings.memory_budget_mb
        )
        input_parts.append(
            _input_rows(ids, list(given), settings.bins, comprehensiveness.cpu().numpy(), sufficiency.cpu().numpy(), planted)
        )
        if attention_test:
            flips = dict(given)
            if "attention" not in flips:  # the model's own attention carries the single-weight test (A&Z rankings)
                flips = {"attention": output.attention.double() * batch.real_mask, **flips}
            if swappable(model):  # d p / d alpha needs the output as a function of one attention vector
                flips[ATTENTION_GRADIENT], flips[ATTENTION_X_GRADIENT] = attention_gradients(model, batch, output)
            fractions = first_flip(model, batch, torch.stack(list(flips.values()), dim=1), output, settings.memory_budget_mb)
            divergence, change, flipped = single_weight(model, batch, torch.stack([top, item], dim=1), output)
            numbers = (t.cpu().numpy() for t in (fractions, divergence, change, flipped))
            attention_parts.append(_attention_rows(ids, n, list(flips), *numbers, planted))
        if progress:
            print(f"  erasure: {first + batch.size}/{len(rows)} instances, {time.perf_counter() - start:.1f}s", flush=True)
    attention = pd.concat(attention_parts, ignore_index=True) if attention_parts else _empty(ATTENTION_COLUMNS)
    inputs = pd.concat(input_parts, ignore_index=True) if input_parts else _empty(INPUT_COLUMNS)
    return attention, inputs


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    types = {"instance_id": str, "ranking": str, "n": "int64", "flip_top": "boolean", "flip_random": "boolean"}
    return pd.DataFrame({c: pd.Series(dtype=types.get(c, float)) for c in columns})


def _keep(names: Sequence[str], planted: np.ndarray) -> np.ndarray:
    """[B, R]: which (instance, ranking) rows exist: the rationale ranking only on instances with planted cues."""
    keep = np.ones((len(planted), len(names)), dtype=bool)
    if RATIONALE in names:
        keep[:, names.index(RATIONALE)] = planted
    return keep


def _attention_rows(
    ids: np.ndarray,
    n: np.ndarray,
    names: list[str],
    fractions: np.ndarray,
    divergence: np.ndarray,
    change: np.ndarray,
    flipped: np.ndarray,
    planted: np.ndarray | None,
) -> pd.DataFrame:
    size, rankings = fractions.shape
    is_attention = np.array([name == "attention" for name in names])[None, :].repeat(size, 0)
    single = lambda column: np.where(is_attention, column[:, None], np.nan)  # noqa: E731
    flag = lambda column: pd.array(np.where(is_attention, column[:, None], False).ravel(), dtype="boolean")  # noqa: E731
    table = pd.DataFrame(
        {
            "instance_id": ids.repeat(rankings),
            "ranking": np.tile(np.asarray(names, dtype=object), size),
            "n": n.astype(np.int64).repeat(rankings),
            "first_flip_fraction": fractions.ravel(),
            "jsd_top": single(divergence[:, 0]).ravel(),
            "jsd_random": single(divergence[:, 1]).ravel(),
            "flip_top": flag(flipped[:, 0]),
            "flip_random": flag(flipped[:, 1]),
            "tvd_top": single(change[:, 0]).ravel(),
            "tvd_random": single(change[:, 1]).ravel(),
        }
    )
    undefined = ~is_attention.ravel() | np.isnan(table["jsd_top"].to_numpy())  # other rankings; fewer than 2 items
    table.loc[undefined, ["flip_top", "flip_random"]] = pd.NA
    keep = _keep(names, planted).ravel() if planted is not None else np.ones(len(table), dtype=bool)
    return table[keep].reset_index(drop=True)


def _input_rows(
    ids: np.ndarray,
    names: list[str],
    bins: Sequence[float],
    comprehensiveness: np.ndarray,
    sufficiency: np.ndarray,
    planted: np.ndarray | None,
) -> pd.DataFrame:
    size, rankings, count = comprehensiveness.shape
    table = pd.DataFrame(
        {
            "instance_id": ids.repeat(rankings * count),
            "ranking": np.tile(np.asarray(names, dtype=object).repeat(count), size),
            "k": np.tile(np.asarray(bins, dtype=float), size * rankings),
            "comprehensiveness": comprehensiveness.ravel(),
            "sufficiency": sufficiency.ravel(),
        }
    )
    keep = _keep(names, planted).repeat(count, axis=1).ravel() if planted is not None else np.ones(len(table), dtype=bool)
    return table[keep].reset_index(drop=True)


def az_rankings(relevance: pd.DataFrame, gradient: str) -> pd.DataFrame:
    """The A&Z rankings of a relevance table (`attnexp.analyses.az.measures`; vectors over the input positions from 0):
    raw, rollout and flow at the last layer, blank-out, and the input-gradient measure named `gradient` (a column of
    the table: the measure the A&Z job resolved, not a setting such as "auto")."""
    if gradient not in relevance:
        raise ValueError(f"the relevance table has no input-gradient column {gradient!r}; pass the measure's name")
    last = {method: relevance[method].map(lambda layers: list(layers[-1])) for method in ("raw", "rollout", "flow")}
    return pd.DataFrame(
        {"instance_id": relevance["instance_id"], **last, "blankout": relevance["blankout"], gradient: relevance[gradient]}
    )


def swappable(model: AttentionModel) -> bool:
    """Whether the model decodes any one attention vector over fixed states (for d p / d alpha): every model but the
    standard Transformer (`transformer-self`), whose heads attend separately (its erasure test erases every head)."""
    return bool(getattr(model, "tied", True))
