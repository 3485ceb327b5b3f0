"""Every model family satisfies the one AttentionModel interface genuinely, through the shared head, optional
capabilities included (declared once, defaults on the head, no `getattr` probes); no import cycle."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import attnexp
import attnexp.models as models_package
from attnexp.analyses.jw.permutation import sample_permutations
from attnexp.analyses.wp.donors import DonorTable, GuidedClassifier
from attnexp.data.batching import collate
from attnexp.data.preprocess import split_frame
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.head import ClassifierHead
from attnexp.models.interface import AttentionModel, model_logits
from attnexp.models.train import build_model
from attnexp.models.transformer import TransformerClassifier, build_transformer

MODELS = Path(models_package.__file__).parent
SOURCE = Path(attnexp.__file__).parent
CAPABILITIES = ("logits", "blank_id", "input_lengths", "decode_permuted", "decode_erased", "tokenizer", "checkpoint_kind")
METHODS = ("logits", "input_lengths", "decode_permuted", "decode_erased")
FAMILIES = ("classifier", "guided", "transformer", "transformer-tiedcls", "hf")


def _imports(module: str) -> set[str]:
    tree = ast.parse((MODELS / f"{module}.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def _models(data):
    _, meta = data
    classifier = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0)
    transformer = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64)
    return classifier, transformer


@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_both_models_are_attention_models_sharing_one_head(request, dataset):
    data = request.getfixturevalue(dataset)
    classifier, transformer = _models(data)
    for model in (classifier, transformer):
        assert isinstance(model, AttentionModel) and isinstance(model, ClassifierHead)
        assert model.distribution.__func__ is ClassifierHead.distribution
        assert model.predict.__func__ is ClassifierHead.predict
        assert not hasattr(model, "encoder") or isinstance(model.encoder, torch.nn.Module)
    assert (classifier.feature_size, classifier.embedding_size) == (16, 12)  # BiLSTM: 2 x hidden
    assert (transformer.feature_size, transformer.embedding_size) == (16, 16)


@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_feature_and_embedding_sizes_are_the_encoded_and_embedded_widths(request, dataset):
    data = request.getfixturevalue(dataset)
    batch = collate(split_frame(data[0], "test").iloc[:4])
    for model in _models(data):
        with torch.no_grad():
            output = model.eval()(batch)
        assert output.encoded.hidden.shape[-1] == model.feature_size
        assert model.embed(batch.tokens).shape[-1] == model.embedding_size
        probabilities = model.distribution(output.logits)
        assert torch.allclose(probabilities.sum(-1), torch.ones(batch.size))
        assert torch.equal(model.predict(output.logits), probabilities.argmax(-1))


def test_classifier_and_transformer_do_not_import_each_other():
    assert "attnexp.models.transformer" not in _imports("classifier")
    assert "attnexp.models.classifier" not in _imports("transformer")
    for module in ("classifier", "transformer", "head", "interface", "checkpoint", "train"):
        assert not any(name.startswith(("attnexp.analyses", "attnexp.report")) for name in _imports(module)), module
    assert issubclass(AttentionClassifier, ClassifierHead) and issubclass(TransformerClassifier, ClassifierHead)


def _guided(meta, batch) -> GuidedClassifier:
    """A guided MLP whose guide is uniform over each instance's real tokens."""
    sizes = (batch.lengths - 2).tolist()
    guides = DonorTable({i: np.full(n, 1 / n, dtype=np.float32) for i, n in zip(batch.instance_ids, sizes, strict=True)})
    torch.manual_seed(0)
    return GuidedClassifier(build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8).config, guides)


@pytest.fixture(scope="module")
def hf_model(tmp_path_factory):
    """A tiny random DistilBERT classifier through the wrapper, and a batch of its own token ids."""
    from attnexp.models.hf.loading import load_pretrained
    from tests.hf_fixtures import tiny_checkpoint

    folder = tiny_checkpoint(tmp_path_factory.mktemp("hf"), "distilbert", seed=3)
    model = load_pretrained(str(folder), task="bc", n_classes=2)
    ids = [model.tokenizer(t)["input_ids"] for t in ("a good film", "the plot was very boring", "not funny")]
    return model, collate(pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}))


@pytest.fixture(params=FAMILIES)
def family(request, planted_sentiment):
    """(family name, a tiny random model of it in eval mode, a batch it reads)."""
    if request.param == "hf":
        model, batch = request.getfixturevalue("hf_model")
        return request.param, model, batch
    data, meta = planted_sentiment
    batch = collate(split_frame(data, "test").iloc[:4])
    if request.param == "classifier":
        model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0)
    elif request.param == "guided":
        model = _guided(meta, batch)
    else:
        attention = "tiedcls" if request.param.endswith("tiedcls") else "self"
        torch.manual_seed(0)
        model = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention=attention)
    return request.param, model.eval(), batch


def test_every_model_family_is_an_attention_model_with_every_capability(family):
    name, model, _ = family
    assert isinstance(model, AttentionModel) and isinstance(model, ClassifierHead)
    for capability in CAPABILITIES:
        assert hasattr(model, capability), (name, capability)
        assert hasattr(AttentionModel, capability) and hasattr(ClassifierHead, capability), capability
    assert all(callable(getattr(model, method)) for method in METHODS)
    kinds = {"classifier": "classifier", "guided": "guided", "hf": "hf"}
    assert model.checkpoint_kind == kinds.get(name, "transformer")


def test_the_head_defaults_are_the_old_fallbacks(family):
    """Without an override: all of `batch.lengths`, the forward's logits (with `embedded`: decode of the model's own
    attention), the attention vector permuted and decoded, no blank id nor tokenizer of its own: bit for bit."""
    name, model, batch = family
    kind = type(model)
    if kind.input_lengths is ClassifierHead.input_lengths:
        assert torch.equal(model.input_lengths(batch), batch.lengths)
    with torch.no_grad():
        output = model(batch)
        if kind.logits is ClassifierHead.logits:
            assert torch.equal(model.logits(batch), output.logits)
            embedded = model.embed(batch.tokens)
            encoded = model.encode(batch, embedded)
            assert torch.equal(model.logits(batch, embedded), model.decode(encoded, model.attend(encoded, batch), batch))
        assert torch.equal(model_logits(model, batch), model.logits(batch))
        if kind.decode_permuted is ClassifierHead.decode_permuted and name != "transformer":  # "self" cannot decode
            index = sample_permutations(batch, 5, torch.Generator().manual_seed(0))
            old = model.decoder(output.encoded, batch)(output.attention[:, None, :].expand_as(index).gather(-1, index))
            assert torch.equal(model.decode_permuted(output.encoded, index, batch), old)
    assert ClassifierHead.blank_id is None and ClassifierHead.tokenizer is None and ClassifierHead.checkpoint_kind is None
    assert (output.encoded.maps is None) == (name in ("classifier", "guided"))


def test_which_families_override_which_capability(family):
    name, model, batch = family
    kind = type(model)
    own = {capability for capability in CAPABILITIES if getattr(kind, capability) is not getattr(ClassifierHead, capability)}
    own |= {capability for capability in CAPABILITIES if capability in vars(model)}  # set per instance
    expected = {
        "classifier": {"checkpoint_kind"},
        "guided": {"checkpoint_kind"},
        "transformer": {"checkpoint_kind", "input_lengths", "logits", "decode_erased"},
        "transformer-tiedcls": {"checkpoint_kind", "input_lengths", "logits", "decode_erased"},
        # masked keys and permutations of every head; logits in one pass without maps
        "hf": {"checkpoint_kind", "decode_permuted", "decode_erased", "blank_id", "tokenizer", "logits"},
    }
    assert own == expected[name]
    if name.startswith("transformer"):
        assert torch.equal(model.input_lengths(batch), batch.lengths - 1)  # without the closing marker
        with torch.no_grad():
            torch.testing.assert_close(model.logits(batch), model(batch).logits)  # without the attention maps
    if name == "hf":
        assert model.blank_id == model.tokenizer.mask_token_id
    else:
        assert model.blank_id is None and model.tokenizer is None


def test_no_getattr_probe_of_a_capability_is_left_in_the_source():
    probed = ("maps", *CAPABILITIES)
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in probed
            ):
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)}")
    assert not found, "probe a declared capability directly (models.interface.AttentionModel):\n" + "\n".join(found)
