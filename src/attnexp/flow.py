"""Attention flow (A&Z §3.5): max-flow from an output node to each input node of the layered graph.

Nodes (k, j), k = 0 (input) .. L, j = 0 .. n-1, indexed k*n + j; edge (k, i) -> (k-1, j) has capacity
Â_k[i, j]. Edges only go down, so one graph per example serves every (layer, query) source: nodes above
the source are unreachable. SciPy's C max-flow needs integer capacities, so they are scaled by 10^6 and
rounded; the flow value is scaled back. networkx (the authors' solver, pure Python) is an option.
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


def flow_graph(augmented: np.ndarray, scale: float = 1e6) -> csr_matrix:
    """Integer-capacity CSR graph of one example's augmented attention [layers, n, n]."""
    layers, n, _ = augmented.shape
    source, target, capacity = _edges(augmented)
    size = (layers + 1) * n
    return csr_matrix((np.rint(capacity * scale).astype(np.int32), (source, target)), shape=(size, size))


def networkx_graph(augmented: np.ndarray):
    """The same graph as a networkx DiGraph with float capacities (reference solver)."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range((augmented.shape[0] + 1) * augmented.shape[1]))
    for s, t, c in zip(*_edges(augmented), strict=True):
        graph.add_edge(int(s), int(t), capacity=float(c))
    return graph


def _union_graph(augmented: np.ndarray, problems: list[tuple[int, int]], query: int, scale: float
                 ) -> tuple[csr_matrix, np.ndarray]:
    """Disjoint copies of the pruned graph, one per (layer, sink) problem, joined by a super source/sink.

    Copy c keeps only what a flow from (layer, query) to (0, sink) can use: the query row at the top,
    full layers below it and the sink's column at the bottom. Copies share no node, so a maximum flow of
    the union is a maximum flow of every copy, and copy c's value is the flow on its edge into the super
    sink (node 1; node 0 is the super source). Returns the graph and each copy's bottom node.
    """
    n = augmented.shape[1]
    capacity = np.rint(augmented * scale).astype(np.int64)
    edges, bottoms = [], np.zeros(len(problems), dtype=np.int64)
    layers = np.array([p[0] for p in problems])
    sinks = np.array([p[1] for p in problems])
    offset = 2
    for layer in np.unique(layers):
        index = np.nonzero(layers == layer)[0]
        size = 2 + (layer - 1) * n  # top, middle layers layer-1 .. 1, bottom
        tops = offset + size * np.arange(len(index))
        bottom = tops + size - 1
        bottoms[index] = bottom
        if layer == 1:
            edges.append((tops, bottom, capacity[0, query, sinks[index]]))
        else:
            middle = tops[:, None] + 1
            edges.append((np.repeat(tops, n), (middle + np.arange(n)).ravel(), np.tile(capacity[layer - 1, query], len(index))))
            for depth, k in enumerate(range(layer - 1, 1, -1)):  # layer k -> layer k-1
                i, j = np.nonzero(capacity[k - 1] > 0)
                upper = middle + depth * n
                edges.append(((upper + i).ravel(), (upper + n + j).ravel(), np.tile(capacity[k - 1, i, j], len(index))))
            lowest = middle + (layer - 2) * n + np.arange(n)
            edges.append((lowest.ravel(), np.repeat(bottom, n), capacity[0][:, sinks[index]].T.ravel()))
        edges.append((np.zeros(len(index), dtype=np.int64), tops, np.full(len(index), 2 * int(scale))))
        edges.append((bottom, np.ones(len(index), dtype=np.int64), np.full(len(index), 2 * int(scale))))
        offset += size * len(index)
    source, target, cap = (np.concatenate([e[part] for e in edges]) for part in range(3))
    keep = cap > 0
    graph = csr_matrix((cap[keep].astype(np.int32), (source[keep], target[keep])), shape=(offset, offset))
    return graph, bottoms


def attention_flow(augmented: np.ndarray, layers: list[int] | None = None, query: int = 0, solver: str = "scipy",
                   scale: float = 1e6, normalise: bool = True, max_problems: int = 1000) -> np.ndarray:
    """Flow relevance [len(layers), n] of output position `query` at each layer (1-based) for one example.

    `augmented` is Â [L, n, n] cropped to the example's n positions. With `normalise`, each row is
    f_l / sum_j f_l(j) (r_flow,l); otherwise the raw max-flow values f_l(j) in [0, 1]. The scipy solver
    answers up to `max_problems` (layer, sink) problems per call (see `_union_graph`).
    """
    n_layers, n, _ = augmented.shape
    layers = list(range(1, n_layers + 1)) if layers is None else list(layers)
    values = np.zeros((len(layers), n))
    if solver == "scipy":
        problems = [(row, layer, j) for row, layer in enumerate(layers) for j in range(n)]
        for start in range(0, len(problems), max_problems):
            chunk = problems[start : start + max_problems]
            graph, bottoms = _union_graph(augmented, [(layer, j) for _, layer, j in chunk], query, scale)
            into_sink = maximum_flow(graph, 0, 1).flow.tocsc()[:, 1].toarray().ravel()[bottoms] / scale
            for (row, _, j), value in zip(chunk, into_sink, strict=True):
                values[row, j] = value
    elif solver == "networkx":
        import networkx as nx
        from networkx.algorithms.flow import edmonds_karp

        graph = networkx_graph(augmented)
        for row, layer in enumerate(layers):
            for j in range(n):
                values[row, j] = nx.maximum_flow_value(graph, layer * n + query, j, flow_func=edmonds_karp)
    else:
        raise ValueError(f"unknown flow solver {solver!r}; choose one of {FLOW_SOLVERS}")
    if normalise:
        values = values / np.maximum(values.sum(axis=1, keepdims=True), 1e-12)
    return values


def batch_flow(augmented: np.ndarray, lengths: np.ndarray, query: int = 0, row: str = "cls", solver: str = "scipy",
               scale: float = 1e6, progress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Flow relevance of every layer for a padded batch Â [B, L, n, n]: ([B, L, n], seconds per example).

    Each example is cropped to its own length; padding gets 0. `row="max_over_rows"` (authors' SST quirk)
    takes the element-wise max of the normalised flows over every query position, n times the cost.
    """
    batch, n_layers, width, _ = augmented.shape
    out = np.zeros((batch, n_layers, width))
    seconds = np.zeros(batch)
    for b in tqdm(range(batch), desc="attention flow", disable=not progress, mininterval=5):
        n = int(lengths[b])
        start = time.perf_counter()
        example = augmented[b, :, :n, :n]
        if row == "cls":
            out[b, :, :n] = attention_flow(example, query=query, solver=solver, scale=scale)
        elif row == "max_over_rows":
            out[b, :, :n] = np.max([attention_flow(example, query=q, solver=solver, scale=scale) for q in range(n)], axis=0)
            out[b, :, :n] /= out[b, :, :n].sum(axis=-1, keepdims=True)
        else:
            raise ValueError(f"unknown relevance row {row!r}; choose one of ('cls', 'max_over_rows')")
        seconds[b] = time.perf_counter() - start
    return out, seconds
