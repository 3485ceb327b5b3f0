"""Issue 36: a causal model's variants (leave-one-out deletions, A&Z blank-outs, ERASER deletions) run from their first
changed position on, over the cached keys and values of the prefix they share with their instance (`PrefixScorer`).
Each is checked against the whole variants run by the same network, with padding in the batch."""

import pytest
import torch

from attnexp.analyses.az.importance import blank_out
from attnexp.analyses.erasure.inputs import comprehensiveness_sufficiency, kept_batch
from attnexp.analyses.jw.importance import deletion_batch, leave_one_out
from attnexp.data.batching import Batch, pad_sequences
from attnexp.models.hf.data import framed_ids
from attnexp.models.interface import PrefixScorer
from tests.hf_fixtures import tiny_decoder_checkpoint, tiny_lm_checkpoint

pytest.importorskip("transformers")

TEXTS = ["good film", "the plot was very boring and dull , but the cast was fine", "a fine cast"]
CASES = {
    "llama prompted": ("llama", "the film , {text} . it was"),
    "gpt2 prompted": ("gpt2", "{text} . it was"),
    "llama classifier": ("llama", None),
    "gpt2 classifier": ("gpt2", None),
}


@pytest.fixture(scope="module", params=list(CASES))
def causal(request, tmp_path_factory):
    from attnexp.models.hf.loading import load_pretrained
    from attnexp.models.hf.prompted import load_prompted

    kind, template = CASES[request.param]
    folder = tmp_path_factory.mktemp(kind)
    if template is None:
        return load_pretrained(str(tiny_decoder_checkpoint(folder, kind, seed=3)), task="bc", n_classes=2)
    folder = tiny_lm_checkpoint(folder, kind, seed=3)
    return load_prompted(str(folder), kind="prompted", template=template, words=["bad", "good"], task="bc")


@pytest.fixture
def batch(causal) -> Batch:
    tokens, lengths = pad_sequences(framed_ids(causal.tokenizer, TEXTS, None, None))
    return Batch(tokens=tokens, lengths=lengths, labels=torch.tensor([1, 0, 1]), instance_ids=TEXTS)


def whole(model, function, *args):
    """`function`'s result with every variant run whole (the reference)."""
    model.reuse_prefix = False
    try:
        return function(model, *args)
    finally:
        model.reuse_prefix = True


@torch.no_grad()
def test_a_causal_model_scores_variants_from_the_first_changed_position(causal, batch):
    """Deletions of every position of every instance, mixed in one call: the logits of each deletion run whole."""
    scorer = causal.variant_logits(batch)
    assert isinstance(scorer, PrefixScorer)
    deleted, instance, position = deletion_batch(batch)
    order = torch.randperm(len(instance), generator=torch.Generator().manual_seed(0))  # cuts mixed within the pass
    got = scorer(deleted.select(order), instance[order], position[order])
    expected = torch.stack([causal.logits(deleted.select(slice(int(i), int(i) + 1)))[0] for i in order])
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@torch.no_grad()
def test_leave_one_out_and_blank_out_equal_whole_reruns(causal, batch):
    torch.testing.assert_close(leave_one_out(causal, batch), whole(causal, leave_one_out, batch), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(
        blank_out(causal, batch, blank=5), whole(causal, blank_out, batch, "prob_gold", 5), atol=1e-6, rtol=1e-5
    )
    # small budgets split the cached keys a pass gathers into parts: the same scores
    torch.testing.assert_close(
        blank_out(causal, batch, blank=5, memory_budget_mb=0.01), blank_out(causal, batch, blank=5), atol=1e-6, rtol=1e-5
    )


@torch.no_grad()
def test_eraser_deletions_equal_whole_reruns(causal, batch):
    scores = torch.rand(batch.size, 2, batch.tokens.shape[1], generator=torch.Generator().manual_seed(1))
    bins = [0.01, 0.2, 0.5, 1.0]  # 1.0: sufficiency keeps every token, so nothing is deleted (q still runs)
    got = comprehensiveness_sufficiency(causal, batch, scores, bins)
    expected = whole(causal, comprehensiveness_sufficiency, batch, scores, bins)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-6, rtol=1e-5)


@torch.no_grad()
def test_an_unchanged_variant_gives_the_instance_s_own_logits(causal, batch):
    """A variant that changes nothing (first = its length) still runs its explained position."""
    keep = batch.padding_mask
    variants = kept_batch(batch, torch.arange(batch.size), keep)
    got = causal.variant_logits(batch)(variants, torch.arange(batch.size), batch.lengths)
    torch.testing.assert_close(got, causal.logits(batch), atol=1e-5, rtol=1e-5)
