"""The tests that swap a Hugging Face model's last-layer [CLS] row, decoded from the last layer or by rerunning it all.

A randomly initialised MiniLM-shaped BERT (6 layers, width 384, 12 heads, intermediate 1536; `--layers` etc. change
it) reads `--sentences` random sentences whose lengths follow SST's test split in word pieces (mean about 23; drawn
from a log-normal fitted to it, seeded), through the `attnexp.models.hf` wrapper. Per batch of 50 it times, one
decode mode after the other and then the other way round:
- the permutation test (`--permutations`, 100 as in the analyses);
- Serrano & Smith's first-flip test (attention ranking; one erasure step per real item);
- the single-weight test (the top item and a random other one).
Each test's logits are compared between the two modes (they must agree to float rounding). A measurement, not a
test: the machine may be shared, so read the ratio and the load printed beside it.

Run: PYTHONPATH=src python benchmarks/bench_hf_decode.py [--sentences 100] [--threads 2]
"""

import os
import time

import numpy as np
import torch
from _common import model_shape_options, sentence_batches, sentences, workload_parser


def main() -> None:
    from transformers import BertConfig, BertForSequenceClassification

    from attnexp.analyses.erasure.attention import first_flip, single_weight
    from attnexp.analyses.jw.permutation import permutation_output_changes, sample_permutations
    from attnexp.models.hf.loading import wrap_pretrained

    parser = workload_parser(__doc__.splitlines()[0])
    model_shape_options(parser, layers=6, width=384, heads=12)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=args.width,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.width,
        num_labels=2,
    )
    model = wrap_pretrained(BertForSequenceClassification(config).eval(), task="bc")
    ids = sentences(args.sentences, config.vocab_size, seed=0, first=101, last=102, lowest=1000)  # [CLS] ... [SEP]
    _, batches = sentence_batches(ids, args.batch_size)

    def tests(batch):
        with torch.no_grad():
            output = model(batch)
        permutations = sample_permutations(batch, args.permutations, torch.Generator().manual_seed(0))
        timed = {}
        start = time.perf_counter()
        changes = permutation_output_changes(model, batch, permutations)
        timed["permutation"] = (time.perf_counter() - start, changes)
        start = time.perf_counter()
        flips = first_flip(model, batch, output.attention[:, None, :], output)
        timed["first flip"] = (time.perf_counter() - start, flips)
        top = output.attention.argmax(-1)
        other = torch.where(top == 1, 2, 1).clamp(max=batch.lengths - 2)
        start = time.perf_counter()
        divergence, _, _ = single_weight(model, batch, torch.stack([top, other], dim=1), output)
        timed["single weight"] = (time.perf_counter() - start, divergence)
        return timed

    totals = {True: {}, False: {}}
    results = {True: [], False: []}
    for order in ([False, True], [True, False]):  # A B, then B A
        for full in order:
            model.full_rerun = full
            for batch in batches:
                for name, (seconds, values) in tests(batch).items():
                    totals[full][name] = totals[full].get(name, 0.0) + seconds / 2
                    results[full].append(values)
    print(
        f"{args.sentences} sentences (mean {np.mean([len(s) for s in ids]):.1f} pieces), {args.layers} layers x "
        f"{args.heads} heads, width {args.width}, {args.threads} threads; load {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"{'test':<14}{'full rerun s':>14}{'last layer s':>14}{'ratio':>8}")
    for name in totals[True]:
        full, last = totals[True][name], totals[False][name]
        print(f"{name:<14}{full:>14.2f}{last:>14.2f}{last / full:>8.2f}")
    worst = max(
        float(np.nanmax(np.abs(a.double().numpy() - b.double().numpy()), initial=0.0))
        for a, b in zip(results[True], results[False], strict=True)
    )
    print(f"largest difference between the two modes' values: {worst:.2e}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
