"""`padded_lstm`: the BiLSTM over the padded batch computes the packed BiLSTM's function (outputs, the summary
`last` and gradients equal up to float rounding), PAD positions give 0 and never influence real ones."""

import torch

from attnexp.models.encoders import LSTMEncoder, set_padded_lstm
from attnexp.models.settings import Compute


def test_padded_bilstm_equals_packed_values_and_gradients():
    torch.manual_seed(0)
    encoder = LSTMEncoder(12, 10)
    lengths = torch.tensor([9, 3, 7, 1, 9, 5])
    embedded = torch.randn(6, 9, 12)
    runs = []
    for padded in (False, True):
        set_padded_lstm(encoder, padded)
        inputs = embedded.clone().requires_grad_(True)
        hidden, last = encoder(inputs, lengths)
        (hidden.square().sum() + last.sum()).backward()
        runs.append((hidden.detach(), last.detach(), inputs.grad, [p.grad.clone() for p in encoder.parameters()]))
        encoder.zero_grad()
    (h0, l0, g0, w0), (h1, l1, g1, w1) = runs
    torch.testing.assert_close(h1, h0, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(l1, l0, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(g1, g0, atol=1e-6, rtol=1e-5)
    for a, b in zip(w1, w0, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    assert (h1[1, 3:] == 0).all() and (g1[1, 3:] == 0).all()  # PAD: zero output, no gradient


def test_compute_switches_every_bilstm_of_a_model_on_its_device_and_returns_the_model():
    """`Compute.apply`, the one way the settings reach a model (training, the analyses jobs, `api.load_run`)."""
    model = torch.nn.Sequential(LSTMEncoder(4, 3), torch.nn.Sequential(torch.nn.Linear(2, 2), LSTMEncoder(4, 3)))
    encoders = [m for m in model.modules() if isinstance(m, LSTMEncoder)]
    assert Compute("cpu", padded_lstm=True).apply(model) is model and all(e.padded for e in encoders)
    assert Compute("auto", padded_lstm=False).apply(model) is model and not any(e.padded for e in encoders)
    assert next(model.parameters()).device.type == ("cuda" if torch.cuda.is_available() else "cpu")  # "auto", resolved
