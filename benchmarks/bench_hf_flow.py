"""Attention flow on a Hugging Face-sized model: seconds per sentence at 12 layers x 128 tokens, ours vs networkx.

A randomly initialised 12-layer, 12-head BERT (width 192, weights drawn with std `--init-std` so that attention is
far from uniform, as in a trained model) reads `--sentences` random 128-piece sentences through the
`attnexp.models.hf` wrapper; its attention maps go through the pipeline's path (head average, 0.5 I residual,
`batch_flow` with SciPy on integer capacities) for the [CLS] row at every layer: 12 x 128 max-flow problems per
sentence. networkx (its default preflow-push, and Edmonds-Karp as the authors use) would need hours for one
sentence, so it solves `--nx-problems` (`--ek-problems`) of those problems (spread over the layers, on the full graph as the
authors build it) and its per-sentence time is that mean times 12 x 128, labelled "extrapolated"; the
sampled problems' normalised flows are compared with ours. The machine may be shared: read the ratio, and
`cat /proc/loadavg` beside it.
Run: PYTHONPATH=src python benchmarks/bench_hf_flow.py [--sentences 4] [--nx-problems 6] [--ek-problems 2]
"""

import argparse
import time

import numpy as np
import torch


def main() -> None:
    import networkx as nx
    import pandas as pd
    from networkx.algorithms.flow import edmonds_karp, preflow_push
    from transformers import BertConfig, BertForSequenceClassification

    from attnexp.analyses.az.flow import batch_flow, networkx_graph, scipy_flows
    from attnexp.analyses.az.rollout import head_average, residual_augment
    from attnexp.data.batching import collate
    from attnexp.models.hf.loading import wrap_pretrained

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--sentences", type=int, default=4)
    parser.add_argument("--nx-problems", type=int, default=6, help="max-flow problems networkx's preflow-push solves")
    parser.add_argument("--ek-problems", type=int, default=2, help="max-flow problems networkx's Edmonds-Karp solves")
    parser.add_argument("--init-std", type=float, default=0.2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers, n = args.layers, args.tokens
    config = BertConfig(
        vocab_size=1000,
        hidden_size=192,
        num_hidden_layers=layers,
        num_attention_heads=12,
        intermediate_size=768,
        max_position_embeddings=max(512, n),
        initializer_range=args.init_std,
    )
    model = wrap_pretrained(BertForSequenceClassification(config).eval())
    rng = np.random.default_rng(0)
    tokens = [[101, *rng.integers(1000 - 900, 1000, n - 2).tolist(), 102] for _ in range(args.sentences)]
    batch = collate(pd.DataFrame({"tokens": tokens, "label": 0, "instance_id": [str(i) for i in range(args.sentences)]}))
    start = time.perf_counter()
    with torch.no_grad():
        augmented = residual_augment(head_average(model(batch).encoded.maps)).double().numpy()
    forward = (time.perf_counter() - start) / args.sentences
    lengths = np.full(args.sentences, n)

    start, cpu = time.perf_counter(), time.process_time()
    ours, seconds = batch_flow(augmented, lengths, progress=False)
    per_sentence = (time.perf_counter() - start) / args.sentences
    cpu_per_sentence = (time.process_time() - cpu) / args.sentences

    example = augmented[0]
    graph = networkx_graph(example)

    def spread(count: int) -> list[tuple[int, int]]:
        """`count` (layer, sink) problems spread evenly over the layers, random sinks."""
        return [(1 + (i * layers) // count, int(rng.integers(n))) for i in range(count)]

    solvers = (
        ("preflow_push (networkx default)", preflow_push, spread(args.nx_problems)),
        ("edmonds_karp (authors)", edmonds_karp, spread(args.ek_problems)),
    )
    unnormalised = {layer: scipy_flows([(example, 0, layer)], 1e6)[0] for layer in range(1, layers + 1)}
    timings, worst = {}, 0.0
    for name, solver, problems in solvers:
        if not problems:
            continue
        start = time.perf_counter()
        for layer, sink in problems:
            value = nx.maximum_flow_value(graph, layer * n, sink, flow_func=solver)
            worst = max(worst, abs(value - unnormalised[layer][sink]))
        timings[f"{name}, {len(problems)} problems"] = (time.perf_counter() - start) / len(problems) * layers * n
    max_pieces = float(np.abs(ours[0].sum(-1) - 1).max())
    print(f"model: BERT {layers} layers x 12 heads, {n} tokens, {args.sentences} sentences (forward {forward:.3f} s/sentence)")
    print(
        f"ours (scipy, batch_flow, [CLS] row of every layer): {per_sentence:.2f} s/sentence, "
        f"CPU {cpu_per_sentence:.2f} s (rows sum to 1 +- {max_pieces:.0e})"
    )
    for name, value in timings.items():
        print(f"networkx {name}: {value:.0f} s/sentence (extrapolated); ours is {value / per_sentence:.0f}x faster")
    print(f"max |ours - networkx| max-flow value on the sampled problems: {worst:.1e}")


if __name__ == "__main__":
    main()
