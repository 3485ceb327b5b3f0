"""Is the A&Z Transformer trained, and is its input gradient more than rounding? Reads a finished run and prints:

- the dev accuracy per epoch and whether it is flat over the last 3 (range <= `--flat`);
- each layer's query/key weight std (the init is 0.02: a layer still there has not been trained);
- each layer's [CLS] attention entropy over the test set, mean over examples and heads, as a fraction of the
  maximum log(n) (1 = uniform);
- the shift check of spec abnar-zuidema.md §4: how far the logits move when one input vector is shifted by c·1, and
  |Σ_d ∂s/∂e_jd| in float64 against gradient × input.

    python benchmarks/az_training_check.py                     # results/ of the default grid (syn_agreement, seed 0)
    python benchmarks/az_training_check.py --attention tiedcls --dataset linzen_agreement
"""

import argparse
import math
from pathlib import Path

import torch

from attnexp import paths
from attnexp.data.batching import sequential_batches
from attnexp.data.preprocess import split_frame
from attnexp.io import read_csv, read_parquet
from attnexp.models.checkpoint import load_model


def cls_entropy(model, batch) -> torch.Tensor:
    """[B, layers]: the [CLS] row's entropy over the input positions / log(n), averaged over heads."""
    with torch.no_grad():
        rows = model(batch).encoded.maps[:, :, :, 0, :]
    entropy = -(rows * rows.clamp_min(1e-30).log()).sum(-1).mean(-1)
    return entropy / model.input_lengths(batch).double().log()[:, None]


def shift_check(model, batch, shift: float) -> tuple[float, float, float]:
    """(max |logit change| for e_1 + shift·1, max |Σ_d ∂s/∂e_jd| in float64, max gradient × input)."""
    embedded = model.embed(batch.tokens).detach()
    moved = embedded.clone()
    moved[:, 1] += shift
    with torch.no_grad():
        change = (model.logits(batch, embedded) - model.logits(batch, moved)).abs().max().item()
    model64 = model.double()
    inputs = embedded.double().requires_grad_(True)
    score = model64.distribution(model64.logits(batch, inputs)).gather(-1, batch.labels[:, None]).sum()
    (grad,) = torch.autograd.grad(score, inputs)
    model.float()
    mask = batch.padding_mask
    return change, (grad.sum(-1).abs() * mask).max().item(), ((grad * inputs).sum(-1).abs() * mask).max().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("."), help="the project directory holding results/")
    parser.add_argument("--dataset", default="syn_agreement")
    parser.add_argument("--attention", default="self", choices=["self", "tiedcls"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--flat", type=float, default=0.01, help="largest dev-accuracy range of a flat last 3 epochs")
    args = parser.parse_args()
    torch.set_num_threads(1)
    run = {k: args.results / v for k, v in paths.model_files(args.dataset, "transformer", args.attention, args.seed).items()}
    model = load_model(run["model"], torch.device("cpu")).eval()
    dev = read_csv(run["history"])["dev_accuracy"].round(4).tolist()
    spread = max(dev[-3:]) - min(dev[-3:])
    print(f"dev accuracy by epoch: {dev}; last 3 {'flat' if spread <= args.flat else 'NOT flat'} (range {spread:.3f})")
    width = model.config.width
    q = [round(b.attn.qkv.weight[:width].std().item(), 4) for b in model.blocks]
    k = [round(b.attn.qkv.weight[width : 2 * width].std().item(), 4) for b in model.blocks]
    print(f"query weight std per layer: {q}\nkey weight std per layer:   {k}   (init 0.02)")
    test = split_frame(read_parquet(args.results / paths.preprocessed_files(args.dataset)["instances"]), "test")
    entropies, checks = [], []
    for batch in sequential_batches(test, 50):
        entropies.append(cls_entropy(model, batch))
        checks.append(shift_check(model, batch, 3.0))
    entropy = torch.cat(entropies).mean(0).tolist()
    print(f"[CLS] entropy / log n per layer: {[round(e, 3) for e in entropy]} (max {max(entropy):.3f}; 1 = uniform)")
    change, grad_sum, gxi = (max(c[i] for c in checks) for i in range(3))
    print(
        f"shift e_1 by 3·1: max |logit change| {change:.1e}; float64 max |Σ_d ∂s/∂e_jd| {grad_sum:.1e} "
        f"against max gradient × input {gxi:.1e} (ratio {grad_sum / gxi if gxi else math.nan:.0e})"
    )


if __name__ == "__main__":
    main()
