"""Encoder states of single-token deletions without re-running each deletion (leave-one-out, J&W §6.1).

`deletion_states(encoder, embedded, lengths)` gives, for the BiLSTM, the CNN and the Average encoder, a function of
(instance, position) rows returning the states [R, W, H] that `encoder` would give each instance with that token
deleted, equal up to float rounding (`tests/models/test_deletions.py`); None for other encoders (the caller re-runs
the model on the deletions).

BiLSTM: deleting token t leaves the forward states before t and the backward states after t unchanged: only the forward
run from t on (started from the original state at t-1) and the backward run from t down (started from the original
state at t+1) are new. The input projections x W_ih + b are computed once per instance, not once per deletion.
That is half the recurrent steps of re-running each deletion and a third of its matrix work per step; the states
equal the re-run's up to float rounding.

CNN: a kernel of radius r reads r tokens either side, so only the 2r states around t change; the states before
them are the instance's own, those after them its own shifted by one. Only those 2r windows are convolved.
Average: every state is the instance's own (shifted by one after t).
"""

from collections.abc import Callable

import torch

from attnexp.models.encoders import (
    AverageEncoder,
    CNNEncoder,
    LSTMEncoder,
    padding_mask,
    real_positions,
    reversed_positions,
)


def _cell(gates_x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, w_hh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step (torch's gate order i, f, g, o) from precomputed input gates."""
    i, f, g, o = torch.addmm(gates_x, h, w_hh.T).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class _Direction:
    """One direction over sequences read left to right: every original state, and the states of deletions."""

    def __init__(self, inputs: torch.Tensor, lengths: torch.Tensor, weights: list[torch.Tensor]):
        w_ih, self.w_hh, b_ih, b_hh = weights
        self.gates = inputs @ w_ih.T + (b_ih + b_hh)  # [B, L, 4H], once for every deletion
        self.lengths = lengths
        size, width, _ = inputs.shape
        h = c = inputs.new_zeros(size, self.w_hh.shape[1])
        self.h, self.c = inputs.new_empty(size, width, h.shape[1]), inputs.new_empty(size, width, h.shape[1])
        for step in range(width):  # states past a sequence's end are never read
            h, c = _cell(self.gates[:, step], h, c, self.w_hh)
            self.h[:, step], self.c[:, step] = h, c

    def steps(self, instance: torch.Tensor, position: torch.Tensor) -> int:
        """Recurrent steps the longest of these deletions needs (the tokens after its deleted one)."""
        return int((self.lengths[instance] - 1 - position).max()) if len(instance) else 0

    def deleted(self, instance: torch.Tensor, position: torch.Tensor, table: torch.Tensor, start: int) -> torch.Tensor:
        """Run each instance with the token at `position` (>= 1) deleted; returns the row index in `table` [N, H] of
        each state of each deletion [R, W] (W = longest length - 1; past a row's end: the last row, kept zero).
        `table[start:]` receives this direction's original states, then the new runs. Rows run in lock-step,
        longest remaining run first, so step k touches only the rows that still have tokens left (a prefix)."""
        remaining = self.lengths[instance] - 1 - position  # tokens after the deleted one
        order = torch.argsort(remaining, descending=True, stable=True)
        instance, position, remaining = instance[order], position[order], remaining[order]
        (size, width, hidden), rows, device = self.h.shape, len(order), self.h.device
        steps = self.steps(instance, position)
        active = (remaining[None, :] > torch.arange(steps, device=device)[:, None]).sum(1).tolist()
        runs_start = start + size * width
        table[start:runs_start] = self.h.reshape(-1, hidden)
        runs = table[runs_start : runs_start + steps * rows].view(steps, rows, hidden)
        gates, first = self.gates.reshape(size * width, -1), instance * width + position + 1  # flat index of t + 1
        h, c = self.h[instance, position - 1], self.c[instance, position - 1].clone()
        for k, m in enumerate(active):
            h, c[:m] = _cell(gates.index_select(0, first[:m] + k), h[:m], c[:m], self.w_hh)
            runs[k, :m] = h
        columns = torch.arange(int(self.lengths[instance].max()) - 1 if rows else 0, device=device)[None, :]
        source = torch.where(
            columns < position[:, None],
            start + instance[:, None] * width + columns,  # before the deletion: the original state
            runs_start + (columns - position[:, None]) * rows + torch.arange(rows, device=device)[:, None],
        )
        source = source.masked_fill(columns >= (self.lengths[instance] - 1)[:, None], len(table) - 1)  # past the end
        return source[torch.argsort(order)]


class LSTMDeletions:
    """The BiLSTM states [R, W, 2H] of single-token deletions of a batch, as `encoder(deleted)` would give them."""

    def __init__(self, encoder: LSTMEncoder, embedded: torch.Tensor, lengths: torch.Tensor):
        weights = encoder.rnn._flat_weights
        self.lengths = lengths.to(embedded.device)
        reverse = reversed_positions(self.lengths, embedded.shape[1])
        flipped = embedded.gather(1, reverse[..., None].expand_as(embedded))
        self.forward = _Direction(embedded, self.lengths, weights[:4])
        self.backward = _Direction(flipped, self.lengths, weights[4:])  # the backward LSTM reads the flipped sequence

    @torch.no_grad()
    def __call__(self, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        n = self.lengths[instance] - 1  # deleted lengths
        flipped = n - position  # position t counts n - t from the end
        size, width, hidden = self.forward.h.shape
        runs = [d.steps(instance, p) * len(instance) for d, p in ((self.forward, position), (self.backward, flipped))]
        sizes = [size * width + r for r in runs]
        table = self.forward.h.new_empty(sum(sizes) + 1, hidden)
        table[-1] = 0
        forward = self.forward.deleted(instance, position, table, 0)
        backward = self.backward.deleted(instance, flipped, table, sizes[0])
        columns = torch.arange(forward.shape[1], device=forward.device)[None, :]
        backward = backward.gather(1, torch.where(columns < n[:, None], n[:, None] - 1 - columns, columns))  # unflip
        # [R, W, 2] indices -> [R, W, 2, H] states: forward and backward side by side without a concatenation
        return table.index_select(0, torch.stack([forward, backward], dim=-1).reshape(-1)).view(len(instance), -1, 2 * hidden)


class CNNDeletions:
    """The CNN states [R, W, F] of single-token deletions of a batch, as `encoder(deleted)` would give them."""

    def __init__(self, encoder: CNNEncoder, embedded: torch.Tensor, lengths: torch.Tensor):
        self.encoder, self.lengths = encoder, lengths.to(embedded.device)
        self.radius = max((conv.kernel_size[0] - 1) // 2 for conv in encoder.convs)
        self.embedded = embedded * padding_mask(self.lengths, embedded.shape[1])[..., None]  # as the encoder reads it
        self.hidden, _ = encoder(embedded, lengths)

    @torch.no_grad()
    def new_states(self, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        """The recomputed states [R, 2r, F] of each deletion, at its positions t - r .. t + r - 1 (zero where that
        position is not a real token of the deleted sequence)."""
        width, r, device = self.hidden.shape[1], self.radius, self.hidden.device
        n = self.lengths[instance] - 1  # deleted lengths
        # The new states at t - r .. t + r - 1 read the deleted sequence at t - 2r .. t + 2r - 1 (zero outside it).
        local = position[:, None] - 2 * r + torch.arange(4 * r, device=device)[None, :]
        inside = (local >= 0) & (local < n[:, None])
        source = (local + (local >= position[:, None]).long()).clamp(0, width - 1)
        window = self.embedded[instance[:, None], source] * inside[..., None]  # [R, 4r, E]
        convolved = torch.cat([conv(window.transpose(1, 2)) for conv in self.encoder.convs], dim=1).transpose(1, 2)
        return torch.relu(convolved[:, r : 3 * r]) * real_positions(local[:, r : 3 * r], n)[..., None]

    @torch.no_grad()
    def table(self, instance: torch.Tensor, position: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(table [N, F], index [R, W]): the deletions' states are `table[index]` (past a row's end: a zero row)."""
        (size, width, features), r, device = self.hidden.shape, self.radius, self.hidden.device
        rows, n = len(instance), self.lengths[instance] - 1  # deleted lengths
        new = self.new_states(instance, position)
        table = torch.cat([self.hidden.reshape(-1, features), new.reshape(-1, features), self.hidden.new_zeros(1, features)])
        columns = torch.arange(int(n.max()) if rows else 0, device=device)[None, :]
        offset = columns - position[:, None]  # -r .. r - 1: recomputed
        shifted = columns + (offset >= r).long()  # at and after t + r: the instance's own state one further on
        index = torch.where(
            (offset >= -r) & (offset < r),
            size * width + torch.arange(rows, device=device)[:, None] * 2 * r + (offset + r).clamp(0, 2 * r - 1),
            instance[:, None] * width + shifted.clamp(max=width - 1),
        )
        return table, index.masked_fill((columns >= n[:, None]) | (shifted >= width), len(table) - 1)

    def __call__(self, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        return gathered(*self.table(instance, position))


class AverageDeletions:
    """The Average encoder's states of single-token deletions: token-wise, so the instance's own states, shifted by
    one after the deleted token."""

    radius = 0  # no state but the deleted token's own changes

    def __init__(self, encoder: AverageEncoder, embedded: torch.Tensor, lengths: torch.Tensor):
        self.lengths = lengths.to(embedded.device)
        self.hidden, _ = encoder(embedded, lengths)

    def new_states(self, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        """No recomputed states: [R, 0, H] (as `CNNDeletions.new_states`)."""
        return self.hidden.new_zeros(len(instance), 0, self.hidden.shape[-1])

    def table(self, instance: torch.Tensor, position: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(table [N, H], index [R, W]) as `CNNDeletions.table`."""
        size, width, hidden = self.hidden.shape
        n = self.lengths[instance] - 1
        columns = torch.arange(int(n.max()) if len(n) else 0, device=self.hidden.device)[None, :]
        shifted = columns + (columns >= position[:, None]).long()
        index = (instance[:, None] * width + shifted.clamp(max=width - 1)).masked_fill(columns >= n[:, None], size * width)
        return torch.cat([self.hidden.reshape(-1, hidden), self.hidden.new_zeros(1, hidden)]), index

    def __call__(self, instance: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        return gathered(*self.table(instance, position))


def gathered(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """The states `table[index]` [R, W, H]."""
    return table.index_select(0, index.reshape(-1)).view(*index.shape, table.shape[-1])


def deletion_states(
    encoder: torch.nn.Module, embedded: torch.Tensor, lengths: torch.Tensor
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None:
    """The deletions' states from the batch's own run for J&W's three encoders; None for other encoders. The CNN's
    and the Average encoder's also have `hidden` (the batch's own states), `radius` r and `new_states(instance,
    position)`: a deletion at t changes only the states at t - r .. t + r - 1, so a function of the states (the
    attention average) can reuse sums over the instance's own states for the rest."""
    if isinstance(encoder, LSTMEncoder):
        return LSTMDeletions(encoder, embedded, lengths)
    if isinstance(encoder, CNNEncoder) and all(conv.kernel_size[0] % 2 for conv in encoder.convs):
        return CNNDeletions(encoder, embedded, lengths)
    if isinstance(encoder, AverageEncoder):
        return AverageDeletions(encoder, embedded, lengths)
    return None
