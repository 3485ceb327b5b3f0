"""Reader for the bAbI task format (Weston et al. 2015), shared by the real and the generated data.

Each line is `<n> <sentence>`; `n == 1` starts a new story. A question line is
`<n> <question>?\t<answer>\t<supporting fact ids>`.
"""

from dataclasses import dataclass
from pathlib import Path

BABI_TASK_FILES = {  # task -> file stem in the official archive (tasks_1-20_v1-2/<language>/<stem>_<split>.txt)
    1: "qa1_single-supporting-fact",
    2: "qa2_two-supporting-facts",
    3: "qa3_three-supporting-facts",
}


@dataclass(frozen=True)
class BabiQuestion:
    story_index: int
    statements: tuple[str, ...]  # the story so far, final periods removed
    question: str  # without the question mark
    answer: str
    supporting: tuple[int, ...]  # 1-based line numbers within the story
    line_numbers: tuple[int, ...]  # the line number of each statement

    @property
    def passage(self) -> str:
        """The statements so far, joined as in J&W: `" . "` between, no final period."""
        return " . ".join(self.statements)


def parse_babi(path: str | Path) -> list[BabiQuestion]:
    """Parse one bAbI file into its questions, each with the story that precedes it."""
    questions: list[BabiQuestion] = []
    statements: list[str] = []
    numbers: list[int] = []
    story = -1
    for lineno, raw in enumerate(Path(path).read_text().splitlines(), start=1):
        if not raw.strip():
            continue
        number_text, _, rest = raw.partition(" ")
        try:
            number = int(number_text)
        except ValueError as err:
            raise ValueError(f"{path}:{lineno}: expected a line number, got {raw!r}") from err
        if number == 1:
            story += 1
            statements, numbers = [], []
        if "\t" in rest:
            fields = rest.split("\t")
            if len(fields) < 2:
                raise ValueError(f"{path}:{lineno}: question line without an answer: {raw!r}")
            question = fields[0].strip().rstrip("?").strip()
            support = tuple(int(x) for x in fields[2].split()) if len(fields) > 2 else ()
            questions.append(BabiQuestion(story, tuple(statements), question, fields[1].strip(), support, tuple(numbers)))
        else:
            statements.append(rest.strip().rstrip("."))
            numbers.append(number)
    return questions
