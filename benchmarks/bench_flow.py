"""Attention rollout and flow: seconds per sentence for our solvers vs networkx, by length and depth.

For each (layers, n) it builds random attention (8 heads), and times, for the [CLS] row at every layer:
rollout (torch), flow with SciPy on integer capacities (attnexp.analyses.az.flow) for one sentence alone and per
sentence in a batch of 20 (one SciPy call per batch, as the pipeline runs it), and networkx's default
max-flow (preflow-push) and Edmonds-Karp (the authors' choice) on the same graph, one max-flow per input
token. Ours are the best of 5 repeats; speed-ups are networkx's time over the faster of our two modes
(the pipeline's `batch_flow` packs only small examples, so it runs the faster one). The machine is shared,
so absolute times vary; the ratios are what to read.
Run: PYTHONPATH=src python benchmarks/bench_flow.py [--quick]
"""

import argparse
import time

import networkx as nx
import numpy as np
import torch
from networkx.algorithms.flow import edmonds_karp, preflow_push

from attnexp.analyses.az.flow import attention_flow, batch_flow, networkx_graph
from attnexp.analyses.az.rollout import head_average, residual_augment, rollout_relevance


def timed(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def networkx_flow(augmented: np.ndarray, flow_func) -> np.ndarray:
    layers, n, _ = augmented.shape
    graph = networkx_graph(augmented)
    values = np.array(
        [[nx.maximum_flow_value(graph, layer * n, j, flow_func=flow_func) for j in range(n)] for layer in range(1, layers + 1)]
    )
    return values / values.sum(axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    sizes = [(2, 8), (6, 8), (6, 16)] if args.quick else [(2, 8), (2, 32), (6, 8), (6, 16), (6, 32), (12, 16)]
    print(
        f"{'layers':>6} {'n':>4} {'rollout s':>10} {'scipy 1 s':>9} {'scipy b s':>9} {'nx default s':>12} {'nx EK s':>9} "
        f"{'x default':>9} {'x EK':>7} {'max |diff|':>10}"
    )
    for layers, n in sizes:
        maps = torch.softmax(torch.as_tensor(rng.normal(size=(1, layers, 8, n, n)) * 3), dim=-1)
        lengths = torch.tensor([n])
        augmented = residual_augment(head_average(maps))[0].numpy()
        t_roll, _ = timed(lambda: rollout_relevance(maps, lengths), 5)  # noqa: B023
        t_ours, ours = timed(lambda: attention_flow(augmented), 5)  # noqa: B023
        batch = np.stack([augmented] * 20)
        t_batch, _ = timed(lambda: batch_flow(batch, np.full(20, n), progress=False), 5)  # noqa: B023
        t_batch /= 20
        t_best = min(t_ours, t_batch)
        t_default, reference = timed(lambda: networkx_flow(augmented, preflow_push), 1)  # noqa: B023
        t_ek = float("nan")
        if layers * n * n <= 6 * 16 * 16:
            t_ek, _ = timed(lambda: networkx_flow(augmented, edmonds_karp), 1)  # noqa: B023
        print(
            f"{layers:>6} {n:>4} {t_roll:>10.5f} {t_ours:>9.4f} {t_batch:>9.4f} {t_default:>12.3f} {t_ek:>9.3f} "
            f"{t_default / t_best:>9.0f} {t_ek / t_best:>7.0f} {np.abs(ours - reference).max():>10.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
