"""bAbI tasks 1-3 from a small world simulation, written in the official archive's format (answers correct by
construction; the supporting-fact ids are the ground truth)."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnexp.datasets.babi_format import BABI_TASK_FILES
from attnexp.io import atomic_path

ACTORS = ("Mary", "John", "Sandra", "Daniel")
LOCATIONS = ("bathroom", "hallway", "kitchen", "office", "garden", "bedroom")
OBJECTS = ("football", "apple", "milk")
MOVE_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
TAKE_VERBS = ("picked up", "got", "took", "grabbed")
DROP_VERBS = ("dropped", "discarded", "left", "put down")


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
