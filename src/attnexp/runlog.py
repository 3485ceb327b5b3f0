"""Send a job's stdout and stderr to its log file, line by line, so progress is visible while it runs; the last
line records the job's wall time, CPU time and peak memory (what a cost model or a cluster request needs)."""

import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from attnexp.errors import ConfigError, CorruptFileError, DataError

EXPLAINED = (ConfigError, CorruptFileError, DataError)  # errors whose message names the problem and the fix
PROGRESS_SECONDS = 30.0  # a job that runs for minutes writes a progress line to its log at least this often


class Heartbeat:
    """Time-based progress inside a long loop (training batches, analysis batches): `due()` is true once `every`
    seconds (PROGRESS_SECONDS) have passed since the start or the last true, so a log moves at least that often
    without a line per step."""

    def __init__(self, every: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = PROGRESS_SECONDS if every is None else every
        self.clock = clock
        self.last = clock()

    def due(self) -> bool:
        now = self.clock()
        if now - self.last < self.every:
            return False
        self.last = now
        return True


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (all its threads)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def usage_line(wall_start: float, cpu_start: float, job: tuple[str, Mapping] | None = None) -> str:
    """`job usage: wall W s, cpu C s, max rss M MiB` since the two starts (time.perf_counter(), cpu_seconds()),
    then `, rule R, wildcards {...}` when the job is named (`job`: its rule and wildcards), so that a cost model
    attributes the log to its kind of job without reading its path."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall, cpu = time.perf_counter() - wall_start, cpu_seconds() - cpu_start
    line = f"job usage: wall {wall:.1f} s, cpu {cpu:.1f} s, max rss {rss:.0f} MiB"
    if job is not None:
        rule, wildcards = job
        line += f", rule {rule}, wildcards {json.dumps(dict(wildcards), sort_keys=True)}"
    return line


@contextmanager
def log_to(path: str | os.PathLike, job: tuple[str, Mapping] | None = None) -> Iterator[None]:
    """Redirect stdout and stderr (Python-level) to `path` for the duration of the block; the last line is the job's
    usage (with `job`, its rule and wildcards)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    wall_start, cpu_start = time.perf_counter(), cpu_seconds()
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
            print(usage_line(wall_start, cpu_start, job), flush=True)
            sys.stdout.flush()
