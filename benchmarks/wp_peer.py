"""W&P beside the authors' code (issue 38 §2): the same SST instances, word vectors, seed and thread count through
our library and through sarahwie/attention, alternating (ours, theirs, ours, theirs, ...), with the seconds of
(a) one base-model epoch, (b) one consistent-adversary epoch at one lambda, (c) one diagnostic-MLP run, and what
each system's models score after those epochs.

    PYTHONPATH=src python benchmarks/wp_peer.py --peer /work/peer_wp/attention [--rounds 3] [--threads 1] [--lam 1]
        [--guide trained] [--mlp-epochs 8] [--limit N] [--preprocessed DIR] [--our-defaults] [--workdir DIR]
    PYTHONPATH=src python benchmarks/wp_peer.py --prepare --peer /work/peer_wp/attention   # steps 2-5 below

The authors' side lives outside the project (their code never enters it); make it once:
  1. Export the GitHub repository sarahwie/attention (commit d867a2b) into the folder, e.g. from a bare mirror:
     git --git-dir=MIRROR archive HEAD | tar -x -C /work/peer_wp/attention (the folder's parent goes on their
     PYTHONPATH, as their README says: the package is imported as `attention`).
  2. Make it a git repository with a branch (their configurations.py records the branch and sha of the working
     directory): git init -b master, git add -A, git commit.
  3. A virtualenv beside it, /work/peer_wp/venv (`--peer-python`), with PEER_PACKAGES below: torch pinned (here a CPU
     build from the local wheel folder; elsewhere take the CPU wheel, an unpinned torch pulls gigabytes of CUDA).
  4. An allennlp stand-in in that venv's site-packages (ALLENNLP_STANDIN below): their code uses only allennlp's
     Params, FromParams, Registrable and Activation, and allennlp 2.10.1 (the last release) needs torch<1.13 and
     imports transformers and spaCy when loaded.
  5. The patches (PATCHES below, each marked "# patch:" in their file), just enough for torch 2.13, numpy 2, pandas 3:
       common_code/metrics.py:3            pandas >= 1.0 moved nested_to_record to pandas.io.json._normalize
       model/modelUtils.py:46              masks as torch.BoolTensor: torch 2's masked_fill_ refuses uint8 masks
       model/Binary_Classification.py:125  the adversary's KL: torch 2's KLDivLoss (xlogy(t, t) - t * input) is NaN
                                           where its target, the adversary's attention, is 0 (SOS, EOS, PAD), and so
                                           is the gradient; torch 1.x's kl_div gave 0 there, value and gradient
  `--prepare` does steps 2-5 (idempotent) once step 1 is done.

What runs. Ours: our library in this process (as the W&P jobs call it: `fit`, `donor_outputs`, the consistent
adversary's objective, `model_from_options`), on SST as `config/paper.yaml` preprocesses it. Theirs: their own entry
point, train_and_run_experiments_bc.py, as their run_*.sh call it, in a subprocess of their venv; a small driver
around it times their Model.train / evaluate, Trainer.train_* and train_dataset without changing them. Both get the
same instances: their loader reads train and test only and re-applies J&W's length filter, which (max_length None)
also drops each split's longest instances, so ours drops them too. Both start from the same embedding matrix (our
base model's seed-10 random rows: ../shared/data has no fastText file) and seed 10. By default ours reproduces the
authors' settings (wp.select_on test, tvd_binary half, adv_loss_class_weight_scaling); `--our-defaults` keeps the
config's DEFAULT reading instead. Their pre-loaded guide (the base or adversary attention as the MLP's weights) does not
run as published (Trainer.train_standard never hands the guide to Model.train: AttributeError 'target_attn'), so the
diagnostic MLP is the trained-attention one (`--guide trained`, J&W's average+tanh) or the uniform one.

Rows: "train pass" is the forward/backward/step over the train split; "epoch" is one epoch as each system runs it
(ours: the pass and the selection split's evaluation; theirs: the pass, train and test evaluation, the JSON of
predictions and attention and the checkpoint); "1-epoch run" adds building the model and the stored outputs (ours:
donor outputs of train/dev/test in memory; theirs: the final Evaluator). Ours runs in this process after an untimed
warm-up; each run of theirs is a fresh process (its start has a row of its own; its first batches pay torch's warm-up).
Medians over the rounds; ratio = theirs / ours. The scores are those after ONE epoch (the MLP: its whole run): full
training (8 epochs, adversaries up to 80) is too long for a side-by-side check, so they are not the papers' figures.
"""

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

from attnexp.analyses.wp.consistent_adversary import AdversaryObjective, ConsistentAdversary, divergence_to_base
from attnexp.analyses.wp.donors import DONOR_SPLITS, DonorTable, donor_outputs
from attnexp.analyses.wp.settings import VARIANTS
from attnexp.config import PACKAGED_SCHEMA, validate_config
from attnexp.data.preprocess import preprocess, read_preprocessed, split_frame
from attnexp.datasets import get_dataset
from attnexp.models.train import Classification, fit, model_from_options

REPO = Path(__file__).resolve().parents[1]
SEED = 10  # the W&P base seed (theirs: --seed default 10)
PEER_SCRIPT = "train_and_run_experiments_bc.py"
PEER_PACKAGES = (
    "torch==2.13.0",
    "numpy==2.4.6",
    "scikit-learn==1.9.1",
    "pandas==3.1.1",
    "tqdm==4.70.1",
    "gitpython==3.2.1",
    "ipython==9.18.1",
)
MIN_LENGTH = 5  # their SST_dataset: min_length=5 (keep more than 5 real tokens), max_length None
MLP_ATTENTION = {"trained": ("mlp_trained", "tanh"), "uniform": ("mlp_uniform", "frozen")}  # guide -> ours, theirs

# (file, line in d867a2b, text there, replacement, why); the replacement carries the "# patch:" marker
KL_PATCHED = (
    "# patch: torch 2's KLDivLoss is NaN where its target (attn) is 0; torch 1.x gave 0 there, value and gradient\n"
    "                nz = batch_data.attn > 0\n"
    "                kl_loss = torch.where(nz, batch_data.attn * (torch.where(nz, batch_data.attn, 1).log()"
    " - torch.where(nz, batch_data.target_attn.log(), 0)), 0).sum()"
)
PATCHES = (
    (
        "common_code/metrics.py",
        3,
        "from pandas.io.json.normalize import nested_to_record",
        "from pandas.io.json._normalize import nested_to_record  # patch: pandas >= 1.0 moved it",
        "pandas >= 1.0 moved nested_to_record",
    ),
    (
        "model/modelUtils.py",
        46,
        "self.masks = torch.ByteTensor(np.array(masks)).to(device)",
        "self.masks = torch.BoolTensor(np.array(masks)).to(device)  # patch: torch 2 masks are bool",
        "torch 2's masked_fill_ refuses uint8 masks",
    ),
    (
        "model/Binary_Classification.py",
        125,
        "kl_loss = self.criterion(batch_data.target_attn.log(), batch_data.attn)",
        KL_PATCHED,
        "torch 2's KLDivLoss is NaN (value and gradient) where the adversary's attention is 0",
    ),
)

# The allennlp stand-in (our code, not theirs): allennlp 2.x's construction semantics for what their code imports.
ALLENNLP_STANDIN = {
    "allennlp/__init__.py": '"""Stand-in for allennlp: only what sarahwie/attention imports (benchmarks/wp_peer.py)."""\n',
    "allennlp/common/__init__.py": "from allennlp.common.params import ConfigurationError, FromParams, Params, Registrable\n",
    "allennlp/common/from_params.py": "from allennlp.common.params import FromParams  # noqa\n",
    "allennlp/nn/__init__.py": "",
    "allennlp/common/params.py": '''"""allennlp 2.x's Params, FromParams and Registrable, as sarahwie/attention uses them."""

import inspect

_NO_DEFAULT = object()


class ConfigurationError(Exception):
    pass


class Params(dict):
    """A dict of constructor arguments; nested dicts come back as Params."""

    def pop(self, key, default=_NO_DEFAULT):
        if default is _NO_DEFAULT and key not in self:
            raise ConfigurationError(f'key "{key}" is required')
        value = super().pop(key, default)
        return Params(value) if isinstance(value, dict) and not isinstance(value, Params) else value

    def as_dict(self):
        return {k: v.as_dict() if isinstance(v, Params) else v for k, v in self.items()}

    def assert_empty(self, name):
        if self:
            raise ConfigurationError(f"Extra parameters passed to {name}: {dict(self)}")


class FromParams:
    """cls.from_params(params): the constructor's arguments from `params` by name; an argument annotated with a
    FromParams class is built from its value (a dict, or a registered name), as allennlp's create_kwargs does."""

    @classmethod
    def from_params(cls, params, **extras):
        params = params if isinstance(params, Params) else Params(params)
        if cls in Registrable._registry:  # a Registrable base: dispatch on "type"
            choice = params.pop("type", cls.default_implementation or _NO_DEFAULT)
            subclass = cls.by_name(choice)
            if hasattr(subclass, "from_params"):
                return subclass.from_params(params, **extras)
            return subclass(**params, **extras)  # registered without from_params (torch activations)
        kwargs = {}
        for name, parameter in inspect.signature(cls.__init__).parameters.items():
            if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            if name in extras:
                kwargs[name] = extras[name]
                continue
            if name not in params:
                if parameter.default is parameter.empty:
                    raise ConfigurationError(f'key "{name}" is required by {cls.__name__}')
                continue
            value, annotation = params.pop(name), parameter.annotation
            if inspect.isclass(annotation) and issubclass(annotation, FromParams):
                value = annotation.from_params(Params({"type": value}) if isinstance(value, str) else value)
            elif isinstance(value, Params):
                value = value.as_dict()
            kwargs[name] = value
        params.assert_empty(cls.__name__)
        return cls(**kwargs)


class Registrable(FromParams):
    """Named subclasses of a base class: @Base.register(name), Base.by_name(name), Base.from_params({type: name})."""

    _registry: dict = {}
    default_implementation = None

    @classmethod
    def register(cls, name, constructor=None):
        registry = Registrable._registry.setdefault(cls, {})

        def add(subclass):
            registry[name] = (subclass, constructor)
            return subclass

        return add

    @classmethod
    def by_name(cls, name):
        subclass, constructor = Registrable._registry[cls][name]  # constructor: a classmethod's name, or None
        return getattr(subclass, constructor) if constructor else subclass

    @classmethod
    def list_available(cls):
        return list(Registrable._registry.get(cls, {}))
''',
    "allennlp/nn/activations.py": '''"""allennlp 2.x's Activation registry (name -> zero-argument constructor)."""

import torch

from allennlp.common import Registrable


class Activation(torch.nn.Module, Registrable):
    pass


class _ActivationLambda(torch.nn.Module):
    def __init__(self, function, name):
        super().__init__()
        self._name, self._function = name, function

    def forward(self, x):
        return self._function(x)


Registrable._registry[Activation] = {
    "linear": (lambda: _ActivationLambda(lambda x: x, "Linear"), None),
    "relu": (torch.nn.ReLU, None),
    "elu": (torch.nn.ELU, None),
    "gelu": (torch.nn.GELU, None),
    "leaky_relu": (torch.nn.LeakyReLU, None),
    "sigmoid": (torch.nn.Sigmoid, None),
    "tanh": (torch.nn.Tanh, None),
    "softplus": (torch.nn.Softplus, None),
    "selu": (torch.nn.SELU, None),
}
''',
}

# Runs in their venv: times their functions from outside, then runs their entry point as __main__.
DRIVER = r"""
import json, runpy, sys, time
start = time.perf_counter()
out, threads, script, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
import torch
torch.set_num_threads(threads)
import attention.ExperimentsBC as EX
import attention.model.Binary_Classification as BC
import attention.Trainers.DatasetBC as DS
import attention.Trainers.TrainerBC as TR
spent = {"train_pass": 0.0, "evaluate": 0.0, "epochs": 0.0, "run": 0.0}
seen = {"torch": torch.__version__, "threads": torch.get_num_threads()}
def timed(owner, name, key):
    function = getattr(owner, name)
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - t
    setattr(owner, name, wrapper)
timed(BC.Model, "train", "train_pass")
timed(BC.Model, "evaluate", "evaluate")
timed(TR.Trainer, "train_standard", "epochs")
timed(TR.Trainer, "train_adversarial", "epochs")
timed(EX, "train_dataset", "run")
dataset_init, evaluator_init = DS.Dataset.__init__, TR.Evaluator.__init__
def on_dataset(self, *args, **kwargs):
    dataset_init(self, *args, **kwargs)
    seen.update(n_train=len(self.train_data.X), n_test=len(self.test_data.X))
def on_evaluator(self, dataset, dirname, args):
    evaluator_init(self, dataset, dirname, args)
    seen["dirname"] = dirname
DS.Dataset.__init__, TR.Evaluator.__init__ = on_dataset, on_evaluator
spent["imports"] = time.perf_counter() - start
sys.argv = [script, *argv]
t = time.perf_counter()
runpy.run_path(script, run_name="__main__")
spent["script"] = time.perf_counter() - t
json.dump({**spent, **seen}, open(out, "w"))
"""


def setup_steps(peer: Path, python: Path) -> str:
    return (
        f"Make the authors' side first (see this script's docstring): export the GitHub repository sarahwie/attention "
        f"(d867a2b) into {peer} (e.g. `git --git-dir=MIRROR archive HEAD | tar -x -C {peer}`), then run\n"
        f"  PYTHONPATH=src python benchmarks/wp_peer.py --prepare --peer {peer} --peer-python {python}\n"
        f"which makes it a git repository, the venv {python.parent.parent} ({' '.join(PEER_PACKAGES)}), "
        "the allennlp stand-in and the patches."
    )


def default_python(peer: Path) -> Path:
    return peer.resolve().parent / "venv" / "bin" / "python"


def check_peer(peer: Path, python: Path) -> None:
    """Fail with the steps that make the authors' side when anything of it is missing."""
    problems = []
    if not peer.is_dir():
        problems.append(f"{peer} does not exist")
    elif not (peer / PEER_SCRIPT).is_file():
        problems.append(f"{peer} has no {PEER_SCRIPT} (not an export of sarahwie/attention)")
    else:
        if not (peer / ".git").exists():
            problems.append(f"{peer} is not a git repository (their configurations.py reads its branch and sha)")
        unpatched = [f for f, _, _, new, _ in PATCHES if new not in (peer / f).read_text()]
        if unpatched:
            problems.append(f"unpatched: {', '.join(unpatched)}")
    if not python.exists():
        problems.append(f"no venv python at {python}")
    elif not problems:
        check = "import torch, numpy, sklearn, pandas, tqdm, git, IPython, allennlp.common, allennlp.nn.activations"
        done = subprocess.run([str(python), "-c", check], capture_output=True, text=True)
        if done.returncode:
            problems.append(f"{python} cannot import their dependencies: {done.stderr.strip().splitlines()[-1]}")
    if problems:
        sys.exit("wp_peer: the authors' code is not ready: " + "; ".join(problems) + ".\n" + setup_steps(peer, python))


def prepare(peer: Path, python: Path) -> None:
    """Steps 2-5 of the docstring, each skipped when already done."""
    if not (peer / PEER_SCRIPT).is_file():
        sys.exit(f"wp_peer --prepare: {peer} has no {PEER_SCRIPT}.\n" + setup_steps(peer, python))
    git = ["git", "-C", str(peer), "-c", "user.name=wp_peer", "-c", "user.email=wp_peer@localhost"]
    if not (peer / ".git").exists():
        subprocess.run([*git, "init", "-q", "-b", "master"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "sarahwie/attention d867a2b, as exported"], check=True)
        print(f"{peer}: git repository, the export as its first commit (git diff shows the patches)")
    venv = python.parent.parent
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print(f"{venv}: virtualenv")
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for name, text in ALLENNLP_STANDIN.items():
        path = Path(site) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"{site}/allennlp: the stand-in ({len(ALLENNLP_STANDIN)} files)")
    for name, line, old, new, why in PATCHES:
        path = peer / name
        text = path.read_text()
        if new in text:
            continue
        if text.count(old) != 1:
            sys.exit(f"wp_peer --prepare: {name}:{line} does not read as d867a2b's ({old!r}); not patched")
        path.write_text(text.replace(old, new))
        print(f"patched {name}:{line}: {why}")
    check_peer(peer, python)
    print("the authors' side is ready")


# --- the data both systems get ---


def load_sst(args) -> tuple[pd.DataFrame, dict]:
    folder = Path(args.preprocessed) if args.preprocessed else REPO / "results" / "preprocessed" / "sst"
    if (folder / "instances.parquet").exists():
        print(f"SST from {folder}")
        return read_preprocessed(folder / "instances.parquet", folder / "meta.json")
    if args.preprocessed:
        sys.exit(f"wp_peer: {folder} has no instances.parquet")
    print(f"SST preprocessed here from {args.raw_data} (no {folder}); config/paper.yaml's preprocessing")
    return preprocess(get_dataset("sst"), args.raw_data)


def subset(instances: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """At most `limit` instances of each split (a seeded sample, in the split's order)."""
    if not limit:
        return instances
    parts = [
        part.sample(n=min(limit, len(part)), random_state=0).sort_index() for _, part in instances.groupby("split", sort=False)
    ]
    return pd.concat(parts).sort_index().reset_index(drop=True)


def their_filter(instances: pd.DataFrame) -> pd.DataFrame:
    """What their loader keeps of train and test (DatasetBC.filterbylength, min_length 5, max_length None: more than 5
    real tokens and fewer than the split's longest); dev, which they never read, is left whole."""
    keep = pd.Series(True, index=instances.index)
    for split in ("train", "test"):
        rows = instances["split"] == split
        lengths = instances.loc[rows, "length"]
        keep[rows] = (lengths > MIN_LENGTH) & (lengths < lengths.max())
    return instances[keep].reset_index(drop=True)


def write_their_data(folder: Path, instances: pd.DataFrame, embeddings: np.ndarray, meta: dict) -> None:
    """preprocess/SST/vec_sst.p under `folder` (their --data_dir): the attributes of J&W's pickled Vectorizer that
    their loader reads (seq_text and label per split, embeddings, vocab_size, word_dim), as a SimpleNamespace."""
    vec = types.SimpleNamespace(
        seq_text={},
        label={},
        embeddings=embeddings,
        vocab_size=embeddings.shape[0],
        word_dim=embeddings.shape[1],
        word2idx={w: i for i, w in enumerate(meta["vocab"])},
        idx2word=dict(enumerate(meta["vocab"])),
    )
    for split in ("train", "test"):
        part = split_frame(instances, split)
        vec.seq_text[split] = [[int(t) for t in tokens] for tokens in part["tokens"]]
        vec.label[split] = [int(y) for y in part["label"]]
    path = folder / "preprocess" / "SST" / "vec_sst.p"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        pickle.dump(vec, handle)


# --- ours ---


class Timed:
    """An objective whose per-epoch evaluation is timed (the rest of the epoch is the train pass)."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def evaluate(self, model, train_loss):
        start = time.perf_counter()
        try:
            return self.inner.evaluate(model, train_loss)
        finally:
            self.seconds += time.perf_counter() - start


def padded(rows: list) -> np.ndarray:
    out = np.zeros((len(rows), max((len(r) for r in rows), default=0)))
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def warm_up(instances: pd.DataFrame, meta: dict, embeddings: torch.Tensor, config: dict) -> None:
    """Not timed: scikit-learn's import and torch's first calls (kernels, thread pool), which every run of theirs pays
    at its process start (the row 'process start, imports, data loading' and its first batches), before round 1."""
    from attnexp.pipeline.settings import fit_settings

    spec = get_dataset("sst")
    hp = {"batch_size": spec.batch_size, "embedding_dim": spec.embedding_dim, "hidden_size": spec.hidden_size, "epochs": 1}
    settings = replace(fit_settings(config, seed=SEED, paper="wp", hyperparameters=hp), device="cpu")
    model = model_from_options(meta, *VARIANTS["base"], hp, config["model"], SEED, embeddings)
    fit(model, subset(instances, 64), settings, Classification(first_epoch_eligible=True), lambda _: None)


def run_ours(instances: pd.DataFrame, meta: dict, embeddings: torch.Tensor, config: dict, args) -> tuple[dict, dict]:
    from attnexp.pipeline.settings import fit_settings

    spec = get_dataset("sst")
    hp = {"batch_size": spec.batch_size, "embedding_dim": spec.embedding_dim, "hidden_size": spec.hidden_size}
    settings = lambda epochs: replace(  # noqa: E731
        fit_settings(config, seed=SEED, paper="wp", hyperparameters={**hp, "epochs": epochs}), device="cpu"
    )
    build = lambda variant: model_from_options(meta, *VARIANTS[variant], hp, config["model"], SEED, embeddings)  # noqa: E731
    quiet = lambda _: None  # noqa: E731
    times, results = {}, {"n": (int((instances["split"] == "train").sum()), int((instances["split"] == "test").sum()))}

    start = time.perf_counter()
    base, objective = build("base"), Timed(Classification(first_epoch_eligible=True))
    result = fit(base, instances, settings(1), objective, quiet)
    outputs = {s: donor_outputs(base, split_frame(instances, s)) for s in DONOR_SPLITS}
    epoch = float(result.history["seconds"].iloc[0])
    times.update(base_pass=epoch - objective.seconds, base_epoch=epoch, base_run=time.perf_counter() - start)
    results["base"] = result.test_metrics
    donor = DonorTable.from_frames(pd.concat(a for _, a in outputs.values()), pd.concat(p for p, _ in outputs.values()))

    result = fit(build("uniform"), instances, settings(1), Classification(first_epoch_eligible=True), quiet)
    times["uniform_epoch"] = float(result.history["seconds"].iloc[0])
    results["uniform"] = result.test_metrics

    wp = config["wp"]
    adversary = AdversaryObjective(args.lam, wp["tvd_binary"], wp["adv_loss_class_weight_scaling"], max_epochs=1, patience=1)
    objective = Timed(ConsistentAdversary(adversary, donor))  # as train_consistent_adversary calls fit, for one epoch
    model = build("base")
    result = fit(model, instances, settings(1), objective, quiet)
    epoch = float(result.history["seconds"].iloc[0])
    times.update(adv_pass=epoch - objective.seconds, adv_epoch=epoch)
    (base_p, base_attention), (p, attention) = outputs["test"], donor_outputs(model, split_frame(instances, "test"))
    tvd, divergence = divergence_to_base(
        base_p["p"].to_numpy(), padded(base_attention["attention"]), p["p"].to_numpy(), padded(attention["attention"])
    )
    results["adversary"] = {**result.test_metrics, "mean_tvd": float(tvd.mean()), "mean_jsd": float(divergence.mean())}

    start = time.perf_counter()
    objective = Timed(Classification(first_epoch_eligible=True))
    result = fit(build(MLP_ATTENTION[args.guide][0]), instances, settings(args.mlp_epochs), objective, quiet)
    times.update(
        mlp_run=time.perf_counter() - start,
        mlp_pass=(float(result.history["seconds"].sum()) - objective.seconds) / args.mlp_epochs,
    )
    results["mlp"] = result.test_metrics
    return times, results


# --- theirs ---


def run_peer(args, data: Path, out: Path, name: str, extra: list[str]) -> dict:
    """One run of their entry point (its flags as in their run_*.sh) under the timing driver; the driver's record."""
    record, log = out / f"{name}.json", out / f"{name}.log"
    threads = str(args.threads)
    env = {**os.environ, "PYTHONPATH": str(args.peer.resolve().parent), "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    command = [str(args.peer_python), "-c", DRIVER, str(record), threads, PEER_SCRIPT]
    command += ["--dataset", "sst", "--data_dir", str(data), "--output_dir", str(out), *extra]
    start = time.perf_counter()
    with open(log, "w") as handle:
        done = subprocess.run(command, cwd=args.peer, env=env, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode:
        tail = "\n".join(log.read_text().splitlines()[-15:])
        sys.exit(f"wp_peer: their {name} run failed (exit {done.returncode}); log {log}:\n{tail}")
    timings = json.loads(record.read_text())
    timings["process"] = time.perf_counter() - start
    timings["metrics"] = json.loads((Path(timings["dirname"]) / "evaluate.json").read_text())
    return timings


def run_theirs(args, data: Path, out: Path) -> tuple[dict, dict]:
    out.mkdir(parents=True, exist_ok=True)
    base = run_peer(args, data, out, "base", ["--attention", "tanh", "--encoder", "lstm", "--n_iters", "1"])
    uniform = run_peer(args, data, out, "uniform", ["--attention", "frozen", "--encoder", "lstm", "--n_iters", "1"])
    gold = ["--gold_label_dir", base["dirname"], "--lmbda", str(args.lam)]
    adversary = run_peer(args, data, out, "adversary", ["--encoder", "lstm", "--adversarial", *gold, "--n_iters", "1"])
    attention = MLP_ATTENTION[args.guide][1]
    mlp = run_peer(args, data, out, "mlp", ["--encoder", "average", "--attention", attention, "--n_iters", str(args.mlp_epochs)])
    times = {
        "base_pass": base["train_pass"],
        "base_epoch": base["epochs"],
        "base_run": base["run"],
        "uniform_epoch": uniform["epochs"],
        "adv_pass": adversary["train_pass"],
        "adv_epoch": adversary["epochs"],
        "mlp_run": mlp["run"],
        "mlp_pass": mlp["train_pass"] / args.mlp_epochs,
        "startup": statistics.mean(r["imports"] + r["script"] - r["run"] for r in (base, uniform, adversary, mlp)),
    }
    n_test = adversary["n_test"]
    m = adversary["metrics"]
    results = {
        "n": (base["n_train"], base["n_test"]),
        "torch": base["torch"],
        "base": base["metrics"],
        "uniform": uniform["metrics"],
        # their sums over test of ½|p_a - p_b| and of the JSD, as per-instance means (TVD as |p_a - p_b|)
        "adversary": {**m, "mean_tvd": 2 * m["TVD"] / n_test, "mean_jsd": m["js_divergence"] / n_test},
        "mlp": mlp["metrics"],
    }
    return times, results


# --- the report ---

ROWS = (
    ("base_pass", "base: train pass (1 epoch)"),
    ("base_epoch", "base: epoch"),
    ("base_run", "base: 1-epoch run with stored outputs"),
    ("uniform_epoch", "uniform: epoch"),
    ("adv_pass", "adversary lambda={lam}: train pass"),
    ("adv_epoch", "adversary lambda={lam}: epoch"),
    ("mlp_pass", "MLP ({guide}): train pass per epoch"),
    ("mlp_run", "MLP ({guide}): run of {epochs} epochs"),
)


def scores(metrics: dict, theirs: bool) -> str:
    if theirs:
        f1, accuracy, auc = metrics["1/f1-score"], metrics["accuracy"], metrics["roc_auc"]
    else:
        f1, accuracy, auc = metrics["f1_positive"], metrics["accuracy"], metrics["roc_auc"]
    return f"F1 {f1:.3f} acc {accuracy:.3f} AUC {auc:.3f}"


def report(args, ours: list[dict], theirs: list[dict], results: dict, load: tuple, config: dict) -> None:
    rounds = f"{args.threads} thread(s), medians of {args.rounds} round(s)"
    print(f"\nW&P beside the authors' code: SST, {rounds}; ratio = theirs / ours")
    print(f"{'measure':48} {'ours s':>9} {'theirs s':>9} {'ratio':>7}")
    for key, label in ROWS:
        a, b = statistics.median(t[key] for t in ours), statistics.median(t[key] for t in theirs)
        name = label.format(lam=args.lam, guide=args.guide, epochs=args.mlp_epochs)
        print(f"{name:48} {a:9.2f} {b:9.2f} {b / a if a else float('nan'):7.2f}")
    startup = statistics.median(t["startup"] for t in theirs)
    print(f"{'theirs only: process start, imports, data loading':48} {'':9} {startup:9.2f}")
    before, after = (" ".join(f"{x:.2f}" for x in values) for values in load)
    print(f"load average before: {before}; after: {after}")
    mine, peer = results["ours"], results["theirs"]
    wp = config["wp"]
    print(
        f"\nScores on test (last round; after ONE epoch, the MLP after its {args.mlp_epochs}; full training is too long to "
        "run here, so these are not the papers' figures)"
    )
    print(
        f"ours: select_on {wp['select_on']}, tvd_binary {wp['tvd_binary']}, class-weight scaling "
        f"{wp['adv_loss_class_weight_scaling']}, torch {torch.__version__}; theirs: torch {peer['torch']}"
    )
    print(f"{'':26} {'ours':34} theirs")
    sizes = [f"{n_train} / {n_test}" for n_train, n_test in (mine["n"], peer["n"])]
    print(f"{'train / test instances':26} {sizes[0]:34} {sizes[1]}")
    for key, label in (("base", "base"), ("uniform", "uniform"), ("adversary", f"adversary lambda={args.lam}")):
        print(f"{label:26} {scores(mine[key], False):34} {scores(peer[key], True)}")
    a, b = (f"{r['adversary']['mean_tvd']:.4f}, {r['adversary']['mean_jsd']:.4f}" for r in (mine, peer))
    print(f"{'  vs base: mean TVD, JSD':26} {a:34} {b}")
    print(f"{f'MLP ({args.guide})':26} {scores(mine['mlp'], False):34} {scores(peer['mlp'], True)}")
    if mine["n"] != peer["n"]:
        print(f"WARNING: the systems trained on different instances: ours {mine['n']}, theirs {peer['n']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, required=True, help="the exported, patched sarahwie/attention checkout")
    parser.add_argument("--peer-python", type=Path, help="their venv's python (default: PEER/../venv/bin/python)")
    parser.add_argument("--prepare", action="store_true", help="make PEER runnable (docstring steps 2-5) and stop")
    parser.add_argument("--rounds", type=int, default=3, help="ours, theirs, ours, theirs, ...: N of each")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of both (theirs also OMP/MKL_NUM_THREADS)")
    parser.add_argument("--lam", type=float, default=1.0, help="the adversary's lambda (config diag_adv_lambda: 1)")
    parser.add_argument("--guide", choices=sorted(MLP_ATTENTION), default="trained", help="the diagnostic MLP's attention")
    parser.add_argument("--mlp-epochs", type=int, default=8, help="epochs of the MLP run (W&P: 8)")
    parser.add_argument("--limit", type=int, help="at most N instances of each split (a smoke run)")
    parser.add_argument("--preprocessed", help="a preprocessed SST folder (default results/preprocessed/sst, else made here)")
    parser.add_argument("--raw-data", default=str(REPO.parent / "shared" / "data"), help="raw data when preprocessing here")
    parser.add_argument("--configfile", default=str(REPO / "config" / "paper.yaml"), help="our W&P settings")
    parser.add_argument("--our-defaults", action="store_true", help="our DEFAULT W&P reading instead of the authors' settings")
    parser.add_argument("--workdir", type=Path, help="their data and outputs (default: a temporary folder, removed after)")
    args = parser.parse_args()
    args.peer = args.peer.resolve()
    args.peer_python = args.peer_python or default_python(args.peer)
    if args.prepare:
        prepare(args.peer, args.peer_python)
        return
    check_peer(args.peer, args.peer_python)
    if args.lam == 0:
        sys.exit("wp_peer: their script refuses lambda 0 (`if args.adversarial and not args.lmbda`)")
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(args.threads)
    torch.set_num_threads(args.threads)

    config = validate_config(yaml.safe_load(Path(args.configfile).read_text()), PACKAGED_SCHEMA)
    if not args.our_defaults:  # the authors' code: select on test, half TVD, batch loss times its class weight
        config["wp"].update(select_on="test", tvd_binary="half", adv_loss_class_weight_scaling=True)
    instances, meta = load_sst(args)
    given = subset(instances, args.limit)  # what their loader reads (it filters it again)
    instances = their_filter(given)  # what it keeps: ours trains on the same
    spec = get_dataset("sst")
    hp = {"batch_size": spec.batch_size, "embedding_dim": spec.embedding_dim, "hidden_size": spec.hidden_size}
    embeddings = model_from_options(meta, *VARIANTS["base"], hp, config["model"], SEED).embedding.weight.detach().clone()
    embeddings[0] = 0.0  # PAD: their encoder zeroes row 0, ours keeps padding_idx 0 at zero

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="wp_peer_"))
    data = workdir / "data"
    write_their_data(data, given, embeddings.numpy().astype(np.float32), meta)
    sizes = {s: int((instances["split"] == s).sum()) for s in ("train", "dev", "test")}
    print(f"SST: {sizes} after their filter ({len(given) - len(instances)} dropped); their data and outputs in {workdir}")
    warm_up(instances, meta, embeddings, config)
    load_before = os.getloadavg()
    ours, theirs, results, finished = [], [], {}, False
    try:
        for round_ in range(1, args.rounds + 1):
            start = time.perf_counter()
            times, results["ours"] = run_ours(instances, meta, embeddings, config, args)
            ours.append(times)
            middle = time.perf_counter()
            times, results["theirs"] = run_theirs(args, data, workdir / f"round{round_}")
            theirs.append(times)
            spent = f"ours {middle - start:.1f} s, theirs {time.perf_counter() - middle:.1f} s"
            print(f"round {round_}/{args.rounds}: {spent}", flush=True)
        finished = True
    finally:
        if args.workdir is None and finished:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not finished:
            print(f"wp_peer: stopped; their data, outputs and logs are kept in {workdir}", file=sys.stderr)
    report(args, ours, theirs, results, (load_before, os.getloadavg()), config)


if __name__ == "__main__":
    main()
