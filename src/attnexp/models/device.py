"""Where models run: the config's `device` setting ("auto", "cpu", "cuda", "cuda:N") resolved to a torch device.

"auto" is CUDA when torch sees a GPU, else the CPU. Asking for CUDA where there is none is a ConfigError
(checked when the workflow starts, before any job), never a silent fall-back: only "auto" falls back.
torch is imported only where needed, so the workflow can resolve the setting cheaply on a machine without
an NVIDIA driver.
"""

import os
import re
import shutil

from attnexp.errors import ConfigError

DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]+)?)$"


def cuda_available() -> bool:
    """Whether torch can use a CUDA GPU here (without importing torch where no NVIDIA driver is installed)."""
    if not os.path.exists("/proc/driver/nvidia/version") and shutil.which("nvidia-smi") is None:
        return False
    import torch

    return torch.cuda.is_available()


def resolve_device(setting: str = "auto") -> str:
    """The torch device string for a `device` setting: "cpu" or "cuda[:N]"."""
    if not re.match(DEVICE_PATTERN, str(setting)):
        raise ConfigError(f"device: {setting!r} is not one of auto, cpu, cuda, cuda:N; fix the `device` key of the config")
    if setting == "auto":
        return "cuda" if cuda_available() else "cpu"
    if setting == "cpu":
        return "cpu"
    if not cuda_available():
        raise ConfigError(
            f"device: {setting}, but no CUDA GPU is usable on this machine; use `device: auto` (CUDA where there "
            "is a GPU, else the CPU) or `device: cpu`, or run where a GPU is (`gpu_jobs: true` sends the "
            "GPU jobs to a cluster's GPU nodes without checking the submit host)"
        )
    import torch

    index = int(setting.split(":")[1]) if ":" in setting else 0
    if index >= torch.cuda.device_count():
        raise ConfigError(f"device: {setting}, but only {torch.cuda.device_count()} CUDA device(s) are visible here")
    return setting


def gpu_jobs(setting: str = "auto", switch: bool | None = None) -> bool:
    """Whether the GPU-capable jobs declare `resources: gpu=1`: `switch` (config `gpu_jobs`) when set, else
    whether `setting` resolves to CUDA on this machine (which also checks an explicit `cuda` setting here)."""
    if switch is not None:
        if not re.match(DEVICE_PATTERN, str(setting)):
            resolve_device(setting)  # raises the message for a malformed setting
        return bool(switch)
    return resolve_device(setting).startswith("cuda")


def model_device(model):
    """The torch device of a model's parameters (the CPU for a model without any)."""
    import torch

    return next(iter(model.parameters()), torch.empty(0)).device


def effective_threads(threads: int, cores: int | None, max_threads: int | None = None) -> int:
    """The threads Snakemake grants a job asking for `threads`: capped at `cores` (--cores; None on a cluster, where
    each job gets its own) and `max_threads` (--max-threads)."""
    return min([threads, *(c for c in (cores, max_threads) if isinstance(c, int) and c > 0)])


ONEDNN_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"


def set_threads(threads: int) -> None:
    """Give torch the job's thread count (Snakemake's `threads`); the ONE place jobs set it.

    Also turns oneDNN's primitive cache off unless the environment sizes it. On the CPU a convolution keeps one cached
    primitive per input shape, and length-sorted batches bring a new width almost every batch, so the cache only
    grows: IMDB's CNN training job peaked at 4.2 GiB with it and 1.3 GiB without it, at the same speed and with
    the same test metrics (and bitwise the same outputs over 100 batches). oneDNN reads the setting when it makes its
    first primitive, so setting it here, before a job's first batch, takes effect."""
    import torch

    os.environ.setdefault(ONEDNN_CACHE, "0")
    torch.set_num_threads(max(1, int(threads)))
