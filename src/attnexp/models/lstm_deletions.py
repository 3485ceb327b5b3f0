"""BiLSTM states of single-token deletions without re-running the whole sequence (leave-one-out, J&W §6.1).

Deleting token t leaves the forward states before t and the backward states after t unchanged: only the forward
run from t on (started from the original state at t-1) and the backward run from t down (started from the original
state at t+1) are new. The input projections x W_ih + b are computed once per instance, not once per deletion.
That is half the recurrent steps of re-running each deletion and a third of its matrix work per step; the states
equal the re-run's up to float rounding (`tests/models/test_lstm_deletions.py`).
"""

import torch

from attnexp.models.encoders import LSTMEncoder


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
        width = embedded.shape[1]
        positions = torch.arange(width, device=embedded.device)[None, :]
        self.reverse = torch.where(positions < self.lengths[:, None], self.lengths[:, None] - 1 - positions, positions)
        flipped = embedded.gather(1, self.reverse[..., None].expand_as(embedded))
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
