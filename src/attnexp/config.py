"""Config validation with messages that name the key, the bad value and what is allowed.

Runs before any job (from the Snakefile), so a typo never costs a training run. The schema ships inside the
package (`attnexp/config.schema.yaml`, read with importlib.resources), so validation works after any install.
"""

import functools
import importlib.resources
import itertools
import math
import os
import re
import reprlib
from collections.abc import Iterable
from importlib.resources.abc import Traversable
from pathlib import Path

import jsonschema
import yaml

from attnexp.datasets import DATASETS
from attnexp.datasets.user import BUILTIN, declaration_problems
from attnexp.datasets.vectors import OFFICIAL, PACKAGED, PAPER_VECTORS
from attnexp.errors import ConfigError
from attnexp.filetimes import future_mtime_problem

__all__ = [
    "PACKAGED_SCHEMA",
    "ConfigError",
    "check_config_args",
    "check_config_syntax",
    "coerce_by_schema",
    "config_warnings",
    "load_config_file",
    "load_schema",
    "schema_problems",
    "schema_text",
    "validate_config",
]

# JSON Schema counts 1.0 (and 1e20) as an integer; a seed or a size must be written as one.
_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, instance: isinstance(instance, int) and not isinstance(instance, bool)
)
_INTEGER = re.compile(r"[+-]?\d+")
_NULLS = {"null", "Null", "NULL", "~"}
_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# The schema: package data of `attnexp` (pyproject.toml, tool.setuptools.package-data), wherever it is installed.
PACKAGED_SCHEMA: Traversable = importlib.resources.files("attnexp") / "config.schema.yaml"


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        node = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _from_string(text: str, types: list[str]):
    """`text` as the first non-string type of `types` that it spells; `text` itself when none fits."""
    for kind in types:
        if kind == "null" and text in _NULLS:
            return None
        if kind == "boolean" and text in _BOOLEANS:
            return _BOOLEANS[text]
        if kind == "integer" and _INTEGER.fullmatch(text.strip()):
            return int(text)
        if kind == "number":
            try:
                return int(text) if _INTEGER.fullmatch(text.strip()) else float(text)
            except ValueError:
                pass
    return text


def coerce_by_schema(value, schema: dict, root: dict | None = None):
    """`value` with strings converted to the numbers, booleans and nulls the schema expects there.

    Snakemake parses `--config seeds='[0,1,2]'` with YAML's BaseLoader, so every item inside a list or mapping
    arrives as a string ('0'); a string stays a string wherever the schema allows one.
    """
    root = schema if root is None else root
    schema = _resolve(schema, root) if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        return {
            key: coerce_by_schema(item, properties.get(key, extra if isinstance(extra, dict) else {}), root)
            for key, item in value.items()
        }
    if isinstance(value, list):
        items = schema.get("items")
        return [coerce_by_schema(item, items if isinstance(items, dict) else {}, root) for item in value]
    if isinstance(value, str):
        types = schema.get("type", [])
        types = [types] if isinstance(types, str) else list(types)
        if "string" in types and not ("null" in types and value in _NULLS):
            return value
        return _from_string(value, [t for t in types if t != "string"])
    return value


def _non_finite(value, path=()) -> list[str]:
    """Config keys holding NaN or an infinity, which no setting accepts."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _non_finite(item, (*path, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _non_finite(item, (*path, i))]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"config key '{_key(path)}': {value!r} is not a finite number; give a finite value"]
    return []


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping names the same key twice (YAML would silently keep the last)."""


def _unique_keys(loader_class: type) -> type:
    """`loader_class` refusing a mapping that names a key twice (PyYAML keeps the last one without a word)."""

    class Loader(loader_class):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                if hasattr(self, "flatten_mapping"):  # merge keys (<<); BaseLoader has none
                    self.flatten_mapping(node)
                seen: set = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    if isinstance(key, str | int | float | bool) and key in seen:
                        raise DuplicateKeyError(
                            problem=f"key {_short(key)} appears twice in one mapping (YAML would keep the last)",
                            problem_mark=key_node.start_mark,
                        )
                    seen.add(key) if isinstance(key, str | int | float | bool) else None
            return super().construct_mapping(node, deep=deep)

    return Loader


_SAFE_UNIQUE = _unique_keys(yaml.SafeLoader)
_BASE_UNIQUE = _unique_keys(yaml.BaseLoader)  # Snakemake parses `--config` values with BaseLoader


def check_config_syntax(path: str | Path) -> None:
    """Raise ConfigError naming the file, line and column when `path` exists but is not valid YAML or names a key
    twice (Snakemake's own message names neither; its loader keeps the last duplicate); a missing file is left to
    Snakemake."""
    if Path(path).is_file():
        load_config_file(path)


def check_config_args(argv: list[str]) -> None:
    """Raise ConfigError when the `--config key=value` items of the command line `argv` name a key twice, or one
    names a key twice inside its value (`analyses={permutations: 10, permutations: 20}`): Snakemake's parser keeps
    the last without a word."""
    items, inside = [], False
    for arg in argv:
        if arg == "--config" or arg == "-C":
            inside = True
        elif arg.startswith("--config="):
            items.append(arg.removeprefix("--config="))
        elif arg.startswith("-"):
            inside = False
        elif inside and "=" in arg:
            items.append(arg)
    keys = [item.split("=", 1)[0] for item in items]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ConfigError(
            f"--config names {', '.join(map(repr, repeated[:5]))} more than once (Snakemake would keep the last); "
            "give each key once"
        )
    for item in items:
        key, value = item.split("=", 1)
        try:
            yaml.load(value, Loader=_BASE_UNIQUE)
        except DuplicateKeyError as err:
            raise ConfigError(f"--config {_clip(key, 60)}=...: {err.problem}; give each key once") from None
        except yaml.YAMLError:
            pass  # Snakemake reads it as a plain string


def load_config_file(path: str | Path) -> dict:
    """A YAML config file; a syntax error or a key given twice names the file, line and column."""
    try:
        return yaml.load(Path(path).read_text(), Loader=_SAFE_UNIQUE) or {}
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        kind = "duplicate key" if isinstance(err, DuplicateKeyError) else "YAML syntax error"
        raise ConfigError(f"{where}: {kind}: {err.problem or err}; fix the file and run again") from None


_REPR = reprlib.Repr()  # keyword arguments only from Python 3.12
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 6, 6, 80, 80, 40
MAX_PROBLEMS = 20  # problems listed at most
MAX_MESSAGE = 400  # characters of one problem (a YAML alias bomb expands to hundreds of megabytes)


def _short(value) -> str:
    """`repr(value)`, cut to a readable length."""
    return _REPR.repr(value)


def _clip(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = sub["default"]
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults}, type_checker=_STRICT_TYPES)


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
        return _clip(f"unknown config key(s) {', '.join(map(_short, extra))}{where}{hint}")
    if error.validator == "enum":
        choices = _clip(", ".join(map(str, error.validator_value)))
        return f"config key '{key}': {_short(error.instance)} is not allowed; choose one of {choices}"
    if error.validator == "minItems":
        held = f"has {len(error.instance)} value(s)" if error.instance else "is empty"
        return f"config key '{key}' {held}; list at least {error.validator_value} value(s)"
    if error.validator == "required":
        return f"{_clip(error.message)} (at '{key}')"
    if error.validator == "type":
        return f"config key '{key}': {_short(error.instance)} should be of type {error.validator_value}"
    return f"config key '{key}': {_clip(error.message)}"


@functools.cache
def schema_text() -> str:
    """The YAML text of the config schema shipped in the package (`PACKAGED_SCHEMA`)."""
    return PACKAGED_SCHEMA.read_text(encoding="utf-8")


def load_schema(path: str | Path | Traversable | None = None, user_datasets: Iterable[str] = ()) -> dict:
    """The schema (the packaged one, or the file at `path`), its dataset enums filled from the built-in registry
    plus the config's `user_datasets` names."""
    text = schema_text() if path is None else (Path(path) if isinstance(path, str) else path).read_text(encoding="utf-8")
    schema = yaml.safe_load(text)
    names = sorted(BUILTIN | {str(n) for n in user_datasets})
    schema["properties"]["datasets"]["items"]["enum"] = names
    schema["properties"]["az"]["properties"]["datasets"]["items"]["enum"] = names
    schema["properties"]["hf"]["properties"]["datasets"]["items"]["enum"] = names
    return schema


def schema_problems(config: dict, schema_path: str | Path | Traversable | None = None) -> list[str]:
    """Check `config` against the schema only (the packaged one unless `schema_path` is given), filling its defaults
    in place (the registry is left alone). Strings from `--config` are first converted to the types the schema asks
    for; NaN and infinities are refused."""
    declared = config.get("user_datasets") or {}
    schema = load_schema(schema_path, declared if isinstance(declared, dict) else ())
    coerced = coerce_by_schema(config, schema)
    config.clear()
    config.update(coerced)
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    problems = sorted({*_non_finite(config), *(_describe(e) for e in itertools.islice(validator.iter_errors(config), 50))})
    return problems[:MAX_PROBLEMS] + (["... and more problems"] if len(problems) > MAX_PROBLEMS else [])


def validate_config(config: dict, schema_path: str | Path | Traversable | None = None) -> dict:
    """Validate `config` in place (filling defaults) and return it; raise ConfigError on any problem. The schema is
    the packaged one unless `schema_path` is given.

    The datasets declared under `user_datasets` have their files and columns checked here (`attnexp.datasets.user`);
    the registry is left alone: the pipeline looks them up in the config (`attnexp.pipeline.policy.datasets_of`).
    """
    problems = schema_problems(config, schema_path)
    if not problems:
        problems = [p for name, d in config["user_datasets"].items() for p in declaration_problems(name, d)]
        problems += _semantic_problems(config)
    if problems:
        raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))
    return config


def _known_tasks(config: dict) -> dict[str, str]:
    """Name -> task of every dataset `config` knows: the built-in registry's, then its `user_datasets`."""
    declared = {n: d["task"] for n, d in config.get("user_datasets", {}).items() if n not in BUILTIN}
    return {**{name: spec.task for name, spec in DATASETS.items()}, **declared}


def _semantic_problems(config: dict) -> list[str]:
    known = _known_tasks(config)
    problems = []
    for family in ("sentiment", "nli"):
        sub = config.get("synthetic", {}).get(family, {})
        if sub.get("min_len", 0) > sub.get("max_len", 10**9):
            problems.append(f"config key 'synthetic.{family}': min_len {sub['min_len']} exceeds max_len {sub['max_len']}")
    for name, declaration in config.get("user_datasets", {}).items():
        low, high = declaration.get("length_bounds", [None, None])
        if low is not None and high is not None and high - low < 2:
            problems.append(
                f"config key 'user_datasets.{name}.length_bounds': [{low}, {high}] keeps no text (the bounds are "
                "exclusive: low < tokens < high); give low + 2 <= high, or null for no bound"
            )
    unknown = sorted(set(config.get("hyperparameters", {})) - set(known))
    if unknown:
        problems.append(f"config key 'hyperparameters': unknown dataset(s) {unknown}; known: {', '.join(sorted(known))}")
    problems += _wp_problems(config.get("wp", {}), known)
    for key, value in config.get("data", {}).get("embeddings", {}).items():
        if value == OFFICIAL and PAPER_VECTORS[key].file is None:
            problems.append(
                f"config key 'data.embeddings.{key}': {OFFICIAL!r} names the paper's published file, and none was "
                f"published for {key} ({PAPER_VECTORS[key].label}); give the path of your file, or null"
            )
    model = config.get("az", {}).get("model", {})
    if model.get("width", 0) % model.get("n_heads", 1):
        problems.append(
            f"config key 'az.model.width': {model['width']} is not divisible by az.model.n_heads={model['n_heads']}; "
            "each attention head gets width / n_heads dimensions"
        )
    problems += _directory_problems(config)
    problems += _contradictions(config)
    problems += _hf_problems(config)
    problems += _az_problems(config.get("az", {}))
    problems += _pronoun_problems(config)
    return problems


PRONOUN_KINDS = ("masked_lm", "prompted")  # the hf.models kinds that read az.pronoun_examples (A&Z Fig. 4)
PRONOUN_MASK = "[MASK]"


def _pronoun_models(config: dict) -> dict:
    models = config.get("hf", {}).get("models") or {}
    return {name: m for name, m in models.items() if isinstance(m, dict) and m.get("kind") in PRONOUN_KINDS}


def _pronoun_problems(config: dict) -> list[str]:
    """A&Z Fig. 4's examples (`az.pronoun_examples`): each name once, [MASK] once in each sentence, the referents
    words of it, and some text before [MASK] where a causal LM (kind prompted) reads them."""
    examples = config.get("az", {}).get("pronoun_examples") or []
    names = [example.get("name") for example in examples]
    repeated = sorted({str(n) for n in names if names.count(n) > 1})
    problems = []
    if repeated:
        problems.append(
            f"config key 'az.pronoun_examples': name {', '.join(map(repr, repeated))} given to more than one example; "
            "give each its own name (it names the figure's file)"
        )
    causal = [name for name, m in _pronoun_models(config).items() if m.get("kind") == "prompted"]
    for number, example in enumerate(examples):
        key = f"az.pronoun_examples[{number}]"
        sentence = str(example.get("sentence", ""))
        if sentence.count(PRONOUN_MASK) != 1:
            problems.append(
                f"config key '{key}.sentence': {_short(sentence)} holds {PRONOUN_MASK} {sentence.count(PRONOUN_MASK)} "
                f"times; write {PRONOUN_MASK} exactly once, where the pronoun goes"
            )
            continue
        for word in example.get("referents") or []:
            if not re.search(rf"(?<!\w){re.escape(str(word))}(?!\w)", sentence, flags=re.IGNORECASE):
                problems.append(
                    f"config key '{key}.referents': {_short(str(word))} is not a word of the sentence {_short(sentence)}; "
                    "list words of the sentence (marked in the figure), or none"
                )
        if causal and not sentence[: sentence.index(PRONOUN_MASK)].strip():
            problems.append(
                f"config key '{key}.sentence': {_short(sentence)} starts with {PRONOUN_MASK}, but the causal LM(s) "
                f"{', '.join(causal)} (kind prompted) read only the text before it; put some text first"
            )
    return problems


def _az_problems(az: dict) -> list[str]:
    """The gradient-only input gradient is identically zero on our pre-LN Transformer (A&Z §4): refuse it there."""
    if az.get("gradient") == "grad" and az.get("datasets"):
        from attnexp.analyses.az import SHIFT_INVARIANT_GRAD

        return [f"config key 'az.gradient': {SHIFT_INVARIANT_GRAD.removeprefix('az.gradient: ')}"]
    return []


def _contradictions(config: dict) -> list[str]:
    """Settings that ask for two things at once."""
    problems = []
    if config.get("gpu_jobs") is True and config.get("device") == "cpu":
        problems.append(
            "config key 'gpu_jobs': true makes the GPU-capable jobs request a GPU, but device: cpu computes on the CPU; "
            "set device: cuda (or auto), or gpu_jobs: null"
        )
    hf = config.get("hf", {})
    if hf.get("datasets") and not hf.get("models"):
        problems.append(
            f"config key 'hf.models' is empty, but hf.datasets lists {_short(hf['datasets'])}; add a model under "
            "hf.models, or set hf.datasets: [] to switch the Hugging Face stage off"
        )
    ig_pairs = [p for p in config.get("figures", {}).get("table_pairs", []) if "ig" in p.split("_")]
    if ig_pairs and config.get("analyses", {}).get("ig_steps", 1) is None:
        problems.append(
            f"config key 'figures.table_pairs' lists {', '.join(ig_pairs)}, but analyses.ig_steps: null computes no "
            "integrated gradients; remove those pairs, or give analyses.ig_steps a number of steps (the default is 16)"
        )
    linzen = config.get("az", {}).get("linzen_path")
    if isinstance(linzen, str) and not Path(os.path.expandvars(linzen)).expanduser().exists():
        problems.append(
            f"config key 'az.linzen_path': file {_short(linzen)} does not exist (relative paths start at the working "
            "directory); give the path of agr_50_mostcommon_10K.tsv(.gz), or null to leave linzen_agreement out"
        )
    elif isinstance(linzen, str):  # an input of linzen_agreement: Snakemake refuses outputs older than it
        future = future_mtime_problem(Path(os.path.expandvars(linzen)).expanduser(), "config key 'az.linzen_path': file")
        problems += [future] if future else []
    return problems


def config_warnings(config: dict) -> list[str]:
    """What a validated `config` asks for that cannot happen but stops nothing (printed before any job runs)."""
    chosen = [m for m in config["figures"]["models"] if m != "all"]
    grid = {f"{e}-{a}" for e in config["encoders"] for a in config["attentions"]}
    outside = [m for m in chosen if m not in grid]
    if not outside or "all" in config["figures"]["models"]:
        return []
    return [
        f"config key 'figures.models': {', '.join(outside)} not in the grid (encoders x attentions: "
        f"{', '.join(sorted(grid))}), so no per-model figure is drawn for {'it' if len(outside) == 1 else 'them'}; "
        "add the encoder / attention to the grid, or list grid models (or [all])"
    ]


def _directory_problems(config: dict) -> list[str]:
    """User-named files (data.user_files, data.embeddings, az.linzen_path) that are directories."""
    data = config.get("data", {})
    named = {
        f"data.user_files.{group}.{role}": path
        for group, roles in data.get("user_files", {}).items()
        for role, path in roles.items()
    }
    named |= {
        f"data.embeddings.{name}": path
        for name, path in data.get("embeddings", {}).items()
        if path != OFFICIAL and path not in PACKAGED  # names, not paths
    }
    named["az.linzen_path"] = config.get("az", {}).get("linzen_path")
    return [
        f"config key '{key}': {path!r} is a directory; give the path of the file itself"
        for key, path in named.items()
        if isinstance(path, str) and Path(os.path.expandvars(path)).is_dir()
    ]


def _wp_problems(wp: dict, known: dict[str, str]) -> list[str]:
    """W&P runs binary datasets only; per-dataset lambda keys must name known datasets (`known`: name -> task)."""
    problems = []
    for name in wp.get("datasets", []):
        if name not in known:
            problems.append(f"config key 'wp.datasets': unknown dataset {name!r}; known: {', '.join(sorted(known))}")
        elif known[name] != "bc":
            problems.append(f"config key 'wp.datasets': {name!r} is a {known[name]} dataset; W&P tests are binary only")
    for key in ("lambdas", "diag_adv_lambda"):
        unknown = sorted(set(wp.get(key, {})) - set(known) - {"default"})
        if unknown:
            problems.append(f"config key 'wp.{key}': unknown dataset(s) {unknown}; use 'default' or a dataset name")
    return problems


def _pronoun_checkpoint_problems(config: dict) -> list[str]:
    """The checkpoints of the LMs that read the pronoun examples (hf.models of kind masked_lm or prompted), loadable
    offline (or hf.allow_download set), when no hf.datasets entry runs the rest of the stage."""
    models = _pronoun_models(config)
    if not models or not config.get("az", {}).get("pronoun_examples"):
        return []
    from attnexp.models.hf.checkpoints import checkpoint_problem  # torch-free: runs at parse time

    allow = bool(config.get("hf", {}).get("allow_download"))
    found = {name: checkpoint_problem(str(m["checkpoint"]), allow, m.get("gguf_file")) for name, m in models.items()}
    return [f"config key 'hf.models.{name}': {problem}" for name, problem in found.items() if problem]


def _hf_problems(config: dict) -> list[str]:
    """Every Hugging Face checkpoint must be loadable offline (or hf.allow_download set) before any job runs: when
    the stage runs on some dataset (with `stage_datasets: within_grid`, one also in `datasets`)."""
    datasets = set(config.get("hf", {}).get("datasets") or [])
    if config.get("stage_datasets") == "within_grid":
        datasets &= set(config.get("datasets") or [])
    if not datasets:  # the pronoun examples (A&Z Fig. 4) still read the masked and causal LMs
        return _pronoun_checkpoint_problems(config)
    from attnexp.models.hf.checkpoints import checkpoint_problems  # torch-free: runs at parse time

    return [f"config key '{p.split(': ', 1)[0]}': {p.split(': ', 1)[1]}" for p in checkpoint_problems(config)]
