"""The bAbI reader on the real files: question counts from jain-wallace.md §3.5 / the MANIFEST."""

import pytest

from attnexp.datasets.babi_format import BABI_TASK_FILES, parse_babi


@pytest.mark.parametrize("task", [1, 2, 3])
@pytest.mark.parametrize("split", ["train", "test"])
def test_real_babi_1k_counts(shared_data, task, split):
    questions = parse_babi(shared_data / "babi" / "en" / f"{BABI_TASK_FILES[task]}_{split}.txt")
    assert len(questions) == 1000
    assert len({q.story_index for q in questions}) == 200
    assert all(q.answer and "?" not in q.question for q in questions)


@pytest.mark.parametrize("task", [1, 2])
def test_real_babi_10k_train_counts(shared_data, task):
    questions = parse_babi(shared_data / "babi" / "en-10k" / f"{BABI_TASK_FILES[task]}_train.txt")
    assert len(questions) == 10000


def test_real_babi_vocabulary_sizes(shared_data):
    """J&W §3.5: bAbI vocabularies of 24 / 38 / 39 including the 4 specials."""
    from attnexp.data.vocab import build_vocabulary

    for task, size in ((1, 24), (2, 38), (3, 39)):
        stem = BABI_TASK_FILES[task]
        folder = "en" if task == 3 else "en-10k"
        questions = parse_babi(shared_data / "babi" / folder / f"{stem}_train.txt")
        docs = [q.passage.split() for q in questions] + [q.question.split() for q in questions]
        assert len(build_vocabulary(docs, min_df=1)) == size
