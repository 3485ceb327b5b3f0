"""Prompted LMs (a causal Llama with grouped-query heads, a GPT-2) and a masked LM (BERT) as `AttentionModel`s: the
spec's §6 checks (language-models.md), each against a reference computed here from the definition on the filled
prompt, which the wrapper never sees."""

import pandas as pd
import pytest
import torch

from attnexp.data.batching import Batch, pad_sequences
from attnexp.errors import ConfigError
from attnexp.models.hf.data import framed_ids
from tests.hf_fixtures import tiny_lm_checkpoint

pytest.importorskip("transformers")

CASES = {
    "llama": ("prompted", "the film , {text} . it was"),
    "gpt2": ("prompted", "{text} . it was"),
    "bert": ("masked_lm", "the film : {text} . it was {mask} !"),
}
TEXTS = ["good film", "the plot was very boring and dull , but the cast was fine"]
WORDS = ["bad", "good"]


@pytest.fixture(scope="module", params=list(CASES))
def prompted(request, tmp_path_factory):
    from attnexp.models.hf.prompted import load_prompted

    kind, template = CASES[request.param]
    folder = tiny_lm_checkpoint(tmp_path_factory.mktemp(request.param), request.param)
    model = load_prompted(str(folder), kind=kind, template=template, words=WORDS, task="bc")
    return model, template


def batch_of(model, texts=TEXTS) -> Batch:
    tokens, lengths = pad_sequences(framed_ids(model.tokenizer, texts, None, None))
    return Batch(tokens=tokens, lengths=lengths, labels=torch.tensor([1, 0][: len(texts)]), instance_ids=list(map(str, texts)))


def filled(model, template: str, text: str) -> tuple[list[int], int]:
    """The filled prompt's ids, as the tokenizer spells the whole string, and q."""
    tokenizer = model.tokenizer
    if model.config.kind == "masked_lm":
        ids = tokenizer(template.replace("{text}", text).replace("{mask}", tokenizer.mask_token))["input_ids"]
        return ids, ids.index(tokenizer.mask_token_id)
    ids = tokenizer(template.replace("{text}", text))["input_ids"]
    return ids, len(ids) - 1


def test_probabilities_are_a_softmax_over_the_verbalizer_logits(prompted):
    model, template = prompted
    batch = batch_of(model)
    with torch.no_grad():
        got = model.distribution(model(batch).logits)
        for i, text in enumerate(TEXTS):
            ids, q = filled(model, template, text)
            words = [model.tokenizer(" " + w, add_special_tokens=False)["input_ids"][0] for w in WORDS]
            logits = model.model(torch.tensor([ids])).logits[0, q, words]
            torch.testing.assert_close(got[i], torch.softmax(logits, -1), atol=1e-5, rtol=1e-5)


def test_maps_are_the_models_own_eager_attention_over_the_filled_prompt(prompted):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    model, template = prompted
    loader = AutoModelForMaskedLM if model.config.kind == "masked_lm" else AutoModelForCausalLM
    reference = loader.from_pretrained(model.config.checkpoint, attn_implementation="eager").eval()
    batch = batch_of(model)
    with torch.no_grad():
        maps = model(batch).encoded.maps
        for i, text in enumerate(TEXTS):
            ids, _ = filled(model, template, text)
            own = torch.stack(reference(torch.tensor([ids]), output_attentions=True).attentions, 1)[0]
            torch.testing.assert_close(maps[i, :, :, : len(ids), : len(ids)], own, atol=1e-5, rtol=1e-5)
            assert maps.shape[2] == model.config.n_heads  # per query head (grouped-query heads repeated)


def test_own_attention_and_the_identity_give_back_the_logits_and_the_last_layer_path_equals_a_full_rerun(prompted):
    model, _ = prompted
    batch = batch_of(model)
    with torch.no_grad():
        output = model(batch)
        own = output.logits
        torch.testing.assert_close(model.decode(output.encoded, output.attention, batch), own, atol=1e-5, rtol=1e-5)
        identity = torch.arange(batch.tokens.shape[1]).expand(batch.size, 2, -1)
        torch.testing.assert_close(model.decode_permuted(output.encoded, identity, batch), own[:, None].expand(-1, 2))
        generator = torch.Generator().manual_seed(0)
        index = identity.clone()
        for b in range(batch.size):  # a random permutation of each text's positions 1 .. n
            n = int(batch.real_mask[b].sum())
            index[b, 1, 1 : 1 + n] = 1 + torch.randperm(n, generator=generator)
        erased = torch.zeros(batch.size, 1, batch.tokens.shape[1], dtype=torch.bool)
        erased[:, 0, 1] = True
        fast = model.decode_permuted(output.encoded, index, batch), model.decode_erased(output.encoded, erased, batch)
        model.full_rerun = True
        try:
            slow = model.decode_permuted(output.encoded, index, batch), model.decode_erased(output.encoded, erased, batch)
        finally:
            model.full_rerun = False
        for a, b in zip(fast, slow, strict=True):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        assert not torch.allclose(fast[0][:, 1], own)  # the permutation changed something


def test_template_tokens_are_never_ranked(prompted):
    """The attention, the gradients and leave-one-out live on the text's positions 1 .. n; erasing every text token
    leaves each head's row q on the template (renormalised there)."""
    from attnexp.analyses.jw.importance import gradient_importance, leave_one_out

    model, _ = prompted
    batch = batch_of(model)
    output = model(batch)
    outside = ~batch.real_mask
    assert float(output.attention.detach()[outside].abs().sum()) == 0
    assert torch.allclose(output.attention.sum(-1), torch.ones(batch.size))
    for values in (gradient_importance(model, batch), leave_one_out(model, batch)):
        assert float(values[outside].abs().sum()) == 0 and float(values[batch.real_mask].abs().sum()) > 0
    rows = model._model_frame(batch.real_mask[:, None], batch)[:, 0]
    kept = output.encoded.cls_rows.detach() * ~rows[:, None]
    assert (kept.sum(-1) > 0).all()  # the template carries mass the erasure renormalises over


def test_batch_padding_changes_no_number(prompted):
    """The wrapper builds its own right-padded prompts (the tokenizer's padding side is never used): each text's
    logits in a padded batch are its logits alone."""
    model, _ = prompted
    with torch.no_grad():
        batched = model(batch_of(model)).logits
        alone = torch.cat([model(batch_of(model, [t])).logits for t in TEXTS])
    torch.testing.assert_close(batched, alone, atol=1e-5, rtol=1e-5)


def test_az_relevance_is_read_at_the_text_with_the_sink_at_position_0(prompted):
    """Rollout and flow run over the whole prompt from q (no mass after q on a causal model); the text's values land
    at 1 .. n and everything else at 0, so each raw row still sums to 1."""
    from attnexp.analyses.az.measures import relevance_and_importance
    from attnexp.analyses.az.rollout import head_average, residual_augment, rollout

    model, _ = prompted
    batch = batch_of(model)
    tokens = [t[:n].tolist() for t, n in zip(batch.tokens, batch.lengths, strict=True)]
    rows = pd.DataFrame({"instance_id": batch.instance_ids, "tokens": tokens, "label": [1, 0]})
    options = dict(relevance_row="cls", rollout_residual=True, flow_solver="scipy", score="prob_gold")
    table = relevance_and_importance(model, rows, batch_size=2, progress=lambda _: None, **options)
    for i, record in table.iterrows():
        n = int(batch.real_mask[i].sum())
        assert record["length"] == n + 1  # [BOS]/[CLS] (the sink) + the text
        for layer in record["raw"]:
            assert abs(sum(layer) - 1) < 1e-5
        assert all(0 <= s <= 1 for s in record["raw_sink"])
    if model.config.causal:
        with torch.no_grad():
            rolled = rollout(residual_augment(head_average(model(batch).encoded.maps)))
        assert float(torch.triu(rolled, diagonal=1).abs().max()) < 1e-6  # lower-triangular: nothing after q


def test_config_problems_are_named_with_their_key(tmp_path):
    from attnexp.models.hf.checkpoints import kind_problems

    folder = tiny_lm_checkpoint(tmp_path / "gpt2", "gpt2")
    base = {"checkpoint": str(folder), "kind": "prompted", "prompt": "{text} . it was", "verbalizer": {"0": "bad", "1": "good"}}
    assert kind_problems(base) == []
    assert kind_problems({**base, "prompt": "it was"})[0][0] == "prompt"
    assert "{mask}" in kind_problems({**base, "kind": "masked_lm"})[0][1]
    assert kind_problems({**base, "verbalizer": {"0": "bad"}})[0][0] == "verbalizer"
    assert kind_problems({**base, "finetune": True})[0][0] == "finetune"
    collide = kind_problems({**base, "verbalizer": {"0": "good", "1": "good"}})
    assert collide[0][0] == "verbalizer" and "same sub-token" in collide[0][1]
    assert "not a masked LM" in kind_problems({**base, "kind": "masked_lm", "prompt": "{text} {mask}"})[0][1]


def test_a_saved_prompted_model_reloads_from_its_source(prompted, tmp_path):
    from attnexp.models.hf.loading import from_checkpoint, save_hf_model

    model, _ = prompted
    save_hf_model(model, tmp_path / "model.pt", finetuned=False)
    again = from_checkpoint(torch.load(tmp_path / "model.pt", weights_only=False))
    batch = batch_of(model)
    with torch.no_grad():
        torch.testing.assert_close(again(batch).logits, model(batch).logits)
    assert again.config.kind == model.config.kind and again.prompt == model.prompt


def test_a_verbalizer_for_other_classes_is_refused():
    from attnexp.models.hf.data import verbalizer_words

    assert verbalizer_words({"neg": "bad", "pos": "good"}, ["neg", "pos"], "hf.models.x") == ["bad", "good"]
    with pytest.raises(ConfigError, match="no word for 'pos'"):
        verbalizer_words({"neg": "bad", "positive": "good"}, ["neg", "pos"], "hf.models.x")


def test_explain_takes_a_prompted_lm_with_its_prompt_and_verbalizer(tmp_path):
    """The API explains an in-memory causal LM given a prompt and a verbalizer: the same fields as a classifier's,
    over the text's tokens alone, the classes named by the verbalizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from attnexp.api import explain

    folder = tiny_lm_checkpoint(tmp_path / "llama", "llama")
    lm, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    verbalizer = {"negative": "bad", "positive": "good"}
    exp = explain(lm, tokenizer, "the plot was dull", prompt="{text} . it was", verbalizer=verbalizer, target="positive")
    assert exp.words == ["the", "plot", "was", "dull"]
    assert len(exp.attention) == len(exp.loo) == len(exp.gradient) == 4
    assert abs(sum(exp.attention) - 1) < 1e-5
    assert exp.classes == ["negative", "positive"] and exp.target == 1
    assert len(exp.rollout[-1]) == len(exp.positions) - 1  # the sink at position 0 and the text (no closing marker)
    with pytest.raises(ValueError, match="both `prompt`"):
        explain(lm, tokenizer, "the plot", prompt="{text} . it was")


def test_integrated_gradients_in_one_pass_equal_the_two_pass_decode(prompted):
    """`single_pass_gradients`: IG through the network's own logits equals IG through decode(encode, attend)."""
    from attnexp.analyses.jw.importance import integrated_gradients

    model, _ = prompted
    batch = batch_of(model)
    fast = integrated_gradients(model, batch, 4)
    model.single_pass_gradients = False
    try:
        slow = integrated_gradients(model, batch, 4)
    finally:
        del model.single_pass_gradients
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-4)
    assert float(fast.abs().sum()) > 0


def test_gradients_in_chunks_of_the_memory_budget_equal_one_batch(prompted):
    """`gradient_importance(memory_budget_mb=...)`: a budget that fits one instance at a time gives each instance's
    own gradient, as the whole batch does."""
    from attnexp.analyses.jw.importance import gradient_importance, rows_per_chunk

    model, _ = prompted
    batch = batch_of(model)
    tiny = 1e-3
    assert rows_per_chunk(model, batch.tokens.shape[1], tiny, backward=True) < batch.size  # the chunks are real
    chunked, whole = gradient_importance(model, batch, None, tiny), gradient_importance(model, batch)
    torch.testing.assert_close(chunked, whole, atol=1e-6, rtol=1e-5)
