"""Send a job's stdout and stderr to its log file, line by line, so progress is visible while it runs."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from attnexp.errors import ConfigError, CorruptFileError, DataError

EXPLAINED = (ConfigError, CorruptFileError, DataError)  # errors whose message names the problem and the fix


@contextmanager
def log_to(path: str | os.PathLike) -> Iterator[None]:
    """Redirect stdout and stderr (Python-level) to `path` for the duration of the block."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1) as handle, redirect_stdout(handle), redirect_stderr(handle):
        try:
            yield
        except EXPLAINED as err:  # the message says what failed and what to do: no traceback to read through
            print(f"ERROR: {err}", file=handle)
            raise SystemExit(f"ERROR: {err}\n(log: {path})") from None
        except BaseException:
            import traceback

            traceback.print_exc(file=handle)
            raise
        finally:
            sys.stdout.flush()
