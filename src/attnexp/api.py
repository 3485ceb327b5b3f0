"""The Python API for notebooks: load a trained run, explain one raw sentence with every measure the papers use,
draw it as a text heatmap.

    from attnexp import load_run, explain, heatmap
    run = load_run("results/models/syn_sentiment/lstm-tanh/seed0")
    exp = explain(run.model, run.tokenizer, "a moving and funny film", classes=run.classes)
    exp.to_frame(); exp.tau; heatmap(exp, path="sentence.png")
    exp                                   # in a notebook: the words shaded by each measure (`_repr_html_`)
    explain(run.model, run.tokenizer, ["a dull film", "a fine one"], target="positive", classes=run.classes)

Every number comes from the library functions the workflow runs (`analyses.jw.instances` importance /
permutation / adversary tables, `analyses.jw.kendall`, `analyses.az.measures.relevance_and_importance`) on a one-row
table, so a sentence explained here gets exactly what the pipeline computes for a test instance. Models are
typed against `AttentionModel`; a Hugging Face model and tokenizer are accepted too (`as_attention_model`,
`as_tokenizer`).
"""

import contextlib
import functools
import html
import io
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
import torch

from attnexp import (
    __all__,  # noqa: F401  (the public names, listed once in attnexp/__init__.py)
    paths,
)
from attnexp.analyses.az import gradient_measure
from attnexp.analyses.az.measures import relevance_and_importance
from attnexp.analyses.az.settings import AZSettings
from attnexp.analyses.jw.instances import adversary_table, importance_table, permutation_table
from attnexp.analyses.jw.kendall import computed_pairs, kendall_tau_per_instance
from attnexp.analyses.jw.settings import AnalysisSettings
from attnexp.config import PACKAGED_SCHEMA, schema_problems
from attnexp.data.batching import Batch, collate
from attnexp.data.vocab import EOS, SOS, SPECIALS, UNK, encode
from attnexp.datasets.tokenize import TOKENIZERS
from attnexp.io import read_json, read_yaml
from attnexp.models.checkpoint import load_model
from attnexp.models.device import model_device
from attnexp.models.interface import AttentionModel
from attnexp.models.settings import Compute

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SCHEMA = PACKAGED_SCHEMA  # attnexp/config.schema.yaml, package data (attnexp.config reads it by default)
INSTANCE_ID = "input"
JW_MEASURES = ("attention", "gradient", "loo", "ig")
NO_ADVERSARY = ("hf",)  # model kinds whose heads share no single attention vector to optimise
AZ_MEASURES = ("raw", "rollout", "flow")
UNKNOWN_WARNING = 0.5  # `explain` warns when at least this share of a text's tokens is the tokenizer's unknown id
LENGTH_SPREAD = 2.0  # a list's chunk: its longest text at most this many times as long as its shortest (in ids)


# --- tokenizers: raw text -> ids with the two markers ---


@dataclass(frozen=True)
class TokenizedText:
    """One text as a model reads it: ids with the markers ([SOS]/[CLS] first, [EOS]/[SEP] last), the display
    strings of the real tokens (`tokens[1:-1]`), of every position, and the second text's ids (NLI/QA)."""

    tokens: list[int]
    words: list[str]
    positions: list[str]
    question: list[int] | None = None


@runtime_checkable
class TextTokenizer(Protocol):
    """What the API needs from a tokenizer: `encode` and the id A&Z blank-out substitutes. An `unknown_id`
    attribute (the id of words it does not know, None: no such id), where it has one, gives `Explanation.unknown`."""

    blank_id: int

    def encode(self, text: str, question: str | None = None) -> TokenizedText: ...


@dataclass(frozen=True)
class VocabularyTokenizer:
    """A preprocessed dataset's tokenizer: its text recipe (`tokenize.TOKENIZERS`) and vocabulary (meta.json)."""

    vocab: Sequence[str]
    recipe: str = "spacy"
    blank_id: int = UNK
    index: Mapping[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.recipe not in TOKENIZERS:
            raise ValueError(f"unknown text recipe {self.recipe!r}; choose one of {', '.join(TOKENIZERS)}")
        object.__setattr__(self, "index", {w: i for i, w in enumerate(self.vocab)})

    @property
    def unknown_id(self) -> int:
        """The id every word outside the vocabulary gets (`attnexp.data.vocab.UNK`)."""
        return UNK

    def encode(self, text: str, question: str | None = None) -> TokenizedText:
        words = TOKENIZERS[self.recipe](text).split()
        if not words:
            raise ValueError(f"{text!r} has no token after the {self.recipe!r} recipe")
        ids = encode(words, self.index)
        second = encode(TOKENIZERS[self.recipe](question).split(), self.index) if question is not None else None
        return TokenizedText(ids, words, [SPECIALS[SOS], *words, SPECIALS[EOS]], second)


class HuggingFaceTokenizer:
    """A Hugging Face tokenizer (anything with `__call__` -> input_ids and `convert_ids_to_tokens`): [CLS] and the
    final [SEP] are the markers; its unknown token is the default blank and the `unknown_id` (None without one)."""

    def __init__(self, tokenizer: Any, max_length: int | None = None, joiner: str = ""):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.joiner = joiner  # a prompt's whitespace before {text}, tokenized with the text as in the filled prompt
        unk = getattr(tokenizer, "unk_token_id", None)
        self.unknown_id = None if unk is None else int(unk)
        self.blank_id = int(unk if unk is not None else UNK)

    def encode(self, text: str, question: str | None = None) -> TokenizedText:
        """A pair is packed into one sequence ([CLS] text [SEP] question [SEP]; a decoder's tokenizer: between [BOS] and
        [EOS]), as the `hf` family reads it (`attnexp.models.hf.data.framed_ids`)."""
        from attnexp.models.hf.data import framed_ids

        (ids,) = framed_ids(self.tokenizer, [self.joiner + text], None if question is None else [question], self.max_length)
        if len(ids) < 3:
            raise ValueError(f"{text!r} has no token between the tokenizer's special tokens")
        positions = [str(t) for t in self.tokenizer.convert_ids_to_tokens(ids)]
        return TokenizedText(ids, positions[1:-1], positions)


def as_tokenizer(tokenizer: TextTokenizer | Any) -> TextTokenizer:
    """A `TextTokenizer` as is; a Hugging Face tokenizer wrapped in `HuggingFaceTokenizer`."""
    if hasattr(tokenizer, "convert_ids_to_tokens"):
        return HuggingFaceTokenizer(tokenizer)
    if isinstance(tokenizer, TextTokenizer):
        return tokenizer
    raise TypeError(
        f"{type(tokenizer).__name__} is not a tokenizer the API knows: pass `load_run(...).tokenizer`, a "
        "VocabularyTokenizer(vocab, recipe), a Hugging Face tokenizer, or an object with `blank_id` and `encode`"
    )


def as_attention_model(
    model: AttentionModel | torch.nn.Module, tokenizer: Any = None, prompt: str | None = None, verbalizer: Any = None
) -> AttentionModel:
    """An `AttentionModel` as is; a Hugging Face sequence classifier (with its tokenizer, which the wrapper needs
    for sentence pairs) through `attnexp.models.hf.wrap_pretrained`; a Hugging Face causal or masked LM with a
    `prompt` (its {text}; a masked LM's {mask}) and a `verbalizer` (class name -> word, or the words in class order)
    through `attnexp.models.hf.prompted.wrap_prompted`."""
    if isinstance(model, AttentionModel):
        return model
    if hasattr(model, "config") and hasattr(model.config, "model_type"):
        try:
            from attnexp.models.hf.loading import wrap_pretrained
        except ImportError as err:
            raise TypeError(
                f"a Hugging Face {model.config.model_type} model needs the `hf` model family (attnexp.models.hf: {err})"
            ) from None
        raw = tokenizer.tokenizer if isinstance(tokenizer, HuggingFaceTokenizer) else tokenizer
        if prompt is not None or verbalizer is not None:
            from attnexp.models.hf.prompted import wrap_prompted

            if prompt is None or verbalizer is None:
                raise ValueError("a prompted LM needs both `prompt` (with {text}) and `verbalizer` (a word per class)")
            words = list(verbalizer.values()) if isinstance(verbalizer, Mapping) else list(verbalizer)
            return wrap_prompted(model, raw, prompt, words)
        return wrap_pretrained(model, raw)
    raise TypeError(f"{type(model).__name__} does not satisfy attnexp.models.interface.AttentionModel")


def encode_text(tokenizer: TextTokenizer | Any, text: str, question: str | None = None) -> Batch:
    """One raw text as a one-instance Batch (label 0 until a prediction replaces it)."""
    return collate(_rows([as_tokenizer(tokenizer).encode(text, question)], labels=[0]))


def _instance_ids(n: int) -> list[str]:
    """Instance id "input" for a single text, "input0", "input1", … for several (the adversary and the random
    erasure ranking seed their draws by the id)."""
    return [INSTANCE_ID] if n == 1 else [f"{INSTANCE_ID}{i}" for i in range(n)]


def _rows(tokenized: Sequence[TokenizedText], labels: Sequence[int], ids: Sequence[str] | None = None) -> pd.DataFrame:
    """The table of `instances.parquet` the per-instance analyses read, one row per text, with the instance ids
    `ids` (default `_instance_ids`)."""
    rows = []
    ids = _instance_ids(len(tokenized)) if ids is None else ids
    for instance_id, text, label in zip(ids, tokenized, labels, strict=True):
        row = {
            "instance_id": instance_id,
            "split": "test",
            "tokens": text.tokens,
            "label": int(label),
            "length": len(text.tokens) - 2,
            "rationale": [],
        }
        if text.question is not None:
            row["question"] = text.question
        rows.append(row)
    return pd.DataFrame(rows)


# --- runs from results/ ---


@dataclass
class Run:
    """A trained model with what is needed to feed it raw text."""

    model: AttentionModel
    tokenizer: TextTokenizer
    classes: list[str]
    dataset: str
    config: dict


def _results_root(run_dir: Path) -> Path:
    """The working directory holding `results/` above a run folder."""
    results = Path(paths.RESULTS).name
    for parent in run_dir.resolve().parents:
        if parent.name == results:
            return parent.parent
    raise FileNotFoundError(f"{run_dir} is not inside a {results}/ folder; pass meta= (the preprocessed meta.json)")


def load_run(run_dir: str | Path, meta: str | Path | None = None, compute: Compute | None = None) -> Run:
    """The model of a training run folder (`attnexp.paths.RUN_FILES`), its tokenizer and classes.

    The model computes as the workflow's jobs compute with it: `compute` (`attnexp.models.settings.Compute`: the
    device and whether BiLSTMs run over the padded batch) defaults to the schema's (`default_compute()`: `device:
    auto`, `padded_lstm: true`), so `explain` gets exactly the analyses' numbers; `Compute("cpu", False)` keeps it
    on the CPU with torch's packed BiLSTM. The vocabulary and text recipe come from the preprocessed `meta.json` of
    the run's dataset (found under the same `results/`, or given as `meta`). A model that carries its own tokenizer
    (`tokenizer` attribute: a Hugging Face run, whose folder or model.pt `run_dir` may name) keeps it; its class
    names then come from `meta` when given, else they are the class indices.
    """
    run_dir = Path(run_dir)
    if run_dir.is_file():
        run_dir = run_dir.parent
    model = (compute or default_compute()).apply(load_model(run_dir / paths.RUN_FILES["model"]))
    config_file = next(
        (d / paths.RUN_FILES["config"] for d in (run_dir, run_dir.parent) if (d / paths.RUN_FILES["config"]).is_file()), None
    )
    config = (read_yaml(config_file) or {}) if config_file else {}  # checked against its sha256 sidecar
    dataset = config.get("dataset", "")
    own = model.tokenizer
    if meta is None and own is None:
        meta = _results_root(run_dir) / paths.preprocessed_files(dataset)["meta"]
    meta = read_json(meta) if meta is not None else {}
    tokenizer = as_tokenizer(own) if own is not None else VocabularyTokenizer(meta["vocab"], _recipe(meta))
    classes = meta.get("classes") or [str(c) for c in range(model.config.n_classes)]
    return Run(model=model, tokenizer=tokenizer, classes=list(classes), dataset=dataset, config=config)


def _recipe(meta: Mapping) -> str:
    """The text recipe preprocessing used (recorded in meta.json; older files: the registry's, else spaCy)."""
    if "tokenizer" in meta:
        return meta["tokenizer"]
    from attnexp.datasets import DATASETS

    spec = DATASETS.get(meta["dataset"])
    return spec.tokenizer if spec is not None else "spacy"


# --- explanations ---


def _default_config(schema: str | Path | None = None) -> dict:
    """The minimal config with every other key at the schema's default (the packaged schema unless `schema` names
    another file)."""
    from attnexp.pipeline.settings import MINIMAL_GRID

    config = dict(MINIMAL_GRID)
    problems = schema_problems(config, schema)
    if problems:
        raise ValueError(f"the schema {schema or SCHEMA} rejects its own minimal config: {problems}")
    return config


def default_settings(schema: str | Path | None = None) -> tuple[AnalysisSettings, AZSettings]:
    """The J&W and A&Z analysis settings of the default config (the schema's defaults: the packaged schema unless
    `schema` names another file), with the batch size its analyses job uses (the dataset's training batch size, 32
    by default): `explain` takes a list's texts in chunks of at most that many."""
    from attnexp.pipeline.settings import analysis_settings, az_settings, hyperparameters

    config = _default_config(schema)
    batch_size = hyperparameters(config, config["datasets"][0])["batch_size"]
    return analysis_settings(config, batch_size=batch_size), az_settings(config)


@functools.cache
def _packaged_settings() -> tuple[AnalysisSettings, AZSettings]:
    """`default_settings()` of the packaged schema, read once (`explain`'s default; both frozen)."""
    return default_settings()


def default_compute(schema: str | Path | None = None) -> Compute:
    """How the default config's models compute (the schema's `device` and `padded_lstm`), as every job applies it to
    the model it loads: `load_run`'s default."""
    from attnexp.pipeline.settings import compute_settings

    return compute_settings(_default_config(schema))


@dataclass
class Explanation:
    """Every measure for one text. J&W measures have one value per real token (`words`); A&Z's raw attention,
    rollout and flow have one row per layer over the positions the model reads ([CLS] first, then the words;
    our Transformer drops the closing marker, a Hugging Face model keeps [SEP]), None for models without
    per-layer attention maps."""

    text: str
    words: list[str]
    positions: list[str]
    tokens: list[int]
    classes: list[str]
    predicted: int
    probabilities: list[float]
    target: int  # the class the gradient, IG and A&Z scores explain (the predicted one unless `explain(target=)`)
    attention: np.ndarray
    gradient: np.ndarray
    loo: np.ndarray
    ig: np.ndarray
    tau: dict[str, tuple[float, float]]  # pair of kendall.PAIRS -> (tau-b, p)
    # the share of the real tokens (`tokens[1:-1]`) that are the tokenizer's unknown id (0.0 where it has none):
    # from `UNKNOWN_WARNING` on, `explain` warns (the model reads mostly [UNK]; the measures cannot tell the words apart)
    unknown: float = 0.0
    permutation_changes: np.ndarray | None = None  # [P] output change (TVD) per permutation of the attention
    adversarial_attention: np.ndarray | None = None  # the ε-max JSD attention over the real tokens
    adversarial_jsd: float | None = None
    adversarial_tvd: float | None = None
    raw: np.ndarray | None = None  # [layers, n]
    rollout: np.ndarray | None = None
    flow: np.ndarray | None = None
    blankout: np.ndarray | None = None  # [n] A&Z blank-out of the predicted class's score (az.score)
    input_gradient: np.ndarray | None = None  # [n] A&Z |sum_d ds/de|
    # the erasure tests of every ranking (Serrano & Smith; ERASER), the rows of erasure_attention.parquet and
    # erasure_input.parquet for this text (A&Z rankings included where the model has per-layer maps)
    erasure_attention: pd.DataFrame | None = None
    erasure_input: pd.DataFrame | None = None

    @property
    def aopc(self) -> pd.DataFrame | None:
        """Per ranking: comprehensiveness and sufficiency averaged over the bins (AOPC), and the first-flip fraction."""
        if self.erasure_input is None:
            return None
        table = self.erasure_input.groupby("ranking", sort=False)[["comprehensiveness", "sufficiency"]].mean()
        if self.erasure_attention is not None and len(self.erasure_attention):
            flips = self.erasure_attention.set_index("ranking")["first_flip_fraction"]
            table = table.reindex([*table.index, *(r for r in flips.index if r not in table.index)])
            table["first_flip_fraction"] = flips
        return table.reset_index()

    @property
    def label(self) -> str:
        """The predicted class's name."""
        return self._name(self.predicted)

    @property
    def target_label(self) -> str:
        """The explained class's name."""
        return self._name(self.target)

    def _name(self, index: int) -> str:
        return self.classes[index] if index < len(self.classes) else str(index)

    @property
    def summary(self) -> str:
        """ "predicted positive (p = 0.93)", with ", explaining negative" where the target is another class and
        ", 60% of the tokens unknown" where the tokenizer did not know some words (`unknown`)."""
        text = f"predicted {self.label} (p = {self.probabilities[self.predicted]:.2f})"
        if self.target != self.predicted:
            text += f", explaining {self.target_label}"
        if self.unknown > 0:
            text += f", {_percent(self.unknown)} of the tokens unknown"
        return text

    @property
    def permutation_median(self) -> float | None:
        return None if self.permutation_changes is None else float(np.median(self.permutation_changes))

    def measure(self, name: str, layer: int = -1) -> np.ndarray:
        """One value per real token: a J&W measure, `adversarial`, or an A&Z one at `layer` (last by default)."""
        if name in JW_MEASURES:
            return getattr(self, name)
        if name == "adversarial" and self.adversarial_attention is not None:
            return self.adversarial_attention
        if name in AZ_MEASURES and getattr(self, name) is not None:
            return getattr(self, name)[layer][1 : 1 + len(self.words)]
        if name in ("blankout", "input_gradient") and getattr(self, name) is not None:
            return getattr(self, name)[1 : 1 + len(self.words)]
        raise ValueError(f"no measure {name!r} in this explanation; it has {', '.join(self.measures)}")

    @property
    def measures(self) -> list[str]:
        names = list(JW_MEASURES) + (["adversarial"] if self.adversarial_attention is not None else [])
        return names + [n for n in (*AZ_MEASURES, "blankout", "input_gradient") if getattr(self, n) is not None]

    def to_frame(self) -> pd.DataFrame:
        """One row per real token, one column per measure (A&Z ones at the last layer)."""
        return pd.DataFrame({"word": self.words, **{name: self.measure(name) for name in self.measures}})

    def _repr_html_(self) -> str:
        """The notebook display: the summary, then one row of words per measure, each word shaded by its share
        of the measure's total on one scale for all rows (as `heatmap`; the score shows on hover), and Kendall's τ."""
        from attnexp.report.heatmap import shares, word_colours

        rows = {name: self.measure(name) for name in self.measures}
        vmax = max(float(shares(values).max(initial=0)) for values in rows.values())
        cells = []
        for name, values in rows.items():
            colours = word_colours(shares(values), vmax)
            words = "".join(
                f'<span title="{value:.4g}" style="background:{colour};padding:1px 3px;margin:1px;'
                f'border-radius:2px;display:inline-block">{html.escape(word)}</span>'
                for word, value, colour in zip(self.words, values, colours, strict=True)
            )
            cells.append(f'<tr><th style="text-align:right;padding-right:6px">{html.escape(name)}</th><td>{words}</td></tr>')
        taus = ", ".join(f"{pair} {tau:.2f}" for pair, (tau, _) in self.tau.items())
        caveat = f'<p style="color:#a00">{html.escape(_unknown_meaning())}</p>' if self.unknown >= UNKNOWN_WARNING else ""
        return (
            f"<div><p><b>{html.escape(self.summary)}</b></p>{caveat}<table>{''.join(cells)}</table>"
            f"<p>Shading: a word's share of the row's total, white 0 to darkest {vmax:.2f}. Kendall τ: "
            f"{html.escape(taus)}</p></div>"
        )


def _percent(share: float) -> str:
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


def _unknown_meaning() -> str:
    return (
        "The model sees mostly its unknown token [UNK], so the measures cannot tell these words apart (LOO, AOPC and "
        "the rest come out nearly equal): explain a text in the model's vocabulary and language, or use a model with "
        "a larger vocabulary."
    )


def unknown_share(tokenizer: TextTokenizer, tokenized: TokenizedText) -> float:
    """The share of the real tokens (`tokens[1:-1]`) that are the tokenizer's `unknown_id`; 0.0 without one."""
    unknown, real = getattr(tokenizer, "unknown_id", None), tokenized.tokens[1:-1]
    if unknown is None or not real:
        return 0.0
    return sum(int(t) == unknown for t in real) / len(real)


def _warn_unknown(explanation: "Explanation") -> None:
    text = explanation.text if len(explanation.text) <= 60 else explanation.text[:57] + "..."
    share = _percent(explanation.unknown)
    message = f"{text!r}: {share} of its tokens are unknown to the tokenizer. {_unknown_meaning()}"
    warnings.warn(message, UserWarning, stacklevel=3)  # at the caller of `explain`


def _chunks(sizes: Sequence[int], most: int) -> list[list[int]]:
    """The indices of a list's texts (`sizes`: ids per text) in length-sorted chunks of at most `most` texts whose
    longest is at most `LENGTH_SPREAD` times the shortest, so that each text's padding (and the first-flip test's
    steps, as many as the chunk's longest text) stays near its own length."""
    chunks: list[list[int]] = []
    for i in sorted(range(len(sizes)), key=lambda i: sizes[i]):
        if chunks and len(chunks[-1]) < most and sizes[i] <= LENGTH_SPREAD * sizes[chunks[-1][0]]:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def _quiet(function, *args, **kwargs):
    """Run a pipeline function without its progress lines."""
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args, **kwargs)


def explain(
    model: AttentionModel | torch.nn.Module,
    tokenizer: TextTokenizer | Any,
    text: str | Sequence[str],
    question: str | Sequence[str] | None = None,
    *,
    target: int | str | Sequence[int | str] | None = None,
    classes: Sequence[str] | None = None,
    settings: AnalysisSettings | None = None,
    az_settings: AZSettings | None = None,
    with_permutation: bool = True,
    with_adversary: bool = True,
    with_erasure: bool = True,
    seed: int = 0,
    prompt: str | None = None,
    verbalizer: Mapping[str, str] | Sequence[str] | None = None,
) -> "Explanation | list[Explanation]":
    """Explain the model's prediction for a raw `text` (and `question`, NLI/QA) with every measure; a list of
    texts (and of questions) gives a list of explanations, in its order. A list is explained in length-sorted
    chunks (`_chunks`: at most `settings.batch_size` texts, the longest at most `LENGTH_SPREAD` times the
    shortest), each as one batch, so that padding and the first-flip test's steps stay near each text's own length;
    every number but the permutations' (one generator, drawn chunk by chunk) is what the text alone gets, up to
    float rounding, under its instance id ("input0", "input1", … by its position in the list).
    A text whose tokens are mostly the tokenizer's unknown id (`Explanation.unknown` >= `UNKNOWN_WARNING`) gets a
    UserWarning: the model reads mostly [UNK], and its measures cannot tell the words apart.

    J&W (§6): attention, gradient, leave-one-out and integrated gradients per token, Kendall τ between them,
    the output change under `settings.permutations` permutations of the attention (generator seed `seed`) and
    the ε-max adversarial attention (seed `seed + 1`, starts drawn from it and the instance id, "input" for one
    text), as `analyses.jw.run` seeds them (`with_permutation`, `with_adversary`: False skips them). A&Z (§3-4),
    for models whose `encode` exposes per-layer attention `maps`: raw attention, rollout and flow per layer,
    blank-out and input gradients.
    `target`: the class (index, or name of `classes`, by default the model's own: a checkpoint's `id2label`; one per
    text or one for all) whose score the gradient, IG
    and A&Z's blank-out and input gradients explain; default the predicted class. A binary model's gradient and
    IG explain p(positive) whatever the target (J&W's convention; the other class's only flips the sign, which
    the absolute value drops); attention, LOO, permutations and the adversary do not depend on a class.
    A prompted LM (a Hugging Face causal LM, or a masked LM, with `prompt` and `verbalizer`; or one `load_run` or
    `attnexp.models.hf.prompted.wrap_prompted` gives) is explained at the prompt's last token (a masked LM: its mask)
    over the text's tokens alone; the template's tokens are never ranked. `verbalizer` as a mapping names the classes.
    `settings` / `az_settings` default to the schema's defaults. A Hugging Face model gets no adversarial
    attention (its heads share no single attention vector). Erasure (`with_erasure`): Serrano & Smith's
    attention-weight erasure and ERASER's comprehensiveness and sufficiency of every ranking (a random one seeded by
    `seed` and the id "input"), as the analyses jobs run them, in `erasure_attention`, `erasure_input` and `aopc`.
    """
    single = isinstance(text, str)
    texts = [text] if single else list(text)
    if not texts:
        raise ValueError("explain() needs at least one text")
    questions = [question] * len(texts) if question is None or isinstance(question, str) else list(question)
    if len(questions) != len(texts):
        raise ValueError(f"{len(questions)} questions for {len(texts)} texts")
    targets = [target] * len(texts) if target is None or isinstance(target, int | str) else list(target)
    if len(targets) != len(texts):
        raise ValueError(f"{len(targets)} targets for {len(texts)} texts")
    model, tokenizer = as_attention_model(model, tokenizer, prompt, verbalizer), as_tokenizer(tokenizer)
    if getattr(model.config, "prompt", None) and isinstance(tokenizer, HuggingFaceTokenizer):
        from attnexp.models.hf.prompts import text_joiner

        tokenizer = HuggingFaceTokenizer(tokenizer.tokenizer, tokenizer.max_length, text_joiner(model.config.prompt))
    if classes is None and isinstance(verbalizer, Mapping):
        classes = list(verbalizer)
    defaults = _packaged_settings() if settings is None or az_settings is None else None
    settings, az_settings = settings or defaults[0], az_settings or defaults[1]
    model.eval()
    tokenized = [tokenizer.encode(t, q) for t, q in zip(texts, questions, strict=True)]
    ids = _instance_ids(len(texts))  # by the position in the list, whatever chunk a text falls in
    chunk = _Chunk(
        model=model,
        tokenizer=tokenizer,
        classes=list(classes) if classes is not None else None,
        settings=settings,
        az_settings=az_settings,
        permutations=torch.Generator().manual_seed(seed) if with_permutation else None,  # one stream, chunk by chunk
        adversary=with_adversary and model.checkpoint_kind not in NO_ADVERSARY,
        erasure=_erasure_settings() if with_erasure else None,
        seed=seed,
    )
    explanations: list[Explanation] = [None] * len(texts)  # type: ignore[list-item]
    sizes = [len(t.tokens) + len(t.question or ()) for t in tokenized]
    for indices in _chunks(sizes, max(1, settings.batch_size)):  # similar lengths together, then the input order
        picked = ([values[i] for i in indices] for values in (texts, tokenized, ids, targets))
        for i, explanation in zip(indices, chunk.explain(*picked), strict=True):
            explanations[i] = explanation
    for explanation in explanations:
        if explanation.unknown >= UNKNOWN_WARNING:
            _warn_unknown(explanation)
    return explanations[0] if single else explanations


@dataclass
class _Chunk:
    """What `explain` runs on each chunk of its texts: every measure on one batch (`explain`)."""

    model: AttentionModel
    tokenizer: TextTokenizer
    classes: list[str] | None
    settings: AnalysisSettings
    az_settings: AZSettings
    permutations: torch.Generator | None  # None: no permutation test
    adversary: bool
    erasure: Any  # ErasureSettings, None: no erasure tests
    seed: int

    def explain(
        self, texts: list[str], tokenized: list[TokenizedText], ids: list[str], wanted: list[int | str | None]
    ) -> list[Explanation]:
        model, az_settings = self.model, self.az_settings
        settings = replace(self.settings, batch_size=len(texts))  # the chunk as one batch
        with torch.no_grad():  # on the model's device, as the analyses batch (a loaded run: the configured device)
            output = model(collate(_rows(tokenized, [0] * len(texts), ids)).to(model_device(model)))
        predicted = model.predict(output.logits).tolist()
        probabilities = model.distribution(output.logits).double().tolist()
        if self.classes is None:
            self.classes = model_classes(model, len(probabilities[0]))
        names = self.classes
        targets = _targets(None if all(t is None for t in wanted) else wanted, names, predicted)
        rows = _rows(tokenized, targets, ids)

        importance = _quiet(importance_table, model, rows, settings, explain_label=True)
        pairs = computed_pairs(loo=settings.bc_loo or not model.is_binary, ig=settings.ig_steps is not None)  # as the job
        taus = kendall_tau_per_instance(importance, pairs)
        explanations = [
            Explanation(
                text=t,
                words=tokens.words,
                positions=tokens.positions,
                tokens=tokens.tokens,
                classes=names,
                predicted=predicted[i],
                probabilities=probabilities[i],
                target=targets[i],
                **{name: np.asarray(importance[name][i], dtype=float) for name in JW_MEASURES},
                tau={
                    row.pair: (float(row.tau), float(row.p_value))
                    for row in taus[taus["instance_id"] == ids[i]].itertuples(index=False)
                },
                unknown=unknown_share(self.tokenizer, tokens),
            )
            for i, (t, tokens) in enumerate(zip(texts, tokenized, strict=True))
        ]
        if self.permutations is not None:
            permuted = _quiet(permutation_table, model, rows, settings, self.permutations)
            for explanation, changes in zip(explanations, permuted["output_changes"], strict=True):
                explanation.permutation_changes = np.asarray(changes, dtype=float)
        if self.adversary:
            adversarial = _quiet(adversary_table, model, rows, settings, self.seed + 1)
            for explanation, row in zip(explanations, adversarial.itertuples(index=False), strict=True):
                explanation.adversarial_attention = np.asarray(row.adversarial_attention, dtype=float)
                explanation.adversarial_jsd, explanation.adversarial_tvd = float(row.emax_jsd), float(row.emax_tvd)
        relevance, measure = None, None
        if output.encoded.maps is not None:
            relevance = relevance_and_importance(
                model,
                rows,
                batch_size=len(texts),
                relevance_row=az_settings.relevance_row,
                rollout_residual=az_settings.rollout_residual,
                flow_solver=az_settings.flow_solver,
                score=az_settings.score,  # of the "gold" class: the target (a raw sentence has no label)
                progress=lambda line: None,
                blank=self.tokenizer.blank_id if model.blank_id is None else model.blank_id,  # the hf family: [MASK]
                memory_budget_mb=settings.memory_budget_mb,  # as the A&Z job: `analyses.memory_budget_mb`
            )
            measure = gradient_measure(az_settings.gradient, model.input_shift_invariant)  # "auto": the model's own
            for explanation, (_, row) in zip(explanations, relevance.iterrows(), strict=True):
                for name in AZ_MEASURES:
                    setattr(explanation, name, np.asarray(row[name], dtype=float))
                explanation.blankout = np.asarray(row["blankout"], dtype=float)
                explanation.input_gradient = np.asarray(row[measure], dtype=float)
        if self.erasure is not None:
            _erasure(explanations, model, rows, importance, relevance, measure, self.seed, self.erasure)
        return explanations


def model_classes(model: AttentionModel, n: int) -> list[str]:
    """The class names a model carries: a Hugging Face checkpoint's `id2label`, unless it is transformers' default
    (LABEL_0, LABEL_1, ...); else the indices "0" .. "n-1" (a run's names come from its dataset: `Run.classes`)."""
    config = getattr(getattr(model, "model", None), "config", None)
    labels = getattr(config, "id2label", None) or {}
    names = [str(labels.get(i, labels.get(str(i), ""))) for i in range(n)]
    if all(names) and names != [f"LABEL_{i}" for i in range(n)]:
        return names
    return [str(i) for i in range(n)]


def _targets(target: int | str | Sequence[int | str] | None, classes: Sequence[str], predicted: list[int]) -> list[int]:
    """One class index per text: the predicted ones, or `target` (one for all, or one per text; index or name)."""
    if target is None:
        return list(predicted)
    wanted = [target] * len(predicted) if isinstance(target, int | str) else list(target)
    if len(wanted) != len(predicted):
        raise ValueError(f"{len(wanted)} targets for {len(predicted)} texts")
    indices = []
    for t in wanted:
        index = classes.index(t) if isinstance(t, str) and t in classes else t
        if not isinstance(index, int) or not 0 <= index < len(classes):
            known = ", ".join(map(str, classes))
            raise ValueError(f"target {t!r} is not a class of this model: {known} (or 0..{len(classes) - 1})")
        indices.append(index)
    return indices


@functools.cache
def _erasure_settings():
    """The erasure tests' settings of the default config (the packaged schema's bins and memory budget), read once."""
    from attnexp.pipeline.settings import MINIMAL_GRID, erasure_settings

    config = dict(MINIMAL_GRID, analyses={"erasure": {"enabled": True}})
    schema_problems(config)  # fills the schema's defaults (bins, memory budget)
    return erasure_settings(config)


def _erasure(
    explanations: Sequence[Explanation],
    model: AttentionModel,
    rows: pd.DataFrame,
    importance: pd.DataFrame,
    relevance: pd.DataFrame | None,
    gradient: str | None,
    seed: int,
    settings: Any,
) -> None:
    """The erasure tests (`settings`: ErasureSettings) of the J&W rankings (and the A&Z ones of `relevance`, with
    its input-gradient measure `gradient`) for every text, as one batch; each explanation gets its own rows."""
    from attnexp.analyses.erasure import JW_RANKINGS
    from attnexp.analyses.erasure.instances import az_rankings, erasure_tables

    run = dict(settings=settings, seed=seed, batch_size=len(rows), progress=False)
    attention, inputs = erasure_tables(model, rows, importance[["instance_id", *JW_RANKINGS]], **run)
    if relevance is not None:
        az = az_rankings(relevance, gradient)
        az_attention, az_inputs = erasure_tables(model, rows, az, **run, offset=0)
        ours = list(az.columns[1:])  # the A&Z rankings only (attention, random and the rest came above)
        attention = pd.concat([attention, az_attention[az_attention["ranking"].isin(ours)]], ignore_index=True)
        inputs = pd.concat([inputs, az_inputs[az_inputs["ranking"].isin(ours)]], ignore_index=True)
    for explanation, instance in zip(explanations, rows["instance_id"], strict=True):
        explanation.erasure_attention = attention[attention["instance_id"] == instance].reset_index(drop=True)
        explanation.erasure_input = inputs[inputs["instance_id"] == instance].reset_index(drop=True)


def heatmap(
    explanation: Explanation,
    measures: Sequence[str] | None = None,
    path: str | Path | Sequence[str | Path] | None = None,
    title: str | None = None,
) -> "Figure":
    """A text heatmap of the explanation (one shaded row of words per measure); saved to `path` (PNG/PDF by suffix,
    one path or several) when given. Default measures: attention, gradient, LOO, IG, plus rollout and flow when
    the model has them."""
    from attnexp.report.heatmap import text_heatmap
    from attnexp.report.style import paper_style, save_figure

    if measures is None:
        measures = [m for m in (*JW_MEASURES, "rollout", "flow") if m in explanation.measures]
    if title is None:
        title = explanation.summary
    with paper_style():
        fig = text_heatmap(explanation.words, {m: explanation.measure(m) for m in measures}, title=title)
        if path is not None:
            save_figure(fig, [path] if isinstance(path, str | Path) else list(path))
    return fig
