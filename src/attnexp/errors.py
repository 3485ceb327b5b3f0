"""The error a bad configuration raises, in a leaf module so every layer can raise it (re-exported by attnexp.config)."""


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem and how to fix it."""
