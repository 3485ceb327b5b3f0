"""J&W's three encoders (§4): BiLSTM, CNN (kernels 1,3,5,7) and Average (a token-wise MLP).

Each maps embeddings [B, L, E] and lengths [B] to hidden states [B, L, H] and a summary `last` [B, H]
(used only by question encoders). PAD positions never influence the outputs at other positions.
"""

import contextlib

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnexp.models.names import ENCODERS


def padding_mask(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """[B, width]: whether each position is inside its sequence ([SOS] and [EOS] included, PAD not)."""
    return torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]


def reversed_positions(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """[B, width] index reversing each sequence within its length (PAD positions stay): an involution."""
    positions = torch.arange(width, device=lengths.device)[None, :]
    return torch.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)


def real_positions(positions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Whether each position (broadcast against `lengths[:, None]`) is a real token: not [SOS], [EOS] or PAD."""
    return (positions >= 1) & (positions < lengths[:, None] - 1)


@contextlib.contextmanager
def _cudnn_off():
    enabled = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = False
    try:
        yield
    finally:
        torch.backends.cudnn.enabled = enabled


def rnn_backend(inputs: torch.Tensor, training: bool) -> contextlib.AbstractContextManager:
    """cuDNN's RNN has no backward pass in eval mode, which the gradient analyses need (a model in eval mode, its
    input embeddings requiring grad): on a GPU they run torch's own CUDA LSTM kernels, the same function."""
    if inputs.is_cuda and not training and torch.is_grad_enabled():
        return _cudnn_off()
    return contextlib.nullcontext()


class LSTMEncoder(nn.Module):
    """BiLSTM over packed sequences, or (`padded`, a run-time switch: `set_padded_lstm`) over the padded batch with
    each sequence reversed within its length for the backward direction: the same function, equal up to float
    rounding (~1e-7), and on the CPU several times faster to differentiate on long sequences, where torch's
    packed-LSTM backward is slow (8x at 216 tokens)."""

    def __init__(self, embedding_dim: int, hidden_size: int = 128):
        super().__init__()
        self.rnn = nn.LSTM(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        self.output_size = 2 * hidden_size
        self.padded = False

    def _padded_forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        size, width, _ = embedded.shape
        lengths = lengths.to(embedded.device)
        valid = padding_mask(lengths, width)
        reverse = reversed_positions(lengths, width)
        zeros = embedded.new_zeros(1, size, self.rnn.hidden_size)
        weights = self.rnn._flat_weights

        def direction(inputs: torch.Tensor, params: list) -> torch.Tensor:
            return torch._VF.lstm(inputs, (zeros, zeros), params, True, 1, 0.0, self.training, False, True)[0]

        forward = direction(embedded, weights[:4])
        flip = lambda t: t.gather(1, reverse[..., None].expand_as(t))  # noqa: E731
        backward = flip(direction(flip(embedded), weights[4:]))
        hidden = torch.cat([forward, backward], dim=-1) * valid[..., None]
        last = forward.gather(1, (lengths - 1)[:, None, None].expand(size, 1, forward.shape[-1]))[:, 0]
        return hidden, torch.cat([last, backward[:, 0]], dim=-1)

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with rnn_backend(embedded, self.training):
            return self._padded_forward(embedded, lengths) if self.padded else self._packed_forward(embedded, lengths)

    def _packed_forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        output, (h_n, _) = self.rnn(packed)
        hidden, _ = pad_packed_sequence(output, batch_first=True, total_length=embedded.shape[1])
        return hidden, torch.cat([h_n[0], h_n[1]], dim=-1)


class CNNEncoder(nn.Module):
    def __init__(self, embedding_dim: int, filters_per_kernel: int = 64, kernels: tuple[int, ...] = (1, 3, 5, 7)):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(embedding_dim, filters_per_kernel, k, padding=(k - 1) // 2) for k in kernels)
        self.output_size = filters_per_kernel * len(kernels)

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Hidden states zeroed under the attention mask ([SOS], [EOS], PAD), and `last` = max-pool over them:
        the authors' EncoderCNN, whose question summary so never sees the markers' states."""
        width = embedded.shape[1]
        x = (embedded * padding_mask(lengths, width)[..., None]).transpose(1, 2)
        hidden = torch.relu(torch.cat([conv(x) for conv in self.convs], dim=1)).transpose(1, 2)
        hidden = hidden * real_positions(torch.arange(width, device=lengths.device)[None, :], lengths)[..., None]
        return hidden, hidden.max(dim=1).values  # ReLU states: the zeros never exceed a real token's


class AverageEncoder(nn.Module):
    """h_t = tanh(W e_t + b); `last` is the mean over non-PAD positions (quirk: over all positions)."""

    def __init__(self, embedding_dim: int, hidden_size: int = 128, mean_includes_padding: bool = False):
        super().__init__()
        self.projection = nn.Linear(embedding_dim, hidden_size)
        self.mean_includes_padding = mean_includes_padding
        self.output_size = hidden_size

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = padding_mask(lengths, embedded.shape[1])
        hidden = torch.tanh(self.projection(embedded)) * mask[..., None]
        if self.mean_includes_padding:
            return hidden, torch.tanh(self.projection(embedded)).mean(dim=1)
        return hidden, hidden.sum(dim=1) / lengths[:, None].to(hidden.dtype)


def set_padded_lstm(model: nn.Module, padded: bool) -> nn.Module:
    """Switch every BiLSTM encoder of `model` to the padded (True) or packed (False) computation; returns `model`."""
    for module in model.modules():
        if isinstance(module, LSTMEncoder):
            module.padded = padded
    return model


def build_encoder(
    name: str, embedding_dim: int, hidden_size: int, cnn_filters: int = 64, mean_includes_padding: bool = False
) -> nn.Module:
    if name == "lstm":
        return LSTMEncoder(embedding_dim, hidden_size)
    if name == "cnn":
        return CNNEncoder(embedding_dim, cnn_filters)
    if name == "average":
        return AverageEncoder(embedding_dim, hidden_size, mean_includes_padding)
    raise ValueError(f"unknown encoder {name!r}; choose one of {ENCODERS}")
