"""Planted-rationale data: a binary classification set (sentiment-shaped) in J&W's CSV format and sentence
pairs with 3 classes (NLI-shaped) in the SNLI TSV format. The planted cue positions are kept as ground-truth
rationales, which the papers never had."""

import csv
from pathlib import Path

import numpy as np

from attnexp.io import atomic_path

POSITIVE_CUES = ("great", "excellent", "wonderful", "superb", "delightful", "brilliant")
NEGATIVE_CUES = ("awful", "terrible", "boring", "dreadful", "poor", "dull")
COLOURS = ("red", "green", "blue", "orange", "black", "white")  # opposite pairs: (red, green), ...
OPPOSITE = {"red": "green", "green": "red", "blue": "orange", "orange": "blue", "black": "white", "white": "black"}
SNLI_HF_LABEL = {"entailment": 0, "neutral": 1, "contradiction": 2}


def filler_vocabulary(size: int) -> list[str]:
    """Pronounceable pseudo-words, distinct from every cue word."""
    onsets, vowels, codas = "bdfgklmnprstvz", "aeiou", ["", "n", "r", "s", "l", "m"]
    words = [o + v + c + o2 + v2 for o in onsets for v in vowels for c in codas for o2 in "bdkmt" for v2 in "aio"]
    rng = np.random.default_rng(0)
    rng.shuffle(words)
    if size > len(words):
        raise ValueError(f"filler vocabulary of {size} words requested; at most {len(words)} are available")
    return sorted(words[:size], key=words.index)


def _zipf_probabilities(size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    return weights / weights.sum()


# --------------------------------------------------------------------------- planted classification


def planted_sentiment_rows(
    seed: int,
    sizes: dict,
    vocab_size: int,
    min_len: int,
    max_len: int,
    zipf_exponent: float,
    max_cues: int,
    distractor_rate: float,
) -> list[dict]:
    """Instances with planted cue words; the label is the polarity that has more cues."""
    rng = np.random.default_rng(seed)
    fillers = filler_vocabulary(vocab_size)
    probs = _zipf_probabilities(vocab_size, zipf_exponent)
    rows = []
    for split, n in sizes.items():
        for i in range(n):
            label = int(i % 2)
            n_cues = int(rng.integers(1, max_cues + 1))
            n_distract = int(rng.integers(0, n_cues)) if rng.random() < distractor_rate else 0
            length = int(rng.integers(min_len, max_len + 1))
            length = max(length, n_cues + n_distract)
            tokens = [fillers[j] for j in rng.choice(vocab_size, size=length, p=probs)]
            positions = rng.choice(length, size=n_cues + n_distract, replace=False)
            own, other = (POSITIVE_CUES, NEGATIVE_CUES) if label else (NEGATIVE_CUES, POSITIVE_CUES)
            for k, pos in enumerate(positions):
                bank = own if k < n_cues else other
                tokens[pos] = bank[rng.integers(len(bank))]
            rows.append(
                {"text": " ".join(tokens), "label": label, "exp_split": split, "rationale": " ".join(map(str, sorted(positions)))}
            )
    return rows


def write_planted_sentiment(path: str | Path, **kwargs) -> Path:
    """Write J&W's CSV layout (`text,label,exp_split`) plus the ground-truth `rationale` column."""
    rows = planted_sentiment_rows(**kwargs)
    with atomic_path(path) as tmp, tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["text", "label", "exp_split", "rationale"])
        writer.writeheader()
        writer.writerows(rows)
    return Path(path)


# --------------------------------------------------------------------------- planted sentence pairs


def planted_nli_rows(
    seed: int, n: int, vocab_size: int, min_len: int, max_len: int, zipf_exponent: float, split_index: int, n_colours: int = 4
) -> list[dict]:
    """Premise with one planted colour; hypothesis names a colour that decides the class.

    Same colour: entailment; the colour's opposite: contradiction; any other colour: neutral.
    """
    if n_colours not in (4, 6):
        raise ValueError(f"n_colours must be 4 or 6 (pairs of opposites), got {n_colours}")
    colours = COLOURS[:n_colours]
    rng = np.random.default_rng([seed, split_index])
    fillers = filler_vocabulary(vocab_size)
    probs = _zipf_probabilities(vocab_size, zipf_exponent)
    labels = ("entailment", "neutral", "contradiction")
    rows = []
    for i in range(n):
        label = labels[i % 3]
        colour = colours[rng.integers(len(colours))]
        if label == "entailment":
            asked = colour
        elif label == "contradiction":
            asked = OPPOSITE[colour]
        else:
            others = [c for c in colours if c not in (colour, OPPOSITE[colour])]
            asked = others[rng.integers(len(others))]
        length = int(rng.integers(min_len, max_len + 1))
        premise = [fillers[j] for j in rng.choice(vocab_size, size=length, p=probs)]
        position = int(rng.integers(length))
        premise[position] = colour
        hyp_len = int(rng.integers(1, 3))
        hypothesis = [fillers[j] for j in rng.choice(vocab_size, size=hyp_len, p=probs)]
        hypothesis[int(rng.integers(hyp_len))] = asked
        rows.append(
            {
                "premise": " ".join(premise),
                "hypothesis": " ".join(hypothesis),
                "label": SNLI_HF_LABEL[label],
                "rationale": str(position),
            }
        )
    return rows


def write_planted_nli(out_dir: str | Path, seed: int, sizes: dict, **kwargs) -> list[Path]:
    """Write `snli_1.0_{split}.tsv` (SNLI TSV layout, HF label ids) plus a `rationale` column."""
    written = []
    for index, (split, n) in enumerate(sizes.items()):
        rows = planted_nli_rows(seed, n, split_index=index, **kwargs)
        path = Path(out_dir) / f"snli_1.0_{split}.tsv"
        with atomic_path(path) as tmp, tmp.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["premise", "hypothesis", "label", "rationale"], delimiter="\t")
            writer.writeheader()
            writer.writerows(rows)
        written.append(path)
    return written
