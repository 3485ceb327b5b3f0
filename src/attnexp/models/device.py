"""Where models run: the config's `device` setting ("auto", "cpu", "cuda", "cuda:N") resolved to a torch device.

"auto" is CUDA when torch sees a GPU, else the CPU. Asking for CUDA where there is none is a ConfigError
(checked when the workflow starts, before any job), never a silent fall-back: only "auto" falls back.
"""

import re

import torch

from attnexp.errors import ConfigError

DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]+)?)$"


def resolve_device(setting: str = "auto") -> str:
    """The torch device string for a `device` setting: "cpu" or "cuda[:N]"."""
    if not re.match(DEVICE_PATTERN, str(setting)):
        raise ConfigError(f"device: {setting!r} is not one of auto, cpu, cuda, cuda:N; fix the `device` key of the config")
    if setting == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if setting == "cpu":
        return "cpu"
    if not torch.cuda.is_available():
        raise ConfigError(
            f"device: {setting} but torch sees no CUDA GPU here (torch {torch.__version__}, CUDA build "
            f"{torch.version.cuda}); use `device: auto` (falls back to the CPU) or `device: cpu`"
        )
    index = int(setting.split(":")[1]) if ":" in setting else 0
    if index >= torch.cuda.device_count():
        raise ConfigError(f"device: {setting} but only {torch.cuda.device_count()} CUDA device(s) are visible; pick cuda:0..")
    return setting


def uses_gpu(setting: str = "auto") -> bool:
    """Whether jobs with this setting run on a GPU (what the workflow's `gpu` resource declares)."""
    return resolve_device(setting).startswith("cuda")


def set_threads(threads: int) -> None:
    """Give torch the job's thread count (Snakemake's `threads`); the ONE place jobs set it."""
    torch.set_num_threads(max(1, int(threads)))
