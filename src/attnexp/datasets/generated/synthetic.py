"""Embedded offline datasets, generated deterministically from a seed in the real datasets' raw formats.

- bAbI tasks 1-3 from a small world simulation (answers correct by construction);
- a planted-rationale binary classification set (sentiment-shaped), in J&W's CSV format;
- planted-rationale sentence pairs with 3 classes (NLI-shaped), in the SNLI TSV format.
The planted cue positions are kept as ground-truth rationales, which the papers never had.
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnexp.io import atomic_path

ACTORS = ("Mary", "John", "Sandra", "Daniel")
LOCATIONS = ("bathroom", "hallway", "kitchen", "office", "garden", "bedroom")
OBJECTS = ("football", "apple", "milk")
MOVE_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
TAKE_VERBS = ("picked up", "got", "took", "grabbed")
DROP_VERBS = ("dropped", "discarded", "left", "put down")
BABI_TASK_FILES = {
    1: "qa1_single-supporting-fact",
    2: "qa2_two-supporting-facts",
    3: "qa3_three-supporting-facts",
}

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


# --------------------------------------------------------------------------- bAbI


@dataclass
class _World:
    actor_location: dict
    object_holder: dict  # object -> actor or None
    object_location: dict  # object -> location or None (unknown until placed)
    object_trail: dict  # object -> list of (location, line number that put it there)
    last_move_line: dict  # actor -> line number
    take_line: dict  # object -> line number of the take by its current holder


def _babi_story(rng: np.random.Generator, task: int, n_statements: int, n_questions: int) -> list[str]:
    world = _World({}, {o: None for o in OBJECTS}, {o: None for o in OBJECTS}, {o: [] for o in OBJECTS}, {}, {})
    lines: list[str] = []
    n_asked = 0
    slots = np.arange(max(2, n_statements // 3), n_statements + 1)
    question_slots = set(rng.choice(slots, size=min(n_questions, len(slots)), replace=False).tolist())
    statement_count = 0
    while statement_count < n_statements or n_asked < n_questions:
        number = len(lines) + 1
        actor = ACTORS[rng.integers(len(ACTORS))]
        held = [o for o, h in world.object_holder.items() if h == actor]
        free_here = [
            o
            for o, h in world.object_holder.items()
            if h is None and actor in world.actor_location and world.object_location[o] == world.actor_location[actor]
        ]
        unplaced = [o for o in OBJECTS if world.object_location[o] is None and world.object_holder[o] is None]
        action = rng.random()
        take_below, drop_below = (0.4, 0.48) if task == 3 else (0.25, 0.4)  # task 3 needs objects carried around
        if task >= 2 and actor in world.actor_location and action < take_below and (free_here or unplaced):
            obj = (free_here + unplaced)[rng.integers(len(free_here + unplaced))]
            verb = TAKE_VERBS[rng.integers(len(TAKE_VERBS))]
            lines.append(f"{number} {actor} {verb} the {obj}{' there' if rng.random() < 0.5 else ''}.")
            world.object_holder[obj] = actor
            world.take_line[obj] = number
            if world.object_location[obj] != world.actor_location[actor]:
                world.object_trail[obj].append((world.actor_location[actor], number))
            world.object_location[obj] = world.actor_location[actor]
        elif task >= 2 and held and action < drop_below:
            obj = held[rng.integers(len(held))]
            verb = DROP_VERBS[rng.integers(len(DROP_VERBS))]
            lines.append(f"{number} {actor} {verb} the {obj}{' there' if rng.random() < 0.5 else ''}.")
            world.object_holder[obj] = None
        else:
            choices = [loc for loc in LOCATIONS if loc != world.actor_location.get(actor)]
            location = choices[rng.integers(len(choices))]
            verb = MOVE_VERBS[rng.integers(len(MOVE_VERBS))]
            lines.append(f"{number} {actor} {verb} the {location}.")
            world.actor_location[actor] = location
            world.last_move_line[actor] = number
            for obj in held:
                world.object_location[obj] = location
                world.object_trail[obj].append((location, number))
        statement_count += 1
        if statement_count in question_slots or (statement_count >= n_statements and n_asked < n_questions):
            question = _babi_question(rng, task, world, len(lines) + 1)
            if question is not None:
                lines.append(question)
                n_asked += 1
                question_slots.discard(statement_count)
    return lines


def _babi_question(rng: np.random.Generator, task: int, world: _World, number: int) -> str | None:
    if task == 1:
        placed = sorted(world.actor_location)
        if not placed:
            return None
        actor = placed[rng.integers(len(placed))]
        return f"{number} Where is {actor}? \t{world.actor_location[actor]}\t{world.last_move_line[actor]}"
    if task == 2:
        held = sorted(o for o, h in world.object_holder.items() if h is not None)
        if not held:
            return None
        obj = held[rng.integers(len(held))]
        holder = world.object_holder[obj]
        facts = sorted({world.take_line[obj], world.last_move_line[holder]})
        return f"{number} Where is the {obj}? \t{world.object_location[obj]}\t{' '.join(map(str, facts))}"
    eligible = sorted(o for o, trail in world.object_trail.items() if len(trail) >= 2)
    if not eligible:
        return None
    obj = eligible[rng.integers(len(eligible))]
    (before, before_line), (now, now_line) = world.object_trail[obj][-2:]
    facts = sorted({before_line, now_line, world.take_line.get(obj, now_line)}, reverse=True)
    return f"{number} Where was the {obj} before the {now}? \t{before}\t{' '.join(map(str, facts))}"


def write_babi(
    out_dir: str | Path, seed: int, n_train: int, n_test: int, statements: dict, questions_per_story: int = 2
) -> list[Path]:
    """Write `en/qa{1,2,3}_*_{train,test}.txt` under `out_dir`, as in the official archive."""
    written = []
    for task, stem in BABI_TASK_FILES.items():
        for split, n_questions in (("train", n_train), ("test", n_test)):
            rng = np.random.default_rng([seed, task, 0 if split == "train" else 1])
            lines: list[str] = []
            asked = 0
            while asked < n_questions:
                k = min(questions_per_story, n_questions - asked)
                story = _babi_story(rng, task, int(statements[task]), k)
                lines.extend(story)
                asked += k
            path = Path(out_dir) / "en" / f"{stem}_{split}.txt"
            with atomic_path(path) as tmp:
                tmp.write_text("\n".join(lines) + "\n")
            written.append(path)
    return written


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


def generate(family: str, outputs: list[str], seed: int, options: dict) -> list[Path]:
    """Write one synthetic family's raw files; `outputs` are the expected paths (checked)."""
    if family == "sentiment":
        written = [write_planted_sentiment(outputs[0], seed=seed, **options)]
    elif family == "nli":
        written = write_planted_nli(Path(outputs[0]).parent, seed=seed, **options)
    elif family == "babi":
        root = Path(outputs[0]).parents[1]
        statements = {int(k.removeprefix("qa")): v for k, v in options["statements"].items()}
        written = write_babi(root, seed, options["n_train"], options["n_test"], statements, options.get("questions_per_story", 2))
    else:
        raise ValueError(f"unknown synthetic family {family!r}; choose sentiment, nli or babi")
    missing = sorted(set(map(str, outputs)) - set(map(str, written)))
    if missing:
        raise RuntimeError(f"generator for {family!r} did not write {missing}")
    for path in written:
        print(f"wrote {path}")
    return written
