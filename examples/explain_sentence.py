"""Explain one raw sentence with the Python API (docs/api.md).

Without `--run-dir` it first builds a tiny results/ tree offline in a few seconds: generated planted-sentiment
data, preprocessed, one J&W BiLSTM with tanh attention and one small A&Z Transformer, trained by the library calls
the workflow's jobs make. Then it loads each run with `load_run`, explains the sentence with every measure and
saves a text heatmap per model. With `--run-dir` it explains with a run you trained instead.

    python examples/explain_sentence.py --out /tmp/explain
    python examples/explain_sentence.py --run-dir results/models/sst/lstm-tanh/seed0 --text "a gorgeous , witty film"
"""

import argparse
import contextlib
import io
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from attnexp import default_settings, explain, heatmap, load_run, paths
from attnexp.models import names

DATASET = "syn_sentiment"


def tiny_config() -> dict:
    """The default config (schema defaults) with a small generated dataset and a 2-layer Transformer."""
    from attnexp.pipeline.settings import default_config

    return default_config(
        datasets=[DATASET],
        synthetic={
            "sentiment": {
                "sizes": {"train": 200, "dev": 50, "test": 50},
                "vocab_size": 60,
                "min_len": 6,
                "max_len": 14,
                "zipf_exponent": 1.1,
                "max_cues": 2,
                "distractor_rate": 0.2,
            }
        },
        az={
            "model": {"n_layers": 2, "n_heads": 2, "width": 16},
            "train": {"epochs": 4, "batch_size": 32, "learning_rate": 0.001},
        },
    )


def build_tiny_results(root: Path, seed: int = 0) -> list[Path]:
    """Generate, preprocess and train under `root` (every path from attnexp.paths); return the two run folders."""
    from attnexp.datasets.generated.synthetic import generate
    from attnexp.pipeline.data import run_preprocess
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import PreprocessSettings, TrainSettings, TransformerSettings, fit_settings
    from attnexp.pipeline.train import run_train, run_train_transformer

    config = tiny_config()
    raw = root / paths.SYNTHETIC.format(family="sentiment")
    data = {k: str(root / v) for k, v in paths.preprocessed_files(DATASET).items()}
    hyperparameters = {"epochs": 10, "batch_size": 16, "embedding_dim": 32, "hidden_size": 16}
    # the workflow's paths are relative to its working directory; here everything lies under `root`
    plan = Plan.from_config(config)
    raw_files = {role: str(root / path) for role, path in plan.raw_files(DATASET).items()}
    preprocessing = replace(PreprocessSettings.from_plan(plan, DATASET), raw_dir=str(raw))
    lstm_settings = TrainSettings(
        dataset=DATASET,
        encoder="lstm",
        attention="tanh",
        seed=seed,
        hyperparameters=hyperparameters,
        model=dict(config["model"]),
        embeddings={},  # random word vectors
        fit=fit_settings(config, seed=seed, paper="jw", hyperparameters=hyperparameters),
    )
    # the tied variant: the J&W measures (permutation, adversary) swap its one last-layer [CLS] distribution
    tied = names.TRANSFORMER_TIED_ATTENTION
    transformer_settings = TransformerSettings.from_plan(plan, DATASET, tied, seed)
    inputs = {k: data[k] for k in ("instances", "meta")}
    with contextlib.redirect_stdout(io.StringIO()):  # the jobs' progress lines
        generate("sentiment", raw, config["synthetic"]["seed"], config["synthetic"]["sentiment"])
        run_preprocess(inputs=raw_files, outputs=data, settings=preprocessing)
        lstm = {k: root / v for k, v in paths.model_files(DATASET, "lstm", "tanh", seed).items()}
        run_train(inputs=inputs, outputs=lstm, settings=lstm_settings)
        transformer = {k: root / v for k, v in paths.model_files(DATASET, names.TRANSFORMER_ENCODER, tied, seed).items()}
        run_train_transformer(inputs=inputs, outputs=transformer, settings=transformer_settings)
    return [lstm["model"].parent, transformer["model"].parent]


def describe(run_dir: Path, text: str | None, out: Path, permutations: int | None, adversary_steps: int | None) -> None:
    run = load_run(run_dir)
    settings, az_settings = default_settings()  # the schema's analysis defaults, as the workflow uses them
    if permutations is not None:
        settings = replace(settings, permutations=permutations)
    if adversary_steps is not None:
        settings = replace(settings, adversary=replace(settings.adversary, steps=adversary_steps))
    if text is None:  # cue words of the generated data among words of its vocabulary
        fillers = [w for w in run.tokenizer.vocab[4:] if w.isalpha()][:5]
        text = f"{fillers[0]} {fillers[1]} brilliant {fillers[2]} {fillers[3]} superb {fillers[4]}"
    start = time.perf_counter()
    exp = explain(run.model, run.tokenizer, text, classes=run.classes, settings=settings, az_settings=az_settings)
    seconds = time.perf_counter() - start
    png = out / f"{run_dir.parent.name}.png"
    heatmap(exp, path=[png, png.with_suffix(".pdf")])
    print(f"== {run.dataset} {run_dir.parent.name} ({run_dir}): explained in {seconds:.2f}s")
    print(f"text: {text!r}")
    print(f"predicted {exp.label}, p = {np.round(exp.probabilities, 3).tolist()}")
    print(exp.to_frame().to_string(index=False, float_format="%.3f"))
    print("Kendall tau (p): " + ", ".join(f"{pair} {tau:+.2f} ({p:.2f})" for pair, (tau, p) in exp.tau.items()))
    print(f"permutation: median output change {exp.permutation_median:.4f} over {len(exp.permutation_changes)} permutations")
    print(f"adversarial attention: JSD {exp.adversarial_jsd:.3f} from the original at output change {exp.adversarial_tvd:.4f}")
    if exp.flow is not None:
        print(f"A&Z: raw / rollout / flow over {exp.flow.shape[0]} layers x {exp.flow.shape[1]} positions")
    print(f"heatmap: {png}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, action="append", help="a training run folder (repeatable)")
    parser.add_argument("--text", help="the sentence to explain (default: one built from the tiny data's words)")
    parser.add_argument("--out", type=Path, default=Path("explain_sentence"), help="folder for the tiny runs and heatmaps")
    parser.add_argument("--permutations", type=int, help="permutations of the attention (default: the schema's)")
    parser.add_argument("--adversary-steps", type=int, help="adversary optimisation steps (default: the schema's)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one sentence: threads only contend
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    runs = args.run_dir or build_tiny_results(args.out)
    if not args.run_dir:
        print(f"built and trained the tiny runs in {time.perf_counter() - start:.1f}s under {args.out}")
    for run_dir in runs:
        describe(run_dir, args.text, args.out, args.permutations, args.adversary_steps)


if __name__ == "__main__":
    main()
