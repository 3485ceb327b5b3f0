"""Every analysis of the prompted kind on a decoder shaped like SmolLM2-135M, per stage: seconds, the floating-point
operations the definitions require, the achieved rate beside the machine's measured matmul rate, and peak memory.

The model is a `LlamaConfig` built at random (30 layers, width 576, 9 query heads over 3 key/value heads,
intermediate 1536, vocabulary 49,152; `--layers` etc. change it), prompted through `attnexp.models.hf.prompted`
with a template of `--prefix` + `--suffix` tokens and two verbalizer words. It reads `--sentences` random id
sequences whose lengths follow SST's test split in sub-tokens (log-normal, mean ~23, as bench_hf_decode.py),
length-sorted as preprocessing sorts a test split, in
batches of `--batch-size`, and runs on each batch what the workflow's `hf_analyze` and `hf_az` jobs run: gradient,
leave-one-out, integrated gradients (`--ig-steps`), the permutation test (`--permutations`), first-flip and
single-weight erasure, ERASER comprehensiveness and sufficiency (5 bins, attention ranking) and A&Z's raw / rollout /
flow with blank-out and input gradients.

FLOPs counted per forward pass of a prompt of T tokens: 2 x (non-embedding parameters + the LM head's 2 verbalizer
rows) x T for the matmuls, plus 4 x T^2 x width per layer for attention; a backward pass costs twice its forward.
Decoding from the last layer counts one layer. A variant that runs from its first changed position c on (leave-one-out,
blank-out, ERASER: the causal model reuses the keys and values before c) counts its T - c tokens, each attending to
its T keys, plus one pass of the batch that caches them. Blank-out is also timed alone (in A&Z's row already, so left
out of the total). A measurement, not a test: the machine may be shared, so the load is
printed beside the figures.

Run: PYTHONPATH=src python benchmarks/bench_prompted.py [--sentences 100] [--threads 2]
"""

import os

import numpy as np
import torch
from _common import Stages, matmul_rate, model_shape_options, peak_gib, sentence_batches, sentences, workload_parser


def main() -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    from attnexp.analyses.az.importance import blank_out
    from attnexp.analyses.az.measures import relevance_and_importance
    from attnexp.analyses.erasure.attention import first_flip, single_weight
    from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency
    from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out, rows_per_chunk
    from attnexp.analyses.jw.permutation import permutation_output_changes, sample_permutations
    from attnexp.models.hf.classifier import HFConfig
    from attnexp.models.hf.prompted import HFPrompted
    from attnexp.models.hf.prompts import Prompt

    parser = workload_parser(__doc__.splitlines()[0])
    model_shape_options(parser, layers=30, width=576, heads=9, kv_heads=3, intermediate=1536, vocab=49152)
    parser.add_argument("--prefix", type=int, default=4, help="template tokens before the text (BOS included)")
    parser.add_argument("--suffix", type=int, default=6, help="template tokens after the text (q is the last)")
    parser.add_argument("--ig-steps", type=int, default=16)
    parser.add_argument("--memory-budget-mb", type=float, default=256.0, help="analyses.memory_budget_mb (the schema's default)")
    parser.add_argument("--az-examples", type=int, default=None, help="A&Z on the first N sentences (default: all)")
    args = parser.parse_args()

    rate = matmul_rate(args.threads, args.width, args.intermediate)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    hf = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.width,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        intermediate_size=args.intermediate,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    lm = LlamaForCausalLM(hf).eval()
    config = HFConfig(
        checkpoint="random", task="bc", n_classes=2, n_layers=args.layers, n_heads=args.heads, width=args.width,
        vocab_size=args.vocab, model_type="llama", causal=True, kind="prompted", prompt="bench", verbalizer=("a", "b"),
    )  # fmt: skip
    rng = np.random.default_rng(1)
    prompt = Prompt(
        prefix=(1, *rng.integers(100, args.vocab, args.prefix - 1).tolist()),
        suffix=tuple(rng.integers(100, args.vocab, args.suffix).tolist()),
        query=args.suffix - 1,
        classes=(3000, 4000),
    )
    model = HFPrompted(lm, config, tokenizer=None, prompt=prompt).eval()
    ids = sentences(args.sentences, args.vocab, seed=0, first=1, last=2, lowest=100)  # [BOS] ... [EOS]
    ids = sorted(ids, key=len)  # length-sorted, as preprocessing sorts a test split (so batches carry little padding)
    frame, batches = sentence_batches(ids, args.batch_size)

    body = sum(p.numel() for name, p in lm.named_parameters() if "embed_tokens" not in name) + 2 * args.width

    def forward_flops(tokens: int, layers: int | None = None) -> float:
        share = 1.0 if layers is None else layers / args.layers
        return share * (2 * body * tokens) + (layers or args.layers) * 4 * tokens**2 * args.width

    def prompt_tokens(n: int) -> int:
        return args.prefix + n + args.suffix

    def from_cut(tokens: int, cut: int) -> float:
        """A variant of `tokens` run from position `cut` on, over the cached keys before it."""
        run = tokens - cut
        return 2 * body * run + args.layers * 4 * run * tokens * args.width

    def text_cut(i: int) -> int:
        """The prompt position of text position i (1-based in the batch; 0 and n + 1, the batch's markers, are the
        prefix's last token and the suffix's first)."""
        return max(0, args.prefix + i - 1)

    def eraser_cuts(n: int, attention: torch.Tensor, bins) -> list[tuple[int, int]]:
        """(prompt tokens, cut) of the distinct ERASER variants of a sentence ranked by `attention` [L]."""
        order = torch.argsort(attention[1 : n + 1], descending=True, stable=True) + 1  # real positions, best first
        variants = set()
        for k in {max(1, int(np.ceil(f * n))) for f in bins}:
            top = set(order[:k].tolist())
            rest = [i for i in range(1, n + 1) if i not in top]
            variants.add((n - k, text_cut(min(top))))  # comprehensiveness: the top k deleted
            variants.add((k, text_cut(min(rest)) if rest else prompt_tokens(k) - 1))  # sufficiency: the rest deleted
        return [(prompt_tokens(kept), min(cut, prompt_tokens(kept) - 1)) for kept, cut in variants]

    stages = Stages()
    timed = stages.timed

    lengths_all = []
    for batch in batches:
        n = (batch.lengths - 2).tolist()
        lengths_all += n
        full = [prompt_tokens(k) for k in n]
        fw = sum(forward_flops(t) for t in full)
        last = sum(forward_flops(t, 1) for t in full)
        with torch.no_grad():
            output = timed("forward", fw, lambda b=batch: model(b))
        timed("gradient", 3 * fw, lambda b=batch: gradient_importance(model, b, None, args.memory_budget_mb))
        timed(
            "leave-one-out",
            fw + sum(from_cut(t - 1, text_cut(i)) for k, t in zip(n, full, strict=True) for i in range(1, k + 1)),
            lambda b=batch: leave_one_out(model, b),
        )
        rows = rows_per_chunk(model, batch.tokens.shape[1], args.memory_budget_mb, backward=True)  # as the job
        timed(
            "integrated gradients",
            3 * args.ig_steps * fw,
            lambda b=batch, r=rows: integrated_gradients(model, b, args.ig_steps, r),
        )
        perms = sample_permutations(batch, args.permutations, torch.Generator().manual_seed(0))
        timed("permutation", args.permutations * last, lambda b=batch, p=perms: permutation_output_changes(model, b, p))
        scores = output.attention[:, None, :]
        timed(
            "first flip",
            sum(k * forward_flops(t, 1) for k, t in zip(n, full, strict=True)),
            lambda b=batch, s=scores, o=output: first_flip(model, b, s, o),
        )
        top = output.attention.argmax(-1)
        other = torch.where(top == 1, 2, 1).clamp(max=batch.lengths - 2)
        timed(
            "single weight",
            2 * last,
            lambda b=batch, o=output, t=top, r=other: single_weight(model, b, torch.stack([t, r], 1), o),
        )
        bins = (0.01, 0.05, 0.1, 0.2, 0.5)
        deletions = fw + sum(
            from_cut(t, c) for i, k in enumerate(n) for t, c in eraser_cuts(k, output.attention[i].detach(), bins)
        )
        timed("ERASER", deletions, lambda b=batch, s=scores, k=bins: comprehensiveness_sufficiency(model, b, s, k))
        if args.az_examples is None:  # every position of the batch (its two markers too), from the blanked one on
            blanked = fw + sum(from_cut(t, min(text_cut(i), t - 1)) for k, t in zip(n, full, strict=True) for i in range(k + 2))
            alone = lambda b=batch: blank_out(model, b, memory_budget_mb=args.memory_budget_mb)  # noqa: E731
            timed("  blank-out (in A&Z)", blanked, alone, counted=False)
    az_rows = frame.iloc[: args.az_examples] if args.az_examples else frame
    az_n = [len(t) - 2 for t in az_rows["tokens"]]
    az_work = sum(  # forward, input gradients, blank-out (as above)
        4 * forward_flops(t) + forward_flops(t) + sum(from_cut(t, min(text_cut(i), t - 1)) for i in range(k + 2))
        for k, t in ((k, prompt_tokens(k)) for k in az_n)
    )
    options = dict(
        relevance_row="cls", rollout_residual=True, flow_solver="scipy", score="prob_gold", memory_budget_mb=args.memory_budget_mb
    )
    timed(
        "A&Z",
        az_work,
        lambda: relevance_and_importance(model, az_rows, batch_size=args.batch_size, progress=lambda _: None, **options),
    )
    peak = peak_gib()
    print(
        f"{args.sentences} sentences (mean {np.mean(lengths_all):.1f} sub-tokens + {args.prefix + args.suffix} template), "
        f"Llama {args.layers} layers x {args.heads} query heads over {args.kv_heads} key/value heads, width {args.width}, "
        f"{sum(p.numel() for p in lm.parameters()) / 1e6:.0f}M parameters, {args.threads} threads, fp32; "
        f"load {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"measured matmul rate: {rate / 1e9:.1f} GFLOP/s (best of the MLP shapes, {args.width} x {args.intermediate})")
    stages.table(rate)
    print(f"peak RSS {peak:.2f} GiB; load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
