"""Generated data: deterministic, in the real formats, and correct by construction."""

import re

import pandas as pd
import pytest
import yaml

from attnexp.datasets.babi_format import BABI_TASK_FILES, parse_babi
from attnexp.datasets.generated.babi import write_babi
from attnexp.datasets.generated.planted import NEGATIVE_CUES, OPPOSITE, POSITIVE_CUES
from attnexp.datasets.generated.synthetic import FAMILY_FILES, generate
from tests.conftest import REPO
from tests.factories import synthetic_data

STATEMENTS = {1: 6, 2: 8, 3: 10}
MOVE = re.compile(r"^(\w+) (?:moved|went|journeyed|travelled|went back) to the (\w+)$")
TAKE = re.compile(r"^(\w+) (?:picked up|got|took|grabbed) the (\w+)(?: there)?$")
DROP = re.compile(r"^(\w+) (?:dropped|discarded|left|put down) the (\w+)(?: there)?$")


def resimulate(statements):
    """Replay the statements; return each object's location trail and where everyone is."""
    actor_at, holder, object_at, trail = {}, {}, {}, {}
    for sentence in statements:
        if m := MOVE.match(sentence):
            actor, place = m.groups()
            actor_at[actor] = place
            for obj, who in holder.items():
                if who == actor:
                    object_at[obj] = place
                    trail.setdefault(obj, []).append(place)
        elif m := TAKE.match(sentence):
            actor, obj = m.groups()
            holder[obj] = actor
            if object_at.get(obj) != actor_at[actor]:
                trail.setdefault(obj, []).append(actor_at[actor])
            object_at[obj] = actor_at[actor]
        elif m := DROP.match(sentence):
            holder[m.group(2)] = None
        else:
            raise AssertionError(f"unparseable statement {sentence!r}")
    return actor_at, object_at, trail


@pytest.fixture(scope="module")
def babi_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("babi")
    write_babi(out, seed=3, n_train=120, n_test=40, statements=STATEMENTS)
    return out


def test_babi_generation_is_deterministic(babi_dir, tmp_path):
    write_babi(tmp_path, seed=3, n_train=120, n_test=40, statements=STATEMENTS)
    for stem in BABI_TASK_FILES.values():
        for split in ("train", "test"):
            name = f"en/{stem}_{split}.txt"
            assert (tmp_path / name).read_text() == (babi_dir / name).read_text()
    write_babi(tmp_path / "other", seed=4, n_train=120, n_test=40, statements=STATEMENTS)
    assert (tmp_path / "other/en/qa1_single-supporting-fact_train.txt").read_text() != (
        babi_dir / "en/qa1_single-supporting-fact_train.txt"
    ).read_text()


@pytest.mark.parametrize("task", [1, 2, 3])
def test_babi_answers_are_correct_by_resimulation(babi_dir, task):
    questions = parse_babi(babi_dir / "en" / f"{BABI_TASK_FILES[task]}_train.txt")
    assert len(questions) == 120
    for q in questions:
        actor_at, object_at, trail = resimulate(q.statements)
        subject = q.question.split()[-1] if task == 1 else q.question.split()[3]
        if task == 1:
            assert q.question.startswith("Where is") and actor_at[subject] == q.answer
        elif task == 2:
            assert object_at[subject] == q.answer
        else:
            now = q.question.split()[-1]
            assert trail[subject][-1] == now and trail[subject][-2] == q.answer
        assert q.supporting and all(s in q.line_numbers for s in q.supporting)


def test_planted_sentiment_labels_follow_the_cues(tmp_path):
    """The schema's options but for small splits and more distractors (cues of the other polarity)."""
    [path] = synthetic_data("sentiment", tmp_path, seed=1, sizes={"train": 200, "dev": 20, "test": 20}, distractor_rate=0.5)
    frame = pd.read_csv(path, keep_default_na=False)
    assert set(frame.columns) >= {"text", "label", "exp_split"}
    assert frame["exp_split"].value_counts().to_dict() == {"train": 200, "dev": 20, "test": 20}
    for row in frame.itertuples():
        tokens = row.text.split()
        positive = sum(t in POSITIVE_CUES for t in tokens)
        negative = sum(t in NEGATIVE_CUES for t in tokens)
        assert row.label == int(positive > negative) and positive != negative
        cues = [i for i, t in enumerate(tokens) if t in POSITIVE_CUES + NEGATIVE_CUES]
        assert [int(x) for x in row.rationale.split()] == cues


def test_planted_nli_labels_follow_the_colours(tmp_path):
    synthetic_data(
        "nli", tmp_path, seed=1, sizes={"train": 90, "dev": 9, "test": 9}, vocab_size=100, min_len=3, max_len=10, n_colours=6
    )
    frame = pd.read_csv(tmp_path / "snli_1.0_train.tsv", sep="\t", keep_default_na=False)
    assert list(frame.columns[:3]) == ["premise", "hypothesis", "label"]
    for row in frame.itertuples():
        premise = row.premise.split()
        colour = premise[int(row.rationale)]
        asked = next(w for w in row.hypothesis.split() if w in OPPOSITE)
        expected = 0 if asked == colour else 2 if asked == OPPOSITE[colour] else 1  # HF ids
        assert row.label == expected


@pytest.mark.parametrize("family", sorted(FAMILY_FILES))
def test_generate_writes_exactly_the_family_files(family, tmp_path):
    """One call per family (the `synthesize` rule): the files of FAMILY_FILES, and only those, in its folder."""
    options = yaml.safe_load((REPO / "config/config.yaml").read_text())["synthetic"][family]
    shrink = {"sentiment": {"sizes": {"train": 20, "dev": 10, "test": 10}}, "nli": {"sizes": {"train": 9, "dev": 9, "test": 9}}}
    options.update(shrink.get(family, {"n_train": 10, "n_test": 10}))
    generate(family, tmp_path / family, seed=3, options=options)
    written = sorted(p.relative_to(tmp_path / family).as_posix() for p in (tmp_path / family).rglob("*") if p.is_file())
    assert written == sorted(FAMILY_FILES[family])
    with pytest.raises(ValueError, match="unknown synthetic family"):
        generate("poetry", tmp_path / "poetry", seed=3, options={})
