"""The whole J&W analyses job (`hf_analyze`) on a MiniLM-shaped Hugging Face classifier, stage by stage.

Per stage: seconds, the floating-point operations the definitions require, the achieved rate beside the machine's
measured matmul rate, and peak memory.

The model is a `BertConfig` built at random (6 layers, width 384, 12 heads, intermediate 1536, vocabulary 30,522,
2 labels: MiniLM-L6's shape; `--layers` etc. change it) wrapped by `attnexp.models.hf.loading.wrap_pretrained(model,
task="bc")`. It reads `--sentences` random id sequences ([CLS] ... [SEP]; default 1,726, SST's test split) whose
lengths follow SST's test split in word pieces (log-normal, mean ~23, as bench_hf_decode.py), length-sorted as
preprocessing sorts a test split, in batches of `--batch-size` (32: the analyses job's batch size for a Hugging Face
model is its `hf.train.batch_size`), and runs what the workflow's `hf_analyze` job runs (`pipeline.jw.run_analyze`),
in its order and with its library calls and arguments (`analyses.memory_budget_mb`, `bc_loo: true`):
- the importance table, per batch: the forward, leave-one-out, the gradient, integrated gradients (`--ig-steps`, the
  config's 16; the (instance, step) chunks from `rows_per_chunk(..., backward=True)`);
- Kendall tau over the six pairs of attention, gradient, LOO and IG;
- the erasure tables, per batch: the forward, ERASER comprehensiveness and sufficiency (5 bins) for the five
  rankings (attention, gradient, LOO, IG, random), the first-flip test for the same five and the single-weight test
  (the top item and a random other one);
- the permutation table, per batch: the forward and the permutation test (`--permutations`, 100).

FLOPs counted per forward pass of T tokens: 2 x non-embedding parameters x T for the matmuls, plus 4 x T^2 x width
per layer for attention; a backward pass costs twice its forward (the gradient: one forward and one backward;
integrated gradients: that per step). Decoding from the last layer (permutation, first flip, single weight) counts
what the definition needs: the last layer at [CLS] alone (its weights once, the row over T values). The counts are
the definitions', not what the code runs (first flip decodes every k up to the batch's longest), so a stage's rate
below the matmul rate is overhead as much as slow kernels. `--decode-whole-layer` decodes the last layer over every
position, as before the [CLS]-alone decode. A measurement, not a test: the machine may be shared, so the load is
printed beside the figures.

Run: PYTHONPATH=src python benchmarks/bench_hf_job.py [--sentences 1726] [--threads 2] [--ig-steps 16]
"""

import os
import time

import numpy as np
import pandas as pd
import torch
from _common import Stages, matmul_rate, model_shape_options, peak_gib, sentence_batches, sentences, workload_parser


def main() -> None:
    from transformers import BertConfig, BertForSequenceClassification

    from attnexp.analyses.erasure import BINS, JW_RANKINGS, RANDOM
    from attnexp.analyses.erasure.attention import first_flip, single_weight
    from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency, top_counts
    from attnexp.analyses.erasure.instances import swappable
    from attnexp.analyses.erasure.rankings import random_draws, ranks, scores_from_lists
    from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out, rows_per_chunk
    from attnexp.analyses.jw.instances import importance_rows
    from attnexp.analyses.jw.kendall import computed_pairs, kendall_tau_per_instance
    from attnexp.analyses.jw.permutation import permutation_output_changes, sample_permutations
    from attnexp.models.device import set_threads
    from attnexp.models.hf.loading import wrap_pretrained

    parser = workload_parser(__doc__.splitlines()[0])
    parser.set_defaults(sentences=1726, batch_size=32)
    model_shape_options(parser, layers=6, width=384, heads=12, intermediate=1536, vocab=30522)
    parser.add_argument("--ig-steps", type=int, default=16, help="analyses.ig_steps (the config's 16; J&W-style 50)")
    parser.add_argument("--memory-budget-mb", type=float, default=256.0, help="analyses.memory_budget_mb (the schema's default)")
    parser.add_argument("--seed", type=int, default=0, help="the labels' seed: the permutations' and random ranking's")
    parser.add_argument(
        "--decode-whole-layer",
        action="store_true",
        help="decode the last layer over every position (decode_query_alone = False: before the [CLS]-alone decode)",
    )
    args = parser.parse_args()

    rate = matmul_rate(args.threads, args.width, args.intermediate)
    set_threads(args.threads)  # as the job: torch's threads, oneDNN's primitive cache off
    torch.manual_seed(0)
    hf = BertConfig(
        vocab_size=args.vocab,
        hidden_size=args.width,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=args.intermediate,
        num_labels=2,
    )
    network = BertForSequenceClassification(hf).eval()
    model = wrap_pretrained(network, task="bc")
    model.decode_query_alone = not args.decode_whole_layer
    ids = sentences(args.sentences, args.vocab, seed=0, first=101, last=102, lowest=1000)  # [CLS] ... [SEP]
    ids = sorted(ids, key=len)  # length-sorted, as preprocessing sorts a test split
    rows, batches = sentence_batches(ids, args.batch_size)
    mb = args.memory_budget_mb

    body = sum(p.numel() for name, p in network.named_parameters() if ".embeddings." not in name)

    def forward_flops(tokens: int, layers: int | None = None) -> float:
        share = 1.0 if layers is None else layers / args.layers
        return share * (2 * body * tokens) + (layers or args.layers) * 4 * tokens**2 * args.width

    def decode_flops(tokens: int) -> float:
        """One decode from the last layer: its [CLS] row alone (the layer's weights once, the row over T values)."""
        return 2 * body / args.layers + 2 * tokens * args.width

    def per_instance(batch, cost) -> float:
        """`cost(n, T)` summed over the batch's instances (n real tokens, T = n + 2 with [CLS] and [SEP])."""
        return sum(cost(n, n + 2) for n in (batch.lengths - 2).tolist())

    stages = Stages()
    timed = stages.timed
    rankings = (*JW_RANKINGS, RANDOM)  # the erasure tables' rankings of a model without d p / d alpha (issue 37)
    assert not swappable(model)

    # the importance table (analyses.jw.instances.importance_table)
    parts = []
    for batch in batches:
        fw = per_instance(batch, lambda n, t: forward_flops(t))
        with torch.no_grad():
            output = timed("forward", fw, lambda b=batch: model(b))
        loo = timed(
            "leave-one-out",
            per_instance(batch, lambda n, t: n * forward_flops(t - 1)),
            lambda b=batch: leave_one_out(model, b, mb),
        )
        gradient = timed("gradient", 3 * fw, lambda b=batch: gradient_importance(model, b, None, mb))
        ig_rows = rows_per_chunk(model, batch.tokens.shape[1], mb, backward=True)  # (instance, step) rows, as the job
        ig = timed(
            f"IG ({args.ig_steps} steps)",
            3 * args.ig_steps * fw,
            lambda b=batch, r=ig_rows: integrated_gradients(model, b, args.ig_steps, r, target=None),
        )
        parts.append(importance_rows(model, batch, output, gradient, loo, ig))
    importance = pd.concat(parts, ignore_index=True)
    pairs = computed_pairs(loo=True, ig=True)
    taus = timed("Kendall tau", 0, lambda: kendall_tau_per_instance(importance, pairs))

    # the erasure tables (analyses.erasure.instances.erasure_tables)
    def eraser_flops(n: int, t: int) -> float:
        counts = set(top_counts(torch.tensor([n]), BINS)[0].tolist())  # identical variants run once
        return len(rankings) * sum(forward_flops(t - c) + forward_flops(c + 2) for c in counts)

    for number, batch in enumerate(batches):
        part = slice(number * args.batch_size, number * args.batch_size + batch.size)
        with torch.no_grad():
            output = timed("forward", per_instance(batch, lambda n, t: forward_flops(t)), lambda b=batch: model(b))
        given = {name: scores_from_lists(importance[name].iloc[part], batch, 1) for name in JW_RANKINGS}
        top = ranks(output.attention.double(), batch.real_mask).argmin(-1)
        given[RANDOM], item = random_draws(batch, args.seed, top)
        stacked = torch.stack(list(given.values()), dim=1)
        timed(
            "ERASER",
            per_instance(batch, eraser_flops),
            lambda b=batch, s=stacked: comprehensiveness_sufficiency(model, b, s, BINS, mb),
        )
        timed(
            "first flip",
            per_instance(batch, lambda n, t: len(rankings) * max(n - 1, 0) * decode_flops(t)),
            lambda b=batch, s=stacked, o=output: first_flip(model, b, s, o, mb),
        )
        items = torch.stack([top, item], dim=1)  # the top item and a random other one
        timed(
            "single weight",
            per_instance(batch, lambda n, t: 2 * decode_flops(t)),
            lambda b=batch, o=output, i=items: single_weight(model, b, i, o),
        )

    # the permutation table (analyses.jw.instances.permutation_table)
    generator = torch.Generator().manual_seed(args.seed)
    for batch in batches:
        with torch.no_grad():
            timed("forward", per_instance(batch, lambda n, t: forward_flops(t)), lambda b=batch: model(b))
        permutations = sample_permutations(batch, args.permutations, generator)
        timed(
            "permutation",
            per_instance(batch, lambda n, t: args.permutations * decode_flops(t)),
            lambda b=batch, p=permutations: permutation_output_changes(model, b, p, mb),
        )

    lengths = [len(t) - 2 for t in ids]
    print(
        f"{args.sentences} sentences (mean {np.mean(lengths):.1f} word pieces + [CLS] and [SEP]) in batches of "
        f"{args.batch_size}, BERT {args.layers} layers x {args.heads} heads, width {args.width}, intermediate "
        f"{args.intermediate}, {sum(p.numel() for p in network.parameters()) / 1e6:.1f}M parameters "
        f"({body / 1e6:.1f}M outside the embeddings), {args.threads} threads, fp32; {len(taus)} Kendall rows; "
        f"load {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"measured matmul rate: {rate / 1e9:.1f} GFLOP/s (best of the MLP shapes, {args.width} x {args.intermediate})")
    stages.table(rate)
    print(f"peak RSS {peak_gib():.2f} GiB; load after {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M')}")


if __name__ == "__main__":
    main()
