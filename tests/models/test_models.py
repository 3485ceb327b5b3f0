"""Model invariants (J&W §4): attention lives on real tokens only; padding never changes predictions."""

import itertools

import pytest
import torch

from attnexp.data.batching import collate
from attnexp.data.preprocess import split_frame
from attnexp.models.train import build_model

GRID = list(itertools.product(["lstm", "cnn", "average"], ["tanh", "dot", "uniform"]))


def _rows(data, n=24):
    instances, _ = data
    return split_frame(instances, "test").iloc[:n]


def _fresh_model(data, encoder: str, attention: str):
    """A small untrained model (seed 0) for the dataset, in eval mode."""
    torch.manual_seed(0)
    return build_model(data[1], encoder, attention, embedding_dim=16, hidden_size=8).eval()


@pytest.mark.parametrize("encoder,attention", GRID)
@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_attention_sums_to_one_on_real_tokens_and_is_zero_elsewhere(request, dataset, encoder, attention):
    data = request.getfixturevalue(dataset)
    model = _fresh_model(data, encoder, attention)
    batch = collate(_rows(data))
    with torch.no_grad():
        out = model(batch)
    real = batch.real_mask
    assert torch.allclose(out.attention.sum(-1), torch.ones(batch.size), atol=1e-6)
    assert torch.all(out.attention[~real] == 0)
    assert torch.all(out.attention[:, 0] == 0)
    assert torch.all(out.attention[torch.arange(batch.size), batch.lengths - 1] == 0)
    if attention == "uniform":
        expected = 1.0 / (batch.lengths - 2).float()
        assert torch.allclose(out.attention.max(-1).values, expected) and torch.allclose(
            out.attention.masked_fill(~real, 1.0).min(-1).values, expected
        )


@pytest.mark.parametrize("encoder,attention", GRID)
@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_predictions_do_not_change_with_extra_padding(request, dataset, encoder, attention):
    data = request.getfixturevalue(dataset)
    model = _fresh_model(data, encoder, attention)
    rows = _rows(data)
    with torch.no_grad():
        plain = model(collate(rows))
        padded = model(collate(rows, extra_padding=7))
    assert torch.allclose(plain.logits, padded.logits, atol=1e-5)
    assert torch.allclose(plain.attention, padded.attention[:, : plain.attention.shape[1]], atol=1e-6)
    alone = torch.stack([model(collate(rows.iloc[[i]])).logits[0] for i in range(3)])
    assert torch.allclose(plain.logits[:3], alone, atol=1e-5)


def test_uniform_attention_has_no_parameters(planted_sentiment):
    model = build_model(planted_sentiment[1], "lstm", "uniform", embedding_dim=16, hidden_size=8)
    assert list(model.attention.parameters()) == []
    assert model.parameter_groups()["attention"] == []


def test_decode_accepts_several_candidate_attentions(planted_nli):
    torch.manual_seed(0)
    model = build_model(planted_nli[1], "average", "tanh", embedding_dim=16, hidden_size=8).eval()
    batch = collate(_rows(planted_nli, 5))
    with torch.no_grad():
        out = model(batch)
        stacked = model.decode(out.encoded, torch.stack([out.attention, out.attention], dim=1), batch)
    assert stacked.shape == (5, 2, 3)
    assert torch.allclose(stacked[:, 0], out.logits, atol=1e-6) and torch.allclose(stacked[:, 1], out.logits, atol=1e-6)


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
@pytest.mark.parametrize("dataset", ["planted_sentiment", "planted_nli"])
def test_decoder_over_fixed_states_equals_decode(request, dataset, encoder):
    """`decoder` moves the head's first linear layer inside the attention average: the same logits as `decode`
    for one attention [B, L] and for K random candidate attentions [B, K, L], BC and NLI alike."""
    data = request.getfixturevalue(dataset)
    torch.manual_seed(0)
    model = build_model(data[1], encoder, "tanh", embedding_dim=16, hidden_size=8).eval().double()
    batch = collate(_rows(data, 7))
    candidates = torch.softmax(torch.randn(batch.size, 4, batch.tokens.shape[1], dtype=torch.float64), -1)
    with torch.no_grad():
        out = model(batch)
        decode = model.decoder(out.encoded, batch)
        for attention in (out.attention, candidates * batch.real_mask[:, None, :]):
            expected = model.decode(out.encoded, attention, batch)
            assert decode(attention).shape == expected.shape
            torch.testing.assert_close(decode(attention), expected, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(decode(out.attention), out.logits, rtol=1e-12, atol=1e-12)


def test_cnn_question_summary_max_pools_over_real_tokens_only():
    """J&W §4 / the authors' EncoderCNN: states under the attention mask ([SOS], [EOS], PAD) are zeroed before the
    max-pool, so the question summary never sees the markers' own states (their embeddings still feed the
    neighbouring real tokens' convolutions)."""
    from attnexp.models.encoders import CNNEncoder

    torch.manual_seed(0)
    encoder = CNNEncoder(embedding_dim=6, filters_per_kernel=3)
    lengths = torch.tensor([5, 3, 2])  # 3, 1 and 0 real tokens
    embedded = torch.randn(3, 5, 6)
    embedded[:, 0] = 100 * encoder.convs[0].weight[0, :, 0].detach()  # [SOS]: a huge kernel-1 response
    embedded[0, 4] = embedded[1, 2] = 100 * encoder.convs[0].weight[1, :, 0].detach()  # [EOS] likewise
    hidden, last = encoder(embedded, lengths)
    for i, n in enumerate(lengths.tolist()):
        x = embedded[i : i + 1, :n].transpose(1, 2)
        states = torch.relu(torch.cat([conv(x) for conv in encoder.convs], dim=1))[0].T  # [n, H] on the sequence alone
        expected = states[1 : n - 1].max(0).values if n > 2 else torch.zeros(encoder.output_size)
        torch.testing.assert_close(last[i], expected)
        torch.testing.assert_close(hidden[i, 1 : n - 1], states[1 : n - 1])
        assert torch.all(hidden[i, :1] == 0) and torch.all(hidden[i, n - 1 :] == 0)
