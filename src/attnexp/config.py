"""Config validation with messages that name the key, the bad value and what is allowed.

Runs before any job (from the Snakefile), so a typo never costs a training run.
"""

from collections.abc import Iterable
from pathlib import Path

import jsonschema
import yaml

from attnexp.datasets import DATASETS
from attnexp.datasets.user import BUILTIN, declaration_problems, register_user_datasets
from attnexp.errors import ConfigError

__all__ = ["ConfigError", "load_schema", "schema_problems", "validate_config"]


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = sub["default"]
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _key(path: Iterable) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = f" under '{key}'" if error.absolute_path else ""
        hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
        return f"unknown config key(s) {', '.join(map(repr, extra))}{where}{hint}"
    if error.validator == "enum":
        return (
            f"config key '{key}': {error.instance!r} is not allowed; choose one of {', '.join(map(str, error.validator_value))}"
        )
    if error.validator == "minItems":
        return f"config key '{key}' is empty; list at least {error.validator_value} value(s)"
    if error.validator == "required":
        return f"{error.message} (at '{key}')"
    if error.validator == "type":
        return f"config key '{key}': {error.instance!r} should be of type {error.validator_value}"
    return f"config key '{key}': {error.message}"


def load_schema(path: str | Path, user_datasets: Iterable[str] = ()) -> dict:
    """The schema, its dataset enums filled from the built-in registry plus the config's `user_datasets` names."""
    schema = yaml.safe_load(Path(path).read_text())
    names = sorted(BUILTIN | {str(n) for n in user_datasets})
    schema["properties"]["datasets"]["items"]["enum"] = names
    schema["properties"]["az"]["properties"]["datasets"]["items"]["enum"] = names
    schema["properties"]["hf"]["properties"]["datasets"]["items"]["enum"] = names
    return schema


def schema_problems(config: dict, schema_path: str | Path) -> list[str]:
    """Check `config` against the schema only, filling its defaults in place (the registry is left alone)."""
    declared = config.get("user_datasets") or {}
    schema = load_schema(schema_path, declared if isinstance(declared, dict) else ())
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    return sorted({_describe(e) for e in validator.iter_errors(config)})


def validate_config(config: dict, schema_path: str | Path) -> dict:
    """Validate `config` in place (filling defaults) and return it; raise ConfigError on any problem.

    The datasets declared under `user_datasets` join the registry here (`attnexp.datasets.user`), after their
    files and columns are checked.
    """
    problems = schema_problems(config, schema_path)
    if not problems:
        problems = [p for name, d in config["user_datasets"].items() for p in declaration_problems(name, d)]
        register_user_datasets({n: d for n, d in config["user_datasets"].items() if n not in BUILTIN})
        problems += _semantic_problems(config)
    if problems:
        raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))
    return config


def _semantic_problems(config: dict) -> list[str]:
    problems = []
    for family in ("sentiment", "nli"):
        sub = config.get("synthetic", {}).get(family, {})
        if sub.get("min_len", 0) > sub.get("max_len", 10**9):
            problems.append(f"config key 'synthetic.{family}': min_len {sub['min_len']} exceeds max_len {sub['max_len']}")
    unknown = sorted(set(config.get("hyperparameters", {})) - set(DATASETS))
    if unknown:
        problems.append(f"config key 'hyperparameters': unknown dataset(s) {unknown}; known: {', '.join(sorted(DATASETS))}")
    problems += _wp_problems(config.get("wp", {}))
    problems += _hf_problems(config)
    return problems


def _wp_problems(wp: dict) -> list[str]:
    """W&P runs binary datasets only; per-dataset lambda keys must name known datasets."""
    problems = []
    for name in wp.get("datasets", []):
        if name not in DATASETS:
            problems.append(f"config key 'wp.datasets': unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}")
        elif DATASETS[name].task != "bc":
            problems.append(f"config key 'wp.datasets': {name!r} is a {DATASETS[name].task} dataset; W&P tests are binary only")
    for key in ("lambdas", "diag_adv_lambda"):
        unknown = sorted(set(wp.get(key, {})) - set(DATASETS) - {"default"})
        if unknown:
            problems.append(f"config key 'wp.{key}': unknown dataset(s) {unknown}; use 'default' or a dataset name")
    return problems


def _hf_problems(config: dict) -> list[str]:
    """Every Hugging Face checkpoint must be loadable offline (or hf.allow_download set) before any job runs."""
    if not config.get("hf", {}).get("datasets"):
        return []
    from attnexp.models.hf_runs import checkpoint_problems

    return [f"config key '{p.split(': ', 1)[0]}': {p.split(': ', 1)[1]}" for p in checkpoint_problems(config)]
