"""Per-instance outputs of a trained model (W&P §2 "saved donor outputs") and attention frozen to them.

A donor run stores p = P(class 1) and its attention over real tokens for every train and test instance,
keyed by `instance_id`. Later runs read them back as targets (the consistent adversary, W&P §4) or as frozen
guide weights (the diagnostic MLP, W&P §3.3). Guides are matched by id, never by file position, unless the
authors' order-based `strip_zeros` alignment is asked for.
"""

from collections.abc import Mapping
from dataclasses import replace
from os import PathLike

import numpy as np
import pandas as pd
import torch

from attnexp.data.batching import Batch, length_order, sequential_batches
from attnexp.data.preprocess import split_frame
from attnexp.io import read_parquet
from attnexp.models.checkpoint import read_checkpoint
from attnexp.models.classifier import AttentionClassifier, Encoded, ModelConfig
from attnexp.models.device import model_device

ALIGNMENTS = ("instance_id", "strip_zeros")
DONOR_SPLITS = ("train", "dev", "test")  # dev too: DEFAULT selection of guided runs needs dev guides
GUIDED_KIND = "guided"


@torch.no_grad()
def donor_outputs(model: AttentionClassifier, rows: pd.DataFrame, batch_size: int = 128) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(predictions: instance_id, p, pred_class; attention: instance_id, attention over real tokens), in row order;
    run shortest first (a train split is not length-sorted), each instance's outputs its own whatever its batch."""
    model.eval()
    device = model_device(model)
    order = length_order(rows)
    ids, probabilities, predicted, weights = [], [], [], []
    for batch in sequential_batches(rows.iloc[order], batch_size):
        batch = batch.to(device)
        output = model(batch)
        ids += batch.instance_ids
        probabilities.append(model.distribution(output.logits)[:, 1])
        predicted.append(model.predict(output.logits))
        weights += real_token_rows(output.attention, batch)
    p = torch.cat(probabilities).cpu().numpy() if probabilities else np.zeros(0)
    pred = torch.cat(predicted).cpu().numpy() if predicted else np.zeros(0, dtype=int)
    back = np.argsort(order, kind="stable")  # the rows' own order again
    ids = [ids[i] for i in back]
    predictions = pd.DataFrame({"instance_id": ids, "p": p[back].astype(float), "pred_class": pred[back].astype(int)})
    attention = pd.DataFrame({"instance_id": ids, "attention": [weights[i].tolist() for i in back]})
    return predictions, attention


def real_token_rows(attention: torch.Tensor, batch: Batch) -> list[np.ndarray]:
    """Split a padded [B, L] attention into one array per instance over its real tokens."""
    sizes = (batch.lengths - 2).tolist()
    return [t.numpy().astype(float) for t in torch.split(attention[batch.real_mask].cpu(), sizes)]


class DonorTable:
    """A donor's p and attention per instance id, served as batch tensors aligned to `batch.instance_ids`."""

    def __init__(self, attention: dict[str, np.ndarray], p: dict[str, float] | None = None, name: str = "donor"):
        self.attention = attention
        self.p = p or {}
        self.name = name

    @classmethod
    def from_frames(cls, attention: pd.DataFrame, predictions: pd.DataFrame | None = None, name: str = "donor") -> "DonorTable":
        weights = {
            i: np.asarray(a, dtype=np.float32) for i, a in zip(attention["instance_id"], attention["attention"], strict=True)
        }
        p = None if predictions is None else dict(zip(predictions["instance_id"], predictions["p"].astype(float), strict=True))
        return cls(weights, p, name)

    def _missing(self, ids: list[str], table: dict) -> None:
        missing = [i for i in ids if i not in table]
        if missing:
            raise KeyError(
                f"{self.name} has no stored output for {len(missing)} instance(s), e.g. {missing[:3]}; "
                "re-run the donor on the same preprocessed data (guides are matched by instance_id)"
            )

    def attention_for(self, batch: Batch) -> torch.Tensor:
        """Donor attention as [B, L]: its weights on the real tokens, exactly 0 elsewhere."""
        self._missing(batch.instance_ids, self.attention)
        rows = [self.attention[i] for i in batch.instance_ids]
        expected = (batch.lengths - 2).tolist()
        wrong = [(i, len(r), n) for i, r, n in zip(batch.instance_ids, rows, expected, strict=True) if len(r) != n]
        if wrong:
            raise ValueError(
                f"{self.name}: guide length differs from the instance's real tokens for {len(wrong)} "
                f"instance(s), e.g. (id, guide, tokens) = {wrong[:3]}; donor and recipient must share preprocessing"
            )
        out = torch.zeros(batch.tokens.shape, dtype=torch.float32, device=batch.tokens.device)
        if rows:
            out[batch.real_mask] = torch.from_numpy(np.concatenate(rows, dtype=np.float32)).to(out.device)
        return out

    def p_for(self, batch: Batch) -> torch.Tensor:
        """Donor P(class 1) per instance, [B]."""
        self._missing(batch.instance_ids, self.p)
        return torch.tensor([self.p[i] for i in batch.instance_ids], dtype=torch.float32, device=batch.tokens.device)

    def targets(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(`p_for`, `attention_for`) of the batch: what the consistent adversary compares itself with."""
        return self.p_for(batch), self.attention_for(batch)


def strip_zeros_alignment(attention: pd.DataFrame, recipient_ids: list[str]) -> dict[str, np.ndarray]:
    """quirk `wp.preloaded_alignment: strip_zeros`: the authors pad each stored row ([SOS] 0, weights, [EOS] 0,
    PAD 0s), recover the weights as the non-zero entries and pair rows with instances by position only."""
    if len(attention) != len(recipient_ids):
        raise ValueError(f"strip_zeros alignment: donor file has {len(attention)} rows, recipient split {len(recipient_ids)}")
    width = max((len(a) for a in attention["attention"]), default=0) + 2
    padded = np.zeros((len(attention), width))
    for row, weights in enumerate(attention["attention"]):
        padded[row, 1 : 1 + len(weights)] = weights
    return {i: row[row != 0] for i, row in zip(recipient_ids, padded, strict=True)}


def load_donor(
    attention: pd.DataFrame,
    predictions: pd.DataFrame | None = None,
    alignment: str = "instance_id",
    recipient_ids: list[str] | None = None,
    name: str = "donor",
) -> DonorTable:
    """A DonorTable keyed by instance id (DEFAULT) or by the order-based strip_zeros quirk."""
    if alignment == "instance_id":
        return DonorTable.from_frames(attention, predictions, name)
    if alignment == "strip_zeros":
        weights = strip_zeros_alignment(attention, recipient_ids)
        p = None if predictions is None else dict(zip(recipient_ids, predictions["p"].astype(float), strict=True))
        return DonorTable(weights, p, name)
    raise ValueError(f"unknown guide alignment {alignment!r}; choose one of {ALIGNMENTS}")


def read_donor(
    files: Mapping[str, str | PathLike],
    instances: pd.DataFrame | None = None,
    alignment: str = "instance_id",
    name: str = "donor",
    with_p: bool = False,
) -> DonorTable:
    """One DonorTable over every split a donor run stored (`files`: its `{split}_attention` and, with
    `with_p`, `{split}_predictions` parquet files). The strip_zeros alignment needs the recipient `instances`."""
    attention = pd.concat([read_parquet(files[f"{s}_attention"]) for s in DONOR_SPLITS], ignore_index=True)
    predictions = (
        pd.concat([read_parquet(files[f"{s}_predictions"]) for s in DONOR_SPLITS], ignore_index=True) if with_p else None
    )
    recipient = None if instances is None else [i for s in DONOR_SPLITS for i in split_frame(instances, s)["instance_id"]]
    if alignment == "strip_zeros" and recipient is None:
        raise ValueError("the strip_zeros guide alignment pairs guides with instances by position: pass the instances")
    return load_donor(attention, predictions, alignment, recipient, name)


class GuidedClassifier(AttentionClassifier):
    """A classifier whose attention is frozen to guide weights per instance (W&P §3.3): no attention parameters.

    Its checkpoint holds a uniform-attention config; `checkpoint_kind` marks it so that only
    `load_guided_model` (which needs the guides) reloads it."""

    checkpoint_kind = GUIDED_KIND

    def __init__(self, config, guides: DonorTable, embeddings: torch.Tensor | None = None):
        super().__init__(replace(config, attention="uniform"), embeddings)
        self.guides = guides

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """The classifier's states without attention scores: the guides are weights (erasure renormalises them)."""
        return replace(super().encode(batch, embedded), scores=None)

    def attend(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        return self.guides.attention_for(batch).to(encoded.hidden.device)


def _is_guided(checkpoint: dict) -> bool:
    """The checkpoint's recorded kind (top level or in `extra`), else the run config's `attention: guide`."""
    extra = checkpoint.get("extra") or {}
    kind = checkpoint.get("kind", extra.get("kind"))
    if kind is not None:
        return kind == GUIDED_KIND
    return (extra.get("run_config") or {}).get("attention") == "guide"


def load_guided_model(
    path: str | PathLike,
    guide_files: Mapping[str, str | PathLike],
    alignment: str = "instance_id",
    instances: pd.DataFrame | None = None,
) -> GuidedClassifier:
    """Rebuild a trained guided MLP (W&P §3.3) from its checkpoint and the donor run's stored attention
    (`guide_files`: `{split}_attention` paths; the run's config.yaml names the donor folder under `guide`)."""
    checkpoint = read_checkpoint(path)
    if not _is_guided(checkpoint):
        raise ValueError(f"{path} is not a guided-MLP checkpoint; load it with attnexp.models.classifier.load_model")
    guides = read_donor(guide_files, instances, alignment, f"guide of {path}")
    model = GuidedClassifier(ModelConfig(**checkpoint["config"]), guides)
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval()
