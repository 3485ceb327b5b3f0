"""Both models satisfy the one AttentionModel interface genuinely, through the shared head; no import cycle."""

import ast
from pathlib import Path

import pytest
import torch

import attnexp.models as models_package
from attnexp.data.batching import collate
from attnexp.data.preprocess import split_frame
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.head import ClassifierHead
from attnexp.models.interface import AttentionModel
from attnexp.models.train import build_model
from attnexp.models.transformer import TransformerClassifier, build_transformer

MODELS = Path(models_package.__file__).parent


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
