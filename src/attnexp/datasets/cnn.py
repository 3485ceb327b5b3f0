"""CNN reading comprehension (Hermann et al. 2015) in Chen et al.'s (2016) preprocessed format (§3.3).

Each example is a block of three lines, query, answer entity and passage, followed by a blank line.
"""

import re
from pathlib import Path

import pandas as pd

ENTITY = re.compile(r"@entity\d+")


def read_cnn_file(path: Path, split: str) -> pd.DataFrame:
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        block = lines[i : i + 3]
        if len(block) < 3 or not ENTITY.fullmatch(block[1].strip()) or not block[2].strip():
            raise ValueError(
                f"{path}:{i + 1}: expected query, answer entity (@entityN) and passage lines; "
                "the file is truncated or not in Chen et al.'s format"
            )
        query, answer, passage = (b.strip() for b in block)
        rows.append((split, passage, query, answer, sorted(set(ENTITY.findall(passage))), f"{split}-{len(rows)}"))
        i += 3
    return pd.DataFrame(rows, columns=["split", "text", "question", "label", "candidates", "key"])


def read_cnn(files: dict[str, Path]) -> pd.DataFrame:
    """Passage and query as released; candidates = the entities occurring in the passage."""
    return pd.concat([read_cnn_file(files[s], s) for s in ("train", "dev", "test")], ignore_index=True)


def entity_classes(frame: pd.DataFrame) -> list[str]:
    """Output classes: every answer entity, in numeric order."""
    return sorted(set(frame["label"]), key=lambda e: int(e.removeprefix("@entity")))
