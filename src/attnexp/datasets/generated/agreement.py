"""Subject-verb number agreement data (A&Z §2.1): an offline generator with a known subject, and a reader
for the Linzen et al. (2016) corpus when a user supplies it.

Every sentence is cut just before its main verb; the label is the verb's number, which by construction is
the number of the subject noun. Attractor nouns of either number appear in a fronted prepositional phrase,
in prepositional phrases after the subject and in object relative clauses ("that the dogs chase"), so the
subject is neither the only nor always the first noun. The subject's position is kept as the ground truth
(`rationale`) that attention, rollout and flow can be scored against.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from attnexp.io import write_csv

CLASSES = ("singular", "plural")
NOUNS = (
    "dog",
    "cat",
    "author",
    "teacher",
    "farmer",
    "pilot",
    "doctor",
    "student",
    "king",
    "singer",
    "lawyer",
    "child",
    "manager",
    "painter",
    "boy",
    "girl",
    "senator",
    "officer",
    "driver",
    "nurse",
)
PLACES = ("garden", "kitchen", "city", "market", "house", "school", "river", "park")
PREPOSITIONS = ("near", "behind", "with", "beside", "of", "from", "under")
DETERMINERS = ("the", "my", "our", "their", "his", "her", "your")
ADJECTIVES = ("old", "young", "tall", "quiet", "famous", "happy", "new", "small")
RC_VERBS = (("likes", "like"), ("sees", "see"), ("knows", "know"), ("chases", "chase"), ("admires", "admire"))
OPENERS = ("here", "yesterday ,", "today ,", "still ,")


def plural(noun: str) -> str:
    if noun == "child":
        return "children"
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2] not in "aeiou" else noun + "s"


def _noun_phrase(rng: np.random.Generator, nouns: tuple[str, ...], number: int) -> tuple[list[str], int]:
    """Determiner (+ adjective) + noun in `number` (0 singular, 1 plural); returns words and the noun's index."""
    words = [str(rng.choice(DETERMINERS))]
    if rng.random() < 0.3:
        words.append(str(rng.choice(ADJECTIVES)))
    noun = str(rng.choice(nouns))
    words.append(plural(noun) if number else noun)
    return words, len(words) - 1


def agreement_sentence(rng: np.random.Generator, max_modifiers: int = 3, attractor_rate: float = 0.5) -> dict:
    """One generated prefix: text (up to the verb), label (0 singular, 1 plural), subject position, attractors."""
    number = int(rng.integers(2))
    words: list[str] = []
    attractors = 0

    def attractor_number() -> int:
        return 1 - number if rng.random() < attractor_rate else number

    if rng.random() < 0.3:
        words += str(rng.choice(OPENERS)).split()
    if rng.random() < 0.3:
        n = attractor_number()
        attractors += n != number
        phrase, _ = _noun_phrase(rng, PLACES, n)
        words += ["in", *phrase, ","]
    phrase, head = _noun_phrase(rng, NOUNS, number)
    subject = len(words) + head
    words += phrase
    for _ in range(int(rng.integers(0, max_modifiers + 1))):
        n = attractor_number()
        attractors += n != number
        phrase, _ = _noun_phrase(rng, NOUNS + PLACES, n)
        if rng.random() < 0.6:
            words += [str(rng.choice(PREPOSITIONS)), *phrase]
        else:
            words += ["that", *phrase, RC_VERBS[int(rng.integers(len(RC_VERBS)))][n]]
    return {"text": " ".join(words), "label": number, "subject": subject, "n_attractors": attractors}


def agreement_frame(seed: int, sizes: dict, max_modifiers: int = 3, attractor_rate: float = 0.5) -> pd.DataFrame:
    """A J&W-style CSV frame (text, label, exp_split, rationale) plus subject and attractor counts."""
    rng = np.random.default_rng(seed)
    rows = [
        {**agreement_sentence(rng, max_modifiers, attractor_rate), "exp_split": split}
        for split in ("train", "dev", "test")
        for _ in range(sizes[split])
    ]
    frame = pd.DataFrame(rows)
    frame["rationale"] = frame["subject"].astype(str)
    return frame[["text", "label", "exp_split", "rationale", "subject", "n_attractors"]]


def write_agreement(path: str | Path, seed: int, options: dict) -> Path:
    frame = agreement_frame(seed, options["sizes"], options["max_modifiers"], options["attractor_rate"])
    write_csv(path, frame)
    print(
        f"agreement: {len(frame)} sentences, {frame['label'].mean():.2f} plural, "
        f"{(frame['n_attractors'] > 0).mean():.2f} with attractors, "
        f"mean length {frame['text'].str.split().str.len().mean():.1f}"
    )
    return Path(path)


def read_linzen_tsv(
    path: str | Path, seed: int = 0, fractions: tuple[float, float] = (0.1, 0.01), limit: int | None = None
) -> pd.DataFrame:
    """Linzen et al.'s `agr_50_mostcommon_10K.tsv(.gz)` as the same CSV frame (A&Z §2.1).

    The input is the sentence up to, not including, the verb (`verb_index`, 1-based); the label is the
    verb's POS (VBZ singular, VBP plural); the subject is `subj_index` (1-based). Split: random
    `fractions` train/dev and the rest test (default 10% / 1% / 89%, seed 0).
    """
    frame = pd.read_csv(path, sep="\t", quoting=3, keep_default_na=False, nrows=limit)
    missing = {"sentence", "verb_index", "subj_index", "verb_pos"} - set(frame.columns)
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {sorted(missing)}; expected the rnn_agreement TSV (agr_50_mostcommon_10K.tsv)"
        )
    frame = frame[frame["verb_pos"].isin(["VBZ", "VBP"])].reset_index(drop=True)
    verb = frame["verb_index"].astype(int) - 1
    words = frame["sentence"].str.split()
    text = [" ".join(w[:v]) for w, v in zip(words, verb, strict=True)]
    split = np.full(len(frame), "test", dtype=object)
    order = np.random.default_rng(seed).permutation(len(frame))
    n_train, n_dev = int(fractions[0] * len(frame)), int(fractions[1] * len(frame))
    split[order[:n_train]], split[order[n_train : n_train + n_dev]] = "train", "dev"
    out = pd.DataFrame(
        {
            "text": text,
            "label": (frame["verb_pos"] == "VBP").astype(int),
            "exp_split": split,
            "subject": frame["subj_index"].astype(int) - 1,
            "n_attractors": frame["n_diff_intervening"] if "n_diff_intervening" in frame else -1,
        }
    )
    out = out[out["text"].str.len() > 0].reset_index(drop=True)
    out["rationale"] = out["subject"].astype(str)
    return out[["text", "label", "exp_split", "rationale", "subject", "n_attractors"]]


def write_linzen(path_in: str | Path, path_out: str | Path, seed: int = 0, limit: int | None = None) -> Path:
    if not Path(path_in).exists():
        raise FileNotFoundError(
            f"Linzen agreement corpus not found at {path_in}; set az.linzen_path to "
            "agr_50_mostcommon_10K.tsv(.gz) from the rnn_agreement release"
        )
    frame = read_linzen_tsv(path_in, seed, limit=limit)
    write_csv(path_out, frame)
    print(f"linzen: {len(frame)} sentences, splits {frame['exp_split'].value_counts().to_dict()}")
    return Path(path_out)
