"""A&Z Fig. 4 on tiny random LMs built here (no download): the bars are a softmax over the candidates' logits at q,
computed by hand; a causal LM reads the text before the pronoun and is explained at its last token; its rollout and
flow rows put no mass after q; every row sums to 1 and flow's first layer is rollout's (A&Z §9)."""

import numpy as np
import pytest
import torch

from attnexp.analyses.az.pronouns import (
    CANDIDATE,
    PronounExample,
    attention_maps,
    load_language_model,
    pronoun_relevance,
    reading_table,
    relevance_maps,
)
from attnexp.analyses.az.rollout import head_average, residual_augment, rollout
from tests.pronoun_fixtures import tiny_pronoun_lm

AUTHOR = PronounExample("author_sara", "The author talked to Sara about [MASK] book.", ("his", "her"), ("author", "Sara"))
MARY = PronounExample("mary_john", "Mary convinced John of [MASK] love.", ("his", "her"), ("Mary", "John"))


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """kind -> (model, tokenizer), each loaded back from its save_pretrained folder as the job loads it."""
    root = tmp_path_factory.mktemp("lms")
    return {
        kind: load_language_model(str(tiny_pronoun_lm(root / kind, kind, layers=3)), causal=kind != "bert")
        for kind in ("bert", "llama", "gpt2")
    }


def by_hand(model, ids: list[int], at: int, candidates: list[int]) -> np.ndarray:
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, at].double()
    chosen = logits[candidates]
    return (torch.exp(chosen) / torch.exp(chosen).sum()).numpy()


def test_the_masked_lm_bars_are_a_softmax_over_the_candidates_at_the_mask(lms):
    model, tokenizer = lms["bert"]
    reading = pronoun_relevance(model, tokenizer, AUTHOR, causal=False)
    ids = tokenizer("The author talked to Sara about [MASK] book.")["input_ids"]
    q = ids.index(tokenizer.mask_token_id)
    assert reading.query == q and reading.tokens[q] == "[MASK]" and reading.tokens[0] == "[CLS]"
    candidates = tokenizer.convert_tokens_to_ids(["his", "her"])
    np.testing.assert_allclose(reading.relative, by_hand(model, ids, q, candidates), rtol=1e-10)
    # p(c) / Σ p(candidates) with p over the whole vocabulary is the same number
    np.testing.assert_allclose(reading.relative, reading.vocabulary / reading.vocabulary.sum(), rtol=1e-10)
    assert reading.pieces == ("his", "her") and reading.n_pieces == (1, 1)
    assert reading.referents == {"author": [2], "Sara": [5]}  # [CLS] the author talked to sara


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_a_causal_lm_reads_the_text_before_the_pronoun_and_scores_the_next_token(lms, kind):
    model, tokenizer = lms[kind]
    reading = pronoun_relevance(model, tokenizer, AUTHOR, causal=True)
    ids = tokenizer("The author talked to Sara about")["input_ids"]
    assert reading.text == "The author talked to Sara about" and len(reading.tokens) == len(ids)
    assert reading.query == len(ids) - 1 and reading.tokens[-1].endswith("about")  # q: the token before the pronoun
    assert all(m.shape == (3, len(ids)) for m in reading.relevance.values())  # "book ." dropped
    # GPT-2's byte-level words carry their leading space: " her" is "Ġher", not the bare "her" (another token)
    pieces = ["Ġhis", "Ġher"] if kind == "gpt2" else ["his", "her"]
    assert reading.pieces == tuple(pieces)
    candidates = tokenizer.convert_tokens_to_ids(pieces)
    np.testing.assert_allclose(reading.relative, by_hand(model, ids, reading.query, candidates), rtol=1e-10)
    if kind == "gpt2":
        bare = by_hand(model, ids, reading.query, tokenizer.convert_tokens_to_ids(["his", "her"]))
        assert not np.allclose(bare, reading.relative)


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_causal_rollout_and_flow_rows_put_no_mass_after_q(lms, kind):
    """On the whole sentence (the text after the pronoun kept), q = the token before [MASK]: the rows are causal."""
    model, tokenizer = lms[kind]
    ids = tokenizer("The author talked to Sara about his book .")["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    q = next(i for i, t in enumerate(tokens) if t.endswith("about"))
    _, maps = attention_maps(model, ids)
    assert maps.shape[1] == model.config.num_attention_heads  # one map per query head (Llama: 4 over 2 key/value heads)
    assert torch.triu(maps, diagonal=1).abs().max() == 0  # the model's own causal rows
    relevance = relevance_maps(maps, q)
    for method, rows in relevance.items():
        assert np.abs(rows[:, q + 1 :]).max() == 0, method
        np.testing.assert_allclose(rows.sum(1), 1, atol=1e-9, err_msg=method)
        assert (rows[:, : q + 1] > 0).any(1).all(), method
    # rollout before renormalising: every row of R_l already sums to 1, and the matrix stays lower-triangular
    rolled = rollout(residual_augment(head_average(maps[None])))[0]
    np.testing.assert_allclose(rolled.sum(-1).numpy(), 1, atol=1e-12)
    assert torch.triu(rolled, diagonal=1).abs().max() == 0
    np.testing.assert_allclose(relevance["rollout"], rolled[:, q].numpy(), atol=1e-12)
    np.testing.assert_allclose(relevance["flow"][0], relevance["rollout"][0], atol=1e-5)  # layer 1: flow = rollout


def test_the_masked_lm_rows_sum_to_one_and_flow_starts_as_rollout(lms):
    model, tokenizer = lms["bert"]
    reading = pronoun_relevance(model, tokenizer, MARY, causal=False)
    for method, rows in reading.relevance.items():
        assert rows.shape == (3, len(reading.tokens)), method
        np.testing.assert_allclose(rows.sum(1), 1, atol=1e-9, err_msg=method)
        assert rows.min() >= 0, method
    np.testing.assert_allclose(reading.relevance["flow"][0], reading.relevance["rollout"][0], atol=1e-5)
    raw = head_average(attention_maps(model, tokenizer(reading.text)["input_ids"])[1][None])[0, :, reading.query]
    np.testing.assert_allclose(reading.relevance["raw"], raw.numpy(), atol=1e-12)  # raw: W_l[q, :], rows of 1 already


def test_the_ablation_changes_rollout_only():
    maps = torch.softmax(torch.randn(3, 2, 5, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64), -1)
    kept, ablated = relevance_maps(maps, 2), relevance_maps(maps, 2, rollout_residual=False)
    np.testing.assert_allclose(kept["flow"], ablated["flow"])
    np.testing.assert_allclose(kept["raw"], ablated["raw"])
    assert not np.allclose(kept["rollout"], ablated["rollout"])


def test_candidates_sharing_a_first_sub_token_are_refused(lms):
    model, tokenizer = lms["bert"]
    clash = PronounExample("clash", "The author talked to Sara about [MASK] book.", ("her", "hers"))
    assert tokenizer.tokenize("hers") == ["her", "##s"]
    with pytest.raises(ValueError, match="share their first sub-token 'her'"):
        pronoun_relevance(model, tokenizer, clash, causal=False)


def test_a_candidate_the_tokenizer_does_not_know_is_refused(lms):
    model, tokenizer = lms["llama"]  # word-level: "hers" is the unknown token
    with pytest.raises(ValueError, match="'hers' begin with the unknown token"):
        pronoun_relevance(model, tokenizer, PronounExample("x", AUTHOR.sentence, ("his", "hers")), causal=True)


def test_a_candidate_of_several_sub_tokens_is_scored_by_its_first(lms):
    model, tokenizer = lms["bert"]
    reading = pronoun_relevance(model, tokenizer, PronounExample("x", AUTHOR.sentence, ("his", "hers")), causal=False)
    assert reading.pieces == ("his", "her") and reading.n_pieces == (1, 2)


def test_an_example_needs_its_mask_once_and_two_candidates():
    with pytest.raises(ValueError, match="exactly once"):
        PronounExample("x", "no mask here", ("a", "b"))
    with pytest.raises(ValueError, match="two or more"):
        PronounExample("x", "a [MASK] b", ("a",))
    assert PronounExample("x", "Mary loves  [MASK] cat", ("a", "b")).prefix == "Mary loves"


def test_the_table_holds_the_candidates_then_every_method_layer_and_position(lms):
    model, tokenizer = lms["llama"]
    reading = pronoun_relevance(model, tokenizer, MARY, causal=True)
    table = reading_table(reading, "tiny")
    candidates = table[table["method"] == CANDIDATE]
    assert list(candidates["token"]) == ["his", "her"] and candidates["value"].sum() == pytest.approx(1)
    assert (candidates["position"] == reading.query).all() and (table["kind"] == "causal_lm").all()
    n = len(reading.tokens)
    assert len(table) == 2 + 3 * 3 * n
    flow = table[(table["method"] == "flow") & (table["layer"] == 3)].sort_values("position")
    np.testing.assert_allclose(flow["value"], reading.relevance["flow"][2])
    assert set(table.loc[table["referent"] != "", "token"]) == {"Mary", "John"}
