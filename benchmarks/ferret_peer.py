"""Our `hf` analyses beside ferret (ferret-xai 0.4.2) on one checkpoint and the same SST test sentences.

Alternating (ours, ferret, ours, ferret, ...), it times the gradient, integrated gradients, leave-one-out and ERASER
comprehensiveness + sufficiency of each side, per unit of work, with each side's peak memory.

    PYTHONPATH=src python benchmarks/ferret_peer.py --prepare /work/ferret-venv      # once: ferret's own venv
    PYTHONPATH=src python benchmarks/ferret_peer.py --venv /work/ferret-venv [--sentences 100] [--rounds 2]
        [--threads 2] [--batch-size 32] [--workdir DIR]

Run: PYTHONPATH=src python benchmarks/ferret_peer.py --venv /work/ferret-venv --sentences 100

ferret is never a dependency of the project: it lives in a virtual environment of its own (`--prepare DIR` makes
it: `python3 -m venv DIR`, then torch 2.13.0 first, pinned, so that pip never pulls an unpinned torch of some GB,
then FERRET_PACKAGES below, pinned as they installed together: ferret 0.4.2 wants transformers < 5 and numpy < 2,
and the newest pyarrow that pip picks for its `datasets` needs numpy 2, so pyarrow is pinned to 19.0.1). Each side
runs in a fresh process of its own environment: ours this file under this interpreter (`--side ours`), ferret's
this file under DIR/bin/python (`--side ferret`, which imports nothing of ours), both with `--threads` torch threads
(and OMP_NUM_THREADS / MKL_NUM_THREADS), each timed after an untimed warm-up on one sentence, each reporting its own
peak RSS.

The checkpoint: a MiniLM-shaped BERT (6 layers, width 384, 12 heads, intermediate 1536, vocabulary slots 30,522, 2
labels) drawn at random (seed 0) and saved with save_pretrained in the work folder, with a WordPiece tokenizer trained
offline on SST's train sentences (`tokenizers`, at most 30,522 pieces: test words it never saw split into pieces).
The sentences: `--sentences` of SST's test split, a seeded sample of the non-neutral ones as our SST preprocessing
cleans them (`attnexp.datasets.sst.read_sst`), read from ../shared/data (`--data`), length-sorted as preprocessing
sorts a test split. Both sides get the same texts; each tokenizes them with the checkpoint's tokenizer (the script
checks that the piece counts agree).

What each side runs:
- gradient x input. Ours: `gradient_importance` per batch of `--batch-size` (d p(positive) / d e, the job's);
  ferret: `GradientExplainer(multiply_by_inputs=True)` per sentence, target 1 (d logit_1 / d e).
- integrated gradients. Ours: `integrated_gradients` at 16 steps (our default) and at 50, (instance, step) chunks from
  `rows_per_chunk(..., backward=True)` as the job; ferret: `IntegratedGradientExplainer` at 50 steps (captum's and
  ferret's default), per sentence.
- leave-one-out. Ours: `leave_one_out` per batch; ferret: `TauLOO_Evaluation.compute_leave_one_out_occlusion` (the
  LOO scores its tau-LOO measure correlates with) per sentence: each deletion decoded to text and re-tokenized.
- ERASER comprehensiveness + sufficiency of the side's own gradient ranking. Ours: `comprehensiveness_sufficiency`
  with the 5 bins (1, 5, 10, 20, 50 %); ferret: `AOPC_Comprehensiveness_Evaluation` and `AOPC_Sufficiency_Evaluation`
  at their defaults (10 % .. 100 %, positive scores only, tokens removed, each a baseline pass of its own).
The units of work: a sentence (gradient), a sentence x IG step (IG), a deleted-input pass, i.e. one variant of a
sentence run through the model (LOO: one per real token; ERASER: one per distinct variant; the sides' baseline
passes are in their seconds, not in their counts). The table gives each side's seconds, units, milliseconds per unit
and ours / ferret per unit, the medians over the rounds; the load average before and after. The two sides compute
different definitions (probability vs logit, our zero baseline on the embedding output vs ferret's [PAD]-token
embeddings, our bins vs its thresholds), so the ratios compare cost per unit of work, not the scores.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # installed first, alone: the CPU build (an unpinned torch pulls gigabytes of CUDA)
FERRET_PACKAGES = (  # as they installed together on 2026-12-02 (Python 3.11)
    "ferret-xai==0.4.2",
    TORCH,
    "transformers==4.57.6",
    "tokenizers==0.22.2",
    "captum==0.7.0",
    "numpy==1.26.4",
    "pyarrow==19.0.1",
    "datasets==2.21.0",
    "opencv-python==4.11.0.86",
    "scikit-image==0.21.0",
    "shap==0.44.1",
)
SHAPE = dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536, num_labels=2)
VOCAB = 30522
MAX_LENGTH = 128  # hf.max_length
IG_STEPS = {"ours": (16, 50), "ferret": (50,)}
MEASURES = ("gradient", "IG", "leave-one-out", "ERASER")


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class Clock:
    """Seconds, units of work and the peak RSS after each measure (the process's own)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    def add(self, name: str, seconds: float, units: int) -> None:
        row = self.rows.setdefault(name, {"seconds": 0.0, "units": 0})
        row["seconds"] += seconds
        row["units"] += units
        row["peak_gib"] = peak_gib()


# --- ferret's venv ---


def prepare(venv: Path) -> None:
    """The venv with torch (pinned, first) and ferret; skips what is done, then checks that ferret imports. pip runs
    without PYTHONPATH, so that it neither sees nor judges our package."""
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if not python.exists():
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True, env=env)
    subprocess.run([str(python), "-m", "pip", "install", "-q", TORCH], check=True, env=env)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *FERRET_PACKAGES], check=True, env=env)
    check = (
        "import importlib.metadata as m, ferret, torch, transformers; "
        "print(*(f'{p} {m.version(p)}' for p in ('ferret-xai', 'torch', 'transformers', 'captum', 'numpy')), sep=', ')"
    )
    subprocess.run([str(python), "-c", check], check=True, env=env)
    print(f"ferret's venv ready: {venv}")


# --- the shared inputs (this interpreter: ours) ---


def sst_texts(data: Path, split: str) -> list[str]:
    from attnexp.datasets.sst import read_sst

    return read_sst({split: data / "sst" / f"{split}.txt"})["text"].tolist()


def build_checkpoint(folder: Path, data: Path) -> None:
    """The MiniLM-shaped random BERT and a WordPiece tokenizer trained on SST's train sentences, save_pretrained'd."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    core = BertWordPieceTokenizer(lowercase=True)
    core.train_from_iterator(sst_texts(data, "train"), vocab_size=VOCAB, special_tokens=specials, show_progress=False)
    names = dict(unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
    tokenizer = BertTokenizerFast(tokenizer_object=core._tokenizer, do_lower_case=True, model_max_length=512, **names)
    assert len(tokenizer) <= VOCAB
    torch.manual_seed(0)
    BertForSequenceClassification(BertConfig(vocab_size=VOCAB, **SHAPE)).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def chosen_sentences(folder: Path, data: Path, count: int, seed: int = 0) -> list[str]:
    """`count` non-neutral SST test sentences (a seeded sample), sorted by their length in the checkpoint's pieces."""
    import numpy as np
    from transformers import AutoTokenizer

    texts = sst_texts(data, "test")
    picked = sorted(np.random.default_rng(seed).choice(len(texts), size=min(count, len(texts)), replace=False))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    chosen = [texts[i] for i in picked]
    return sorted(chosen, key=lambda text: len(tokenizer(text, truncation=True, max_length=MAX_LENGTH)["input_ids"]))


# --- our side (this interpreter, a fresh process) ---


def our_side(spec: dict) -> dict:
    import pandas as pd

    from attnexp.analyses.erasure import BINS
    from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency, top_counts
    from attnexp.analyses.jw.importance import gradient_importance, integrated_gradients, leave_one_out, rows_per_chunk
    from attnexp.data.batching import sequential_batches
    from attnexp.models.device import set_threads
    from attnexp.models.hf.data import framed_ids
    from attnexp.models.hf.loading import load_pretrained

    started = time.perf_counter()
    set_threads(spec["threads"])
    model = load_pretrained(spec["checkpoint"], task="bc", n_classes=2)
    ids = framed_ids(model.tokenizer, spec["texts"], None, MAX_LENGTH)
    rows = pd.DataFrame({"tokens": ids, "label": 0, "instance_id": [str(i) for i in range(len(ids))]})
    batches = sequential_batches(rows, spec["batch_size"])
    mb = 256.0  # analyses.memory_budget_mb

    def ig(batch, steps):
        return integrated_gradients(model, batch, steps, rows_per_chunk(model, batch.tokens.shape[1], mb, backward=True))

    warm = sequential_batches(rows.iloc[:1], 1)[0]  # untimed: every measure once on one sentence
    gradient_importance(model, warm)
    ig(warm, 2)
    leave_one_out(model, warm, mb)
    comprehensiveness_sufficiency(model, warm, gradient_importance(model, warm)[:, None, :], BINS, mb)
    ready = time.perf_counter()

    clock = Clock()
    for batch in batches:
        n = batch.real_mask.sum(-1)
        start = time.perf_counter()
        gradient = gradient_importance(model, batch)
        clock.add("gradient", time.perf_counter() - start, batch.size)
        for steps in IG_STEPS["ours"]:
            start = time.perf_counter()
            ig(batch, steps)
            clock.add(f"IG {steps}", time.perf_counter() - start, steps * batch.size)
        start = time.perf_counter()
        leave_one_out(model, batch, mb)
        clock.add("leave-one-out", time.perf_counter() - start, int(n.sum()))
        start = time.perf_counter()
        comprehensiveness_sufficiency(model, batch, gradient[:, None, :], BINS, mb)
        variants = sum(2 * len(set(row)) for row in top_counts(n, BINS).tolist())  # one ranking: distinct variants
        clock.add("ERASER", time.perf_counter() - start, variants)
    return {"rows": clock.rows, "pieces": [len(t) for t in ids], "startup_s": ready - started, "peak_gib": peak_gib()}


# --- ferret's side (its venv's interpreter: nothing of ours imported) ---


def ferret_side(spec: dict) -> dict:
    import torch
    from ferret.evaluators.faithfulness_measures import (
        AOPC_Comprehensiveness_Evaluation,
        AOPC_Sufficiency_Evaluation,
        TauLOO_Evaluation,
    )
    from ferret.explainers.gradient import GradientExplainer, IntegratedGradientExplainer
    from ferret.model_utils import ModelHelper
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    started = time.perf_counter()
    torch.set_num_threads(spec["threads"])
    model = AutoModelForSequenceClassification.from_pretrained(spec["checkpoint"]).eval()
    tokenizer = AutoTokenizer.from_pretrained(spec["checkpoint"])
    texts = spec["texts"]
    passes = {"count": 0}
    original = ModelHelper._forward

    def counted(self, text, *args, **kwargs):  # the deleted-input passes: the texts that come as a list
        if not isinstance(text, str):
            passes["count"] += len(text)
        return original(self, text, *args, **kwargs)

    ModelHelper._forward = counted
    gradient = GradientExplainer(model, tokenizer, multiply_by_inputs=True)
    integrated = IntegratedGradientExplainer(model, tokenizer, multiply_by_inputs=True)
    loo = TauLOO_Evaluation(model, tokenizer)
    comprehensiveness = AOPC_Comprehensiveness_Evaluation(model, tokenizer)
    sufficiency = AOPC_Sufficiency_Evaluation(model, tokenizer)

    warm = gradient(texts[0], target=1)  # untimed: every measure once on one sentence
    integrated(texts[0], target=1, call_args={"n_steps": 2})
    loo.compute_leave_one_out_occlusion(texts[0], target=1)
    comprehensiveness.compute_evaluation(warm, target=1)
    sufficiency.compute_evaluation(warm, target=1)
    ready = time.perf_counter()

    clock = Clock()
    explanations = []
    start = time.perf_counter()
    for text in texts:
        explanations.append(gradient(text, target=1))
    clock.add("gradient", time.perf_counter() - start, len(texts))
    for steps in IG_STEPS["ferret"]:
        start = time.perf_counter()
        for text in texts:
            integrated(text, target=1, call_args={"n_steps": steps})
        clock.add(f"IG {steps}", time.perf_counter() - start, steps * len(texts))
    passes["count"] = 0
    start = time.perf_counter()
    for text in texts:
        loo.compute_leave_one_out_occlusion(text, target=1)
    clock.add("leave-one-out", time.perf_counter() - start, passes["count"])
    passes["count"] = 0
    start = time.perf_counter()
    for explanation in explanations:
        comprehensiveness.compute_evaluation(explanation, target=1)
        sufficiency.compute_evaluation(explanation, target=1)
    clock.add("ERASER", time.perf_counter() - start, passes["count"])
    pieces = [len(tokenizer(t, truncation=True)["input_ids"]) for t in texts]
    return {"rows": clock.rows, "pieces": pieces, "startup_s": ready - started, "peak_gib": peak_gib()}


# --- the driver ---


def run_side(side: str, python: Path, spec_path: Path, out: Path, threads: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
    env["PYTHONPATH"] = str(REPO / "src") if side == "ours" else ""  # ferret's process sees nothing of ours
    command = [str(python), str(Path(__file__).resolve()), "--side", side, "--spec", str(spec_path), "--out", str(out)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{side}'s side failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    result = json.loads(out.read_text())
    result["process_s"] = time.perf_counter() - start
    return result


UNITS = {"gradient": "sentence", "IG": "sentence x step", "leave-one-out": "deleted-input pass", "ERASER": "deleted-input pass"}
COLUMNS = ("ours s", "units", "ms/unit", "ferret s", "units", "ms/unit")


def report(args, ours: list[dict], theirs: list[dict], spec: dict, load: tuple) -> None:
    def median(results: list[dict], name: str, key: str) -> float:
        return statistics.median(r["rows"][name][key] for r in results)

    pieces, their_pieces = ours[0]["pieces"], theirs[0]["pieces"]
    if pieces != their_pieces:
        differ = sum(a != b for a, b in zip(pieces, their_pieces, strict=True))
        print(f"WARNING: the sides' piece counts differ on {differ} sentences")
    print(
        f"{len(spec['texts'])} SST test sentences (mean {statistics.mean(pieces) - 2:.1f} word pieces + [CLS] and [SEP]), "
        f"MiniLM-shaped random BERT (6 x 12 heads, width 384), {args.threads} threads, fp32, batches of {args.batch_size} "
        f"(ours); {args.rounds} rounds, medians; load {load[0][0]:.2f} before, {load[1][0]:.2f} after (1 min)"
    )
    widths = (9, 8, 9, 10, 8, 9)
    print(
        f"{'measure':<16}{'unit':<20}"
        + "".join(f"{c:>{w}}" for c, w in zip(COLUMNS, widths, strict=True))
        + f"{'ours/ferret':>13}"
    )
    ferret_ig = f"IG {IG_STEPS['ferret'][0]}"
    for name in ("gradient", *(f"IG {s}" for s in IG_STEPS["ours"]), "leave-one-out", "ERASER"):
        theirs_name = ferret_ig if name.startswith("IG") else name
        o_s, o_u = median(ours, name, "seconds"), median(ours, name, "units")
        f_s, f_u = median(theirs, theirs_name, "seconds"), median(theirs, theirs_name, "units")
        o_per, f_per = 1e3 * o_s / max(o_u, 1), 1e3 * f_s / max(f_u, 1)
        label = name if not name.startswith("IG") else f"{name} vs {theirs_name}"
        unit = UNITS["IG" if name.startswith("IG") else name]
        cells = f"{o_s:>9.2f}{o_u:>8.0f}{o_per:>9.2f}{f_s:>10.2f}{f_u:>8.0f}{f_per:>9.2f}"
        print(f"{label:<16}{unit:<20}{cells}{o_per / f_per:>13.2f}")
    for key, label in (("peak_gib", "peak RSS GiB"), ("startup_s", "start + load + warm-up s"), ("process_s", "process s")):
        o, f = statistics.median(r[key] for r in ours), statistics.median(r[key] for r in theirs)
        print(f"{label:<36}{o:>9.2f}{'':>17}{f:>10.2f}{'':>17}{o / f:>13.2f}")
    totals = [
        (sum(r["seconds"] for r in o["rows"].values()), sum(r["seconds"] for r in t["rows"].values()))
        for o, t in zip(ours, theirs, strict=True)
    ]
    rounds = ", ".join(f"{a:.1f}/{b:.1f}" for a, b in totals)
    print(f"timed seconds per round, ours/ferret: {rounds}; {time.strftime('%Y-%m-%d %H:%M')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare", type=Path, metavar="DIR", help="make ferret's venv in DIR, then stop")
    parser.add_argument("--venv", type=Path, help="ferret's venv (made by --prepare)")
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2, help="ours, ferret, ours, ferret, ...: this many of each")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32, help="ours: the analyses job's (hf.train.batch_size)")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the datasets folder (sst/)")
    parser.add_argument("--workdir", type=Path, help="where the checkpoint and results go (default: a temporary folder)")
    parser.add_argument("--side", choices=("ours", "ferret"), help=argparse.SUPPRESS)  # a side's own process
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        spec = json.loads(args.spec.read_text())
        args.out.write_text(json.dumps((our_side if args.side == "ours" else ferret_side)(spec)))
        return
    if args.prepare:
        prepare(args.prepare)
        return
    if args.venv is None or not (args.venv / "bin" / "python").exists():
        parser.error("--venv DIR: ferret's venv (make it with --prepare DIR)")
    with tempfile.TemporaryDirectory() as scratch:
        work = args.workdir or Path(scratch)
        checkpoint = work / "minilm-random"
        if not (checkpoint / "config.json").exists():
            build_checkpoint(checkpoint, args.data)
        spec = {
            "checkpoint": str(checkpoint),
            "texts": chosen_sentences(checkpoint, args.data, args.sentences),
            "threads": args.threads,
            "batch_size": args.batch_size,
        }
        spec_path = work / "spec.json"
        spec_path.write_text(json.dumps(spec))
        load_before = os.getloadavg()
        ours, theirs = [], []
        for number in range(args.rounds):
            ours.append(run_side("ours", Path(sys.executable), spec_path, work / f"ours{number}.json", args.threads))
            peer = args.venv / "bin" / "python"
            theirs.append(run_side("ferret", peer, spec_path, work / f"ferret{number}.json", args.threads))
            print(f"round {number + 1}/{args.rounds} done", flush=True)
        report(args, ours, theirs, spec, (load_before, os.getloadavg()))


if __name__ == "__main__":
    main()
