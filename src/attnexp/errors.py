"""Errors every layer can raise, in a leaf module (ConfigError is re-exported by attnexp.config)."""


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem and how to fix it."""


class CorruptFileError(RuntimeError):
    """A result file is damaged (unreadable, or its content no longer matches the checksum recorded when it was
    written); the message names the file and says to delete it and rerun the workflow."""


class DataError(RuntimeError):
    """Raw data is missing, corrupt or truncated, or cannot be downloaded; the message says which file (or
    URL) and what to do (re-exported by attnexp.datasets.acquire)."""
