"""Attention flow (A&Z §3.5): max-flow from an output node to each input node of the layered graph.

Nodes (k, j), k = 0 (input) .. L, j = 0 .. n-1, indexed k*n + j; edge (k, i) -> (k-1, j) has capacity
Â_k[i, j]. Edges only go down, so one graph per example serves every (layer, query) source: nodes above
the source are unreachable (the networkx solver, the authors' and pure Python, uses that graph). The SciPy
solver (the default) prunes it per (layer, query, sink) problem and packs many problems into one union graph
(`_union_graph`); SciPy's C max-flow needs integer capacities, so they are scaled by 10^6 and rounded, and the
flow value is scaled back.
"""

import time

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow
from tqdm import tqdm

FLOW_SOLVERS = ("scipy", "networkx")


def _edges(augmented: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    layers, n, _ = augmented.shape
    k, i, j = np.nonzero(augmented > 0)
    return (k + 1) * n + i, k * n + j, augmented[k, i, j]


def networkx_graph(augmented: np.ndarray):
    """One example's layered graph as a networkx DiGraph with float capacities (reference solver)."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range((augmented.shape[0] + 1) * augmented.shape[1]))
    for s, t, c in zip(*_edges(augmented), strict=True):
        graph.add_edge(int(s), int(t), capacity=float(c))
    return graph


def _union_graph(units: list[tuple[np.ndarray, int, int]], scale: float) -> tuple[csr_matrix, list[np.ndarray]]:
    """Disjoint copies of the pruned graph, one per (example, layer, sink) problem, joined by a super source
    (node 0) and a super sink (node 1). A unit (Â [L, n, n], query q, layer l) stands for the n problems of
    one example's layer.

    Copy (l, j) keeps only what a flow from (l, q) to (0, j) can use: the query row at the top, full layers
    below it and column j at the bottom. Copies share no node, so a maximum flow of the union is a maximum
    flow of every copy, and each copy's value is the flow on its edge from the super source.
    Returns the graph and, per unit, the top nodes of its n copies.
    """
    edges, tops_per_unit, offset, cache = [], [], 2, {}
    for augmented, query, layer in units:
        n = augmented.shape[1]
        if id(augmented) not in cache:
            capacity = np.rint(augmented * scale).astype(np.int64)
            nonzero = [np.nonzero(c > 0) for c in capacity]
            cache[id(augmented)] = capacity, [(i, j, capacity[k, i, j]) for k, (i, j) in enumerate(nonzero)]
        capacity, nonzero = cache[id(augmented)]
        size = 2 + (layer - 1) * n  # top, middle layers layer-1 .. 1, bottom
        tops = offset + size * np.arange(n)
        bottom = tops + size - 1
        if layer == 1:
            edges.append((tops, bottom, capacity[0, query]))
        else:
            middle = tops[:, None] + 1
            edges.append((np.repeat(tops, n), (middle + np.arange(n)).ravel(), np.tile(capacity[layer - 1, query], n)))
            for depth, k in enumerate(range(layer - 1, 1, -1)):  # layer k -> layer k-1
                i, j, c = nonzero[k - 1]
                upper = middle + depth * n
                edges.append(((upper + i).ravel(), (upper + n + j).ravel(), np.tile(c, n)))
            lowest = middle + (layer - 2) * n + np.arange(n)
            edges.append((lowest.ravel(), np.repeat(bottom, n), capacity[0].T.ravel()))
        edges.append((np.zeros(n, dtype=np.int64), tops, np.full(n, 2 * int(scale))))
        edges.append((bottom, np.ones(n, dtype=np.int64), np.full(n, 2 * int(scale))))
        tops_per_unit.append(tops)
        offset += size * n
    source, target, cap = (np.concatenate([e[part] for e in edges]) for part in range(3))
    keep = np.nonzero(cap > 0)[0]
    keep = keep[np.argsort(source[keep], kind="stable")]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(source[keep], minlength=offset))]).astype(np.int32)
    graph = csr_matrix((cap[keep].astype(np.int32), target[keep].astype(np.int32), indptr), shape=(offset, offset))
    return graph, tops_per_unit


UNION_MAX_POSITIONS = 32  # longer examples: one SciPy call per problem on one pruned graph (the union grows as n^3)


def _layer_flows(augmented: np.ndarray, query: int, layer: int, scale: float) -> np.ndarray:
    """Raw max-flow values [n] of one (example, query, layer) unit: one SciPy call per sink on the graph pruned
    to layers <= `layer` with only the query row at the top (the same integer capacities as the union)."""
    n = augmented.shape[1]
    capacity = np.rint(augmented[:layer] * scale).astype(np.int64)
    top = np.zeros_like(capacity[layer - 1])
    top[query] = capacity[layer - 1, query]
    capacity[layer - 1] = top
    k, i, j = np.nonzero(capacity > 0)
    size = (layer + 1) * n
    graph = csr_matrix((capacity[k, i, j].astype(np.int32), ((k + 1) * n + i, k * n + j)), shape=(size, size), dtype=np.int32)
    return np.array([maximum_flow(graph, layer * n + query, sink).flow_value for sink in range(n)]) / scale


def scipy_flows(units: list[tuple[np.ndarray, int, int]], scale: float) -> list[np.ndarray]:
    """Raw max-flow values [n] of each (example, query, layer) unit: units of up to `UNION_MAX_POSITIONS`
    positions in one SciPy call on their union graph, longer ones problem by problem (`_layer_flows`).
    Integer max-flow values are unique, so both ways give the same numbers."""
    long = [u for u, unit in enumerate(units) if unit[0].shape[1] > UNION_MAX_POSITIONS]
    if long:
        short = [u for u in range(len(units)) if u not in set(long)]
        out = dict(zip(short, scipy_flows([units[u] for u in short], scale) if short else [], strict=True))
        out |= {u: _layer_flows(*units[u], scale) for u in long}
        return [out[u] for u in range(len(units))]
    graph, tops = _union_graph(units, scale)
    flow = maximum_flow(graph, 0, 1).flow.tocsr()
    out_of_source = np.zeros(graph.shape[0])
    start, stop = flow.indptr[0], flow.indptr[1]
    out_of_source[flow.indices[start:stop]] = flow.data[start:stop]
    return [out_of_source[t] / scale for t in tops]


def _chunks(costs: list[int], max_problems: int) -> list[list[int]]:
    """Consecutive indices grouped so that each group's total cost stays within `max_problems` (or is one item)."""
    chunks, current, load = [], [], 0
    for index, cost in enumerate(costs):
        if current and load + cost > max_problems:
            chunks.append(current)
            current, load = [], 0
        current.append(index)
        load += cost
    return chunks + ([current] if current else [])


def _normalised(values: np.ndarray) -> np.ndarray:
    return values / np.maximum(values.sum(axis=-1, keepdims=True), 1e-12)


def attention_flow(
    augmented: np.ndarray,
    query: int = 0,
    solver: str = "scipy",
    scale: float = 1e6,
    normalise: bool = True,
    max_problems: int = 64,
) -> np.ndarray:
    """Flow relevance [L, n] of output position `query` at every layer l = 1 .. L for one example.

    `augmented` is Â [L, n, n] cropped to the example's n positions. With `normalise`, each row is
    f_l / sum_j f_l(j) (r_flow,l); otherwise the raw max-flow values f_l(j) in [0, 1].
    """
    n_layers, n, _ = augmented.shape
    if solver == "scipy":
        units = [(augmented, query, layer) for layer in range(1, n_layers + 1)]
        flows = [f for chunk in _chunks([n] * n_layers, max_problems) for f in scipy_flows([units[u] for u in chunk], scale)]
        values = np.stack(flows)
    elif solver == "networkx":
        import networkx as nx
        from networkx.algorithms.flow import edmonds_karp

        graph = networkx_graph(augmented)
        values = np.array(
            [
                [nx.maximum_flow_value(graph, layer * n + query, j, flow_func=edmonds_karp) for j in range(n)]
                for layer in range(1, n_layers + 1)
            ]
        )
    else:
        raise ValueError(f"unknown flow solver {solver!r}; choose one of {FLOW_SOLVERS}")
    return _normalised(values) if normalise else values


def batch_flow(
    augmented: np.ndarray,
    lengths: np.ndarray,
    query: int | np.ndarray = 0,
    row: str = "cls",
    solver: str = "scipy",
    scale: float = 1e6,
    progress: bool = True,
    max_problems: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """Flow relevance of every layer for a padded batch Â [B, L, n, n] from position `query` (one for all, or one
    per example): ([B, L, n], seconds per example).

    Each example is cropped to its own length; padding gets 0. With SciPy, the n problems of one example's
    layer form a unit, and consecutive units are packed into one max-flow call up to `max_problems` problems
    (Dinic's phases span the whole union, so packing pays only while call overhead dominates); each example
    is charged its share of the calls' time. `row="max_over_rows"` (authors' SST quirk) takes
    the element-wise max of the normalised flows over every query position, n times the cost.
    """
    if row not in ("cls", "max_over_rows"):
        raise ValueError(f"unknown relevance row {row!r}; choose one of ('cls', 'max_over_rows')")
    batch, n_layers, width, _ = augmented.shape
    out, seconds = np.zeros((batch, n_layers, width)), np.zeros(batch)
    at = np.broadcast_to(np.asarray(query), (batch,))  # the query position of each example (a decoder's: its last)
    queries = [(b, q) for b in range(batch) for q in (range(int(lengths[b])) if row == "max_over_rows" else [int(at[b])])]
    if solver != "scipy":
        for b, q in tqdm(queries, desc="attention flow", disable=not progress, mininterval=5):
            n, start = int(lengths[b]), time.perf_counter()
            values = attention_flow(augmented[b, :, :n, :n], q, solver, scale)
            out[b, :, :n] = np.maximum(out[b, :, :n], values)
            seconds[b] += time.perf_counter() - start
    else:
        crops = {b: augmented[b, :, : int(lengths[b]), : int(lengths[b])] for b in range(batch)}
        units = [(b, q, layer) for b, q in queries for layer in range(1, n_layers + 1)]
        costs = [int(lengths[b]) for b, _, _ in units]
        for chunk in tqdm(_chunks(costs, max_problems), desc="attention flow", disable=not progress, mininterval=5):
            start = time.perf_counter()
            flows = scipy_flows([(crops[units[u][0]], units[u][1], units[u][2]) for u in chunk], scale)
            for u, values in zip(chunk, flows, strict=True):
                b, _, layer = units[u]
                out[b, layer - 1, : len(values)] = np.maximum(out[b, layer - 1, : len(values)], _normalised(values))
            share = np.array([costs[u] for u in chunk], dtype=float)
            np.add.at(seconds, [units[u][0] for u in chunk], (time.perf_counter() - start) * share / share.sum())
    if row == "max_over_rows":
        out = _normalised(out)
    return out, seconds
