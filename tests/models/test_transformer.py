"""The A&Z Transformer against definitions written independently of it: every block, the last included, is a
standard GPT-2 block (`nn.MultiheadAttention` on the same weights), and the input is [CLS] + the words only."""

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from attnexp.data.batching import collate
from attnexp.models.transformer import build_transformer

WIDTH, HEADS, LAYERS, VOCAB = 16, 2, 3, 30


def tiny(task: str = "bc", attention: str = "self", seed: int = 0):
    torch.manual_seed(seed)
    classes = ["a", "b"] if task == "bc" else ["a", "b", "c"]
    meta = {"vocab": [str(i) for i in range(VOCAB)], "classes": classes, "task": task}
    model = build_transformer(meta, n_layers=LAYERS, n_heads=HEADS, width=WIDTH, dropout=0.0, max_length=16, attention=attention)
    with torch.no_grad():  # LayerNorm and bias parameters away from their initial 1 / 0, so that each one counts
        for name, parameter in model.named_parameters():
            if "ln" in name or name.endswith("bias"):
                parameter.add_(0.3 * torch.randn_like(parameter))
    return model.eval()


def rows(seed: int = 0, n: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 8, size=n)
    return pd.DataFrame(
        {
            "instance_id": [f"x{i}" for i in range(n)],
            "tokens": [[2, *rng.integers(4, VOCAB, k), 3] for k in lengths],
            "label": rng.integers(0, 2, size=n),
            "length": lengths,
        }
    )


def reference_forward(model, batch) -> tuple[torch.Tensor, torch.Tensor]:
    """GPT-2 blocks from their definition: x + MHA(LN(x)), then x + MLP(LN(x)) (Linear, GELU, Linear); keys are
    [CLS] and the words (the closing marker and padding are masked); logit = w . LN_f(x[CLS]) + b.
    Returns the logits [B] and the per-head attention [B, layers, heads, L, L]."""
    tokens = batch.tokens
    positions = torch.arange(tokens.shape[1])
    x = model.embedding.weight[tokens] + model.position.weight[positions][None]
    ignore = positions[None, :] >= (batch.lengths - 1)[:, None]
    maps = []
    for block in model.blocks:
        attention = nn.MultiheadAttention(WIDTH, HEADS, batch_first=True)
        with torch.no_grad():
            attention.in_proj_weight.copy_(block.attn.qkv.weight)
            attention.in_proj_bias.copy_(block.attn.qkv.bias)
            attention.out_proj.weight.copy_(block.attn.proj.weight)
            attention.out_proj.bias.copy_(block.attn.proj.bias)
        h = F.layer_norm(x, (WIDTH,), block.ln1.weight, block.ln1.bias)
        out, weights = attention(h, h, h, key_padding_mask=ignore, need_weights=True, average_attn_weights=False)
        x = x + out
        h = F.layer_norm(x, (WIDTH,), block.ln2.weight, block.ln2.bias)
        up, down = block.mlp[0], block.mlp[2]
        x = x + F.linear(F.gelu(F.linear(h, up.weight, up.bias)), down.weight, down.bias)
        maps.append(weights)
    z = F.layer_norm(x[:, 0], (WIDTH,), model.ln_f.weight, model.ln_f.bias)
    return F.linear(z, model.output.weight, model.output.bias).squeeze(-1), torch.stack(maps, dim=1)


def test_every_block_including_the_last_is_a_standard_gpt2_block():
    model, batch = tiny(), collate(rows())
    with torch.no_grad():
        output = model(batch)
        logits, maps = reference_forward(model, batch)
    assert torch.allclose(output.logits, logits, atol=1e-5)
    inputs = (torch.arange(batch.tokens.shape[1])[None, :] < (batch.lengths - 1)[:, None])[:, None, None, :, None]
    assert torch.allclose(output.encoded.maps * inputs, maps * inputs, atol=1e-6)  # rows of [CLS] and the words
    cls_row = output.encoded.maps[:, -1, :, 0, :]
    assert (cls_row[:, :, 0] > 0).all() and not torch.allclose(cls_row[:, 0], cls_row[:, 1])  # attends to [CLS]; heads differ


def test_the_tied_variant_keeps_one_head_averaged_cls_row_in_the_last_layer():
    model, batch = tiny(attention="tiedcls"), collate(rows())
    with torch.no_grad():
        output = model(batch)
        _, maps = reference_forward(model, batch)
    cls_row = output.encoded.maps[:, -1, :, 0, :]
    assert torch.allclose(cls_row[:, 0], cls_row[:, 1]) and cls_row[:, :, 0].abs().max() == 0
    assert torch.allclose(cls_row[:, 0], output.attention)
    lower = torch.arange(batch.tokens.shape[1])[None, :] < (batch.lengths - 1)[:, None]
    mask = lower[:, None, None, :, None]
    assert torch.allclose(output.encoded.maps[:, :-1] * mask, maps[:, :-1] * mask, atol=1e-6)


@pytest.mark.parametrize("task", ["bc", "qa"])
@pytest.mark.parametrize("attention", ["self", "tiedcls"])
def test_logits_alone_equal_the_forward_logits(attention, task):
    """`logits` (training and prediction) skips the maps and, in the last block, every query but [CLS]: the same
    logits as the full forward pass, which the reference above pins to GPT-2 blocks."""
    model, frame = tiny(task, attention), rows(2, n=6)
    if task == "qa":
        frame = frame.assign(question=[[5, 6], [7], [8, 9, 10], [5], [6, 7], [9]], label=[0, 1, 2, 1, 0, 2])
    batch = collate(frame)
    with torch.no_grad():
        full = model(batch).logits
        alone = model.logits(batch)
        embedded = model.logits(batch, model.embed(batch.tokens))
    assert alone.shape == full.shape
    torch.testing.assert_close(alone, full, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(embedded, alone)
    assert model.encode(batch, maps=False).maps is None


@pytest.mark.parametrize("attention", ["self", "tiedcls"])
def test_the_closing_marker_is_not_an_input(attention):
    """A&Z's input is [CLS] + the words: no position attends to the marker, and the output ignores it."""
    model, frame = tiny(attention=attention), rows(1)
    batch = collate(frame)
    changed = collate(frame.assign(tokens=[[*t[:-1], 17] for t in frame["tokens"]]))
    with torch.no_grad():
        output, other = model(batch), model(changed)
    assert torch.allclose(output.logits, other.logits, atol=1e-6)
    marker = (batch.lengths - 1)[:, None, None, None].expand(-1, LAYERS, HEADS, batch.tokens.shape[1])
    assert output.encoded.maps.gather(-1, marker[..., None]).abs().max() == 0
