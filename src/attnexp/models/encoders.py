"""J&W's three encoders (§4): BiLSTM, CNN (kernels 1,3,5,7) and Average (a token-wise MLP).

Each maps embeddings [B, L, E] and lengths [B] to hidden states [B, L, H] and a summary `last` [B, H]
(used only by question encoders). PAD positions never influence the outputs at other positions.
"""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnexp.models.names import ENCODERS


def _padding_mask(lengths: torch.Tensor, width: int) -> torch.Tensor:
    return torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]


class LSTMEncoder(nn.Module):
    def __init__(self, embedding_dim: int, hidden_size: int = 128):
        super().__init__()
        self.rnn = nn.LSTM(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        self.output_size = 2 * hidden_size

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
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
        x = (embedded * _padding_mask(lengths, width)[..., None]).transpose(1, 2)
        hidden = torch.relu(torch.cat([conv(x) for conv in self.convs], dim=1)).transpose(1, 2)
        positions = torch.arange(width, device=lengths.device)[None, :]
        real = (positions >= 1) & (positions < lengths[:, None] - 1)
        hidden = hidden * real[..., None]
        return hidden, hidden.max(dim=1).values  # ReLU states: the zeros never exceed a real token's


class AverageEncoder(nn.Module):
    """h_t = tanh(W e_t + b); `last` is the mean over non-PAD positions (quirk: over all positions)."""

    def __init__(self, embedding_dim: int, hidden_size: int = 128, mean_includes_padding: bool = False):
        super().__init__()
        self.projection = nn.Linear(embedding_dim, hidden_size)
        self.mean_includes_padding = mean_includes_padding
        self.output_size = hidden_size

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = _padding_mask(lengths, embedded.shape[1])
        hidden = torch.tanh(self.projection(embedded)) * mask[..., None]
        if self.mean_includes_padding:
            return hidden, torch.tanh(self.projection(embedded)).mean(dim=1)
        return hidden, hidden.sum(dim=1) / lengths[:, None].to(hidden.dtype)


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
