"""`models.deletions`: the BiLSTM and CNN states of every single-token deletion, built from the undeleted run,
equal the encoder re-run on each deletion; leave-one-out through them gives the re-run's scores (BC and QA)."""

import pytest
import torch

from attnexp.analyses.jw.importance import deletion_batch, leave_one_out
from attnexp.data.batching import Batch
from attnexp.models.classifier import AttentionClassifier
from attnexp.models.deletions import deletion_states
from attnexp.models.encoders import AverageEncoder, CNNEncoder, LSTMEncoder, set_padded_lstm
from tests.factories import tiny_model_config


def _batch(lengths: list[int], vocab: int = 30, question: bool = False) -> Batch:
    generator = torch.Generator().manual_seed(1)
    width = max(lengths)
    tokens = torch.randint(4, vocab, (len(lengths), width), generator=generator)
    tokens = tokens.masked_fill(torch.arange(width)[None, :] >= torch.tensor(lengths)[:, None], 0)
    extra = {}
    if question:
        extra = {
            "question": torch.randint(4, vocab, (len(lengths), 3), generator=generator),
            "question_lengths": torch.full((len(lengths),), 3),
        }
    labels, ids = torch.zeros(len(lengths), dtype=torch.long), [str(i) for i in range(len(lengths))]
    return Batch(tokens, torch.tensor(lengths), labels, ids, **extra)


@pytest.mark.parametrize("name", ["lstm", "cnn", "average"])
def test_deletion_states_equal_the_encoder_rerun_on_every_deletion(name):
    torch.manual_seed(0)
    encoders = {"lstm": lambda: set_padded_lstm(LSTMEncoder(12, 10), True), "cnn": lambda: CNNEncoder(12, 5)}
    encoder = encoders.get(name, lambda: AverageEncoder(12, 10))()
    lengths = torch.tensor([9, 3, 7, 4, 9, 5])
    embedded = torch.randn(6, 9, 12)
    mask = (torch.arange(9)[None, :] >= 1) & (torch.arange(9)[None, :] < (lengths - 1)[:, None])  # real tokens
    instance, position = mask.nonzero(as_tuple=True)
    keep = torch.arange(8)[None, :] + (torch.arange(8)[None, :] >= position[:, None]).long()
    deleted = embedded[instance[:, None], keep]
    with torch.no_grad():
        expected, _ = encoder(deleted, lengths[instance] - 1)
        states = deletion_states(encoder, embedded, lengths)(instance, position)
    assert states.shape == expected.shape
    torch.testing.assert_close(states, expected, atol=1e-6, rtol=1e-5)
    assert (states[lengths[instance] == 3][:, 2:] == 0).all()  # zero past each deletion's end


def rerun_leave_one_out(model: AttentionClassifier, batch: Batch) -> torch.Tensor:
    """Leave-one-out the slow way: every deletion re-encoded and decoded."""
    instance, position = batch.real_mask.nonzero(as_tuple=True)
    part, rows, _ = deletion_batch(batch, instance, position)
    with torch.no_grad():
        original, rerun = model.distribution(model(batch).logits), model.distribution(model(part).logits)
    expected = torch.zeros(batch.tokens.shape)
    expected[instance, position] = 0.5 * (rerun - original[rows]).abs().sum(-1)
    return expected


@pytest.mark.parametrize("attention", ["tanh", "dot"])
@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
@pytest.mark.parametrize("task", ["bc", "qa"])
def test_leave_one_out_through_the_deletion_states_equals_the_rerun(task, encoder, attention):
    torch.manual_seed(0)
    config = tiny_model_config(task, encoder, attention)
    model = set_padded_lstm(AttentionClassifier(config), True).eval()
    batch = _batch([12, 4, 7, 12, 3, 9], question=task == "qa")
    fast = leave_one_out(model, batch, memory_budget_mb=0.001)  # a few rows per chunk: chunks cross instances
    torch.testing.assert_close(fast, rerun_leave_one_out(model, batch), atol=1e-6, rtol=1e-5)
    assert fast[batch.real_mask].abs().max() > 1e-4  # deletions do change the output


@pytest.mark.parametrize("encoder", ["cnn", "average"])
@pytest.mark.parametrize("task", ["bc", "qa"])
@pytest.mark.parametrize("margin", ["default", "always direct"])
def test_spliced_leave_one_out_on_long_rows_and_dominant_tokens(task, encoder, margin, monkeypatch):
    """The CNN's and Average's deletions splice prefix and suffix sums of the instance's own states around the
    recomputed ones. Long rows give every deletion states on both sides; scores 10^3 times larger make one token
    take all the attention, so deleting it leaves kept scores far below the instance's highest (the direct sums)."""
    import attnexp.models.classifier as classifier

    if margin == "always direct":
        monkeypatch.setattr(classifier, "UNDERFLOW_MARGIN", float("-inf"))
    torch.manual_seed(0)
    config = tiny_model_config(task, encoder, "tanh")
    model = AttentionClassifier(config).eval()
    batch = _batch([40, 5, 23, 3, 31], question=task == "qa")
    torch.testing.assert_close(leave_one_out(model, batch), rerun_leave_one_out(model, batch), atol=1e-6, rtol=1e-5)
    with torch.no_grad():
        model.attention.v.weight.mul_(1e3)
        encoded = model.encode(batch)
        scores = model.attention(encoded.hidden, encoded.question)
    gaps = scores.masked_fill(~batch.real_mask, float("-inf")).sort(1, descending=True).values
    assert ((gaps[:, 0] - gaps[:, 1]) > 2 * classifier.UNDERFLOW_MARGIN).any()  # some instance has one dominant token
    fast = leave_one_out(model, batch, memory_budget_mb=0.001)
    expected = rerun_leave_one_out(model, batch)
    torch.testing.assert_close(fast, expected, atol=1e-6, rtol=1e-5)
    assert expected[batch.real_mask].max() > 0.01  # deleting the dominant token moves the output
