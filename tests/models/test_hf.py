"""The Hugging Face wrapper on tiny randomly initialised BERT and DistilBERT checkpoints built locally (no download):
attention maps, the embed -> encode -> attend -> decode split against the model's own outputs and gradients, the
per-head permutation, saving and loading, tokenization of grid instances and the missing-checkpoint error."""

import numpy as np
import pandas as pd
import pytest
import torch

from attnexp.config import ConfigError
from attnexp.data.batching import collate
from attnexp.pipeline.settings import hf_settings
from tests.factories import validated_config
from tests.hf_fixtures import tiny_checkpoint

TEXTS = ["a good film", "the plot was very boring and dull but the acting is fine", "not funny"]


@pytest.fixture(scope="module", params=["bert", "distilbert"])
def tiny(request, tmp_path_factory):
    """(checkpoint directory, wrapped model, a padded batch of TEXTS)."""
    from attnexp.models.hf.loading import load_pretrained

    folder = tiny_checkpoint(tmp_path_factory.mktemp(request.param), request.param, seed=3)
    model = load_pretrained(str(folder), task="bc", n_classes=2)
    ids = [model.tokenizer(t)["input_ids"] for t in TEXTS]
    batch = collate(pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}))
    return folder, model, batch


def test_attention_maps_are_layers_by_heads_by_n_by_n_distributions(tiny):
    _, model, batch = tiny
    output = model(batch)
    maps = output.encoded.maps
    width = batch.tokens.shape[1]
    assert maps.shape == (3, 2, 2, width, width)
    valid = batch.padding_mask
    rows = maps.sum(-1)[valid[:, None, None, :].expand_as(maps.sum(-1))]
    torch.testing.assert_close(rows, torch.ones_like(rows))
    assert (maps[0][..., ~valid[0]] == 0).all()  # padding keys get nothing
    own = model.model(input_ids=batch.tokens, attention_mask=valid.long()).logits
    torch.testing.assert_close(output.logits, own[:, 1] - own[:, 0])
    attention = output.attention
    torch.testing.assert_close(attention.sum(-1), torch.ones(3))
    assert (attention[~batch.real_mask] == 0).all()


def test_decode_and_gradients_are_the_models_own(tiny):
    _, model, batch = tiny
    output = model(batch)
    torch.testing.assert_close(model.decode(output.encoded, output.attention, batch), output.logits)
    identity = torch.arange(batch.tokens.shape[1]).expand(3, 2, -1).clone()
    torch.testing.assert_close(model.decode_permuted(output.encoded, identity, batch), output.logits[:, None].expand(3, 2))
    # through encode/attend/decode (IG's path) the gradient is the network's own gradient at the embeddings
    embedded = model.embed(batch.tokens).detach().requires_grad_(True)
    encoded = model.encode(batch, embedded)
    (split,) = torch.autograd.grad(model.decode(encoded, model.attend(encoded, batch), batch).sum(), embedded)
    direct_input = embedded.detach().clone().requires_grad_(True)
    (direct,) = torch.autograd.grad(model.encode(batch, direct_input).logits.sum(), direct_input)
    torch.testing.assert_close(split, direct, atol=1e-6, rtol=1e-4)  # the rerun batches rows otherwise
    # a detached attention holds the [CLS] rows fixed: a different gradient
    (held,) = torch.autograd.grad(model.decode(encoded, model.attend(encoded, batch).detach(), batch).sum(), embedded)
    assert not torch.allclose(held, direct)


@pytest.mark.parametrize("kind", ["bert", "distilbert", "roberta", "llama"])
def test_the_held_attention_runs_in_one_pass_with_the_two_pass_logits_and_gradient(kind, tmp_path):
    """Issue 35: the gradient importance's function, the logits with every head's last-layer row at q held fixed, in
    one pass (the attention function detaches those rows) on a fresh model and a padded batch: the logits and input
    gradient of `decode(encode, attend.detach())` in two passes, and not the free attention's gradient."""
    from attnexp.models.head import ClassifierHead
    from attnexp.models.hf.data import framed_ids
    from attnexp.models.hf.loading import load_pretrained

    model = load_pretrained(str(tiny_checkpoint(tmp_path, kind, seed=7)), task="bc", n_classes=2)
    ids = framed_ids(model.tokenizer, TEXTS, None, 32)
    batch = collate(pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}))
    embedded = model.embed(batch.tokens).detach()

    def differentiated(function) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = embedded.clone().requires_grad_(True)
        logits = function(batch, inputs)
        (gradient,) = torch.autograd.grad(logits.sum(), inputs)
        return logits.detach(), gradient

    one, one_gradient = differentiated(model.fixed_attention_logits)  # first: no encode has found the layer yet
    two, two_gradient = differentiated(lambda b, e: ClassifierHead.fixed_attention_logits(model, b, e))
    free, free_gradient = differentiated(model.logits)
    torch.testing.assert_close(one, two, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(one_gradient, two_gradient, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(one, free, atol=1e-6, rtol=1e-5)  # the same values: only the gradient is held
    assert not torch.allclose(one_gradient, free_gradient, atol=1e-6, rtol=1e-4)
    assert model._last_attention._attnexp_hold_query is None  # nothing left set on the module


def test_permutation_moves_every_heads_cls_weights(tiny):
    from attnexp.analyses.jw.permutation import identity_permutations, permutation_output_changes, sample_permutations

    _, model, batch = tiny
    unchanged = permutation_output_changes(model, batch, identity_permutations(batch, 2))
    assert unchanged.abs().max() < 1e-6
    changes = permutation_output_changes(model, batch, sample_permutations(batch, 4, torch.Generator().manual_seed(0)))
    assert changes.shape == (3, 4) and changes[1].max() > 0  # the long sentence moves under a shuffle


@pytest.mark.parametrize("kind", ["bert", "distilbert", "roberta"])
def test_decoding_from_the_last_layer_gives_the_logits_of_the_full_rerun(kind, tmp_path):
    """Issue 35: a swapped last-layer [CLS] row changes nothing below the last layer, so decoding runs the last layer
    and the head alone, from the states `encode` kept; the same logits as re-running every layer, to float rounding,
    for the identity and a random permutation and an erasure step, on a padded batch (3 lengths, 3 layers deep); and the
    last layer run at [CLS] alone over the values `encode` kept (the default) gives them too."""
    from attnexp.analyses.jw.permutation import identity_permutations, sample_permutations
    from attnexp.models.hf.loading import load_pretrained

    folder = tiny_checkpoint(tmp_path, kind, seed=5)
    model = load_pretrained(str(folder), task="bc", n_classes=2)
    assert not model.full_rerun  # the layer stack was found
    ids = [model.tokenizer(t)["input_ids"] for t in TEXTS]
    batch = collate(pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}))
    with torch.no_grad():  # as the permutation and erasure tests run it
        output = model(batch)
    erased = output.attention.clone()
    erased[:, 1] = 0  # erase the first real token's weight, renormalise
    erased = erased / erased.sum(-1, keepdim=True)
    indices = [identity_permutations(batch, 2), sample_permutations(batch, 5, torch.Generator().manual_seed(1))]

    def decoded() -> list[torch.Tensor]:
        permuted = [model.decode_permuted(output.encoded, index, batch) for index in indices]
        return [*permuted, model.decode(output.encoded, erased, batch), model.decode(output.encoded, output.attention, batch)]

    kept = output.encoded.last_value  # the last layer's values: the last layer then runs at [CLS] alone
    heads = model.config.n_heads
    assert kept is not None and kept.shape == (3, heads, batch.tokens.shape[1], model.config.width // heads)
    fast = decoded()
    model.decode_query_alone = False  # the last layer over every position
    layer = decoded()
    model.full_rerun = True
    full = decoded()
    # equal up to float rounding: 1.5e-6 apart on AVX2 kernels (a 2-core AMD EPYC without AVX-512)
    for ours, whole_layer, reference in zip(fast, layer, full, strict=True):
        torch.testing.assert_close(ours, reference, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(whole_layer, reference, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fast[0], output.logits[:, None].expand(3, 2), atol=1e-6, rtol=1e-5)
    assert not torch.allclose(fast[1], fast[0][:, :1].expand(3, 5)) and not torch.allclose(fast[2], output.logits)


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_a_decoder_classifier_is_explained_at_its_last_token(kind, tmp_path):
    """Issue 36: a decoder-only classifier (Llama with grouped-query attention: 4 query heads on 2 key/value heads;
    GPT-2) on texts framed [BOS] ... [EOS]: the maps are the model's own eager attention per query head, causal;
    the logits are its head's at the last token (what its own pooling gives when it pools there); its own
    attention and the identity permutation decode back to them, and a swapped row moves them."""
    from transformers import AutoModelForSequenceClassification

    from attnexp.analyses.jw.permutation import identity_permutations, sample_permutations
    from attnexp.models.hf.data import framed_ids
    from attnexp.models.hf.loading import load_pretrained

    folder = tiny_checkpoint(tmp_path, kind, seed=4)
    model = load_pretrained(str(folder), task="bc", n_classes=2)
    assert model.config.causal and model.full_rerun == (kind == "gpt2")  # GPT-2 adds positions after its wte
    ids = framed_ids(model.tokenizer, TEXTS, None, 32)
    assert all(i[0] == model.tokenizer.bos_token_id and i[-1] == model.tokenizer.eos_token_id for i in ids)
    batch = collate(pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}))
    with torch.no_grad():
        output = model(batch)
    own = AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager", pad_token_id=0).eval()
    with torch.no_grad():  # pads (id 0) to the right of the last token, so its own pooling reads it there
        reference = own(input_ids=batch.tokens, attention_mask=batch.padding_mask.long(), output_attentions=True)
    torch.testing.assert_close(output.logits, reference.logits[:, 1] - reference.logits[:, 0], atol=1e-5, rtol=1e-5)
    maps, valid = output.encoded.maps, batch.padding_mask
    for layer, theirs in enumerate(reference.attentions):
        assert theirs.shape[1] == maps.shape[2] == (4 if kind == "llama" else 2)  # per query head
        torch.testing.assert_close(maps[:, layer], theirs * valid[:, None, None, :], atol=1e-6, rtol=1e-5)
    width = batch.tokens.shape[1]
    assert (maps * torch.ones(width, width).triu(1).bool()).abs().max() == 0  # row i: positions <= i only
    q = batch.lengths - 1
    torch.testing.assert_close(output.encoded.cls_rows, maps[torch.arange(3), -1, :, q])
    torch.testing.assert_close(model.decode(output.encoded, output.attention, batch), output.logits, atol=1e-6, rtol=1e-5)
    unchanged = model.decode_permuted(output.encoded, identity_permutations(batch, 2), batch)
    torch.testing.assert_close(unchanged, output.logits[:, None].expand(3, 2), atol=1e-6, rtol=1e-5)
    shuffled = model.decode_permuted(output.encoded, sample_permutations(batch, 4, torch.Generator().manual_seed(0)), batch)
    assert not torch.allclose(shuffled[1], output.logits[1].expand(4))
    if not model.full_rerun:  # Llama: from the last layer, as for the encoders
        fast = shuffled
        model.full_rerun = True
        full = model.decode_permuted(output.encoded, sample_permutations(batch, 4, torch.Generator().manual_seed(0)), batch)
        torch.testing.assert_close(fast, full, atol=1e-6, rtol=1e-5)


def test_saved_models_load_with_their_tokenizer(tiny, tmp_path):
    from attnexp.models.checkpoint import load_model
    from attnexp.models.hf.loading import save_hf_model

    folder, model, batch = tiny
    for finetuned in (True, False):
        path = tmp_path / f"model_{finetuned}.pt"
        save_hf_model(model, path, finetuned=finetuned)
        loaded = load_model(path)
        torch.testing.assert_close(loaded(batch).logits, model(batch).logits)
        assert loaded.tokenizer("a good film")["input_ids"] == batch.tokens[0, :5].tolist()
        assert loaded.config.checkpoint == str(folder) and loaded.blank_id == model.tokenizer.mask_token_id


def test_grid_instances_tokenized_with_pairs_packed(tiny):
    from attnexp.models.hf.data import hf_instances

    _, model, _ = tiny
    grid = pd.DataFrame(
        {
            "instance_id": ["d/1", "d/2", "d/3"],
            "split": ["train", "test", "test"],
            "tokens": [[2, 5, 3]] * 3,
            "label": [0, 1, 2],
            "length": [1, 1, 1],
            "question": [[5]] * 3,
            "rationale": [[1]] * 3,
        }
    )
    texts = pd.DataFrame(
        {"instance_id": ["d/3", "d/2", "d/1"], "text": ["good", "a very dull plot", "fine"], "question": ["x", "y", "z"]}
    )
    out, meta = hf_instances(grid, {"classes": ["a", "b", "c"], "options": {}}, texts, model.tokenizer, max_length=6)
    tok = model.tokenizer
    assert out["instance_id"].tolist() == ["d/1", "d/3", "d/2"]  # test re-sorted by the new length
    assert out["tokens"].iloc[1] == tok("good", "x")["input_ids"]  # [CLS] a [SEP] b [SEP]
    assert out["tokens"].map(len).max() == 6 and meta["tokenizer"]["truncated"] == 1
    assert "question" not in out and out["rationale"].map(len).sum() == 0
    assert meta["vocab"][tok.cls_token_id] == "[CLS]"


def test_missing_checkpoint_fails_config_validation_with_where_to_put_it(tmp_path):
    for checkpoint in (str(tmp_path / "no_such_model"), "nobody-here/no-such-model-anywhere"):
        with pytest.raises(ConfigError) as error:
            validated_config(hf={"models": {"mine": {"checkpoint": checkpoint}}, "datasets": ["syn_sentiment"]})
        message = str(error.value)
        assert "hf.models.mine" in message and "save_pretrained" in message and "Hugging Face cache" in message
    # without datasets the stage is off and nothing is checked
    validated_config(hf={"models": {"mine": {"checkpoint": str(tmp_path / "no_such_model")}}})


@pytest.mark.parametrize("fused", [True, False])
def test_hf_finetuning_follows_the_fused_adam_switch(tmp_path, fused):

    config = validated_config(hf={"models": {"mine": {"checkpoint": str(tmp_path)}}}, fused_adam=fused)
    assert hf_settings(config, "mine").fused_adam is fused


def test_a_post_ln_bert_keeps_the_gradient_only_form_and_exclude_special_drops_its_sep(tiny):
    """A&Z §4: on BERT-family (post-LN) models `grad` is well defined and stays the default; `az.exclude_special`
    drops [CLS] and the final [SEP] the model reads."""
    from attnexp.analyses.az import gradient_measure
    from attnexp.analyses.az.importance import input_gradients
    from attnexp.analyses.az.measures import correlations, reads_closing_marker

    _, model, batch = tiny
    measured = input_gradients(model, batch)
    assert set(measured) == {"grad", "grad_x_input", "grad_l2"} and not model.input_shift_invariant
    assert measured["grad"][batch.padding_mask].min() > 1e-6
    assert gradient_measure("auto", model.input_shift_invariant) == "grad"
    lengths = batch.lengths.tolist()
    rows = pd.DataFrame({"tokens": [t[:n] for t, n in zip(batch.tokens.tolist(), lengths, strict=True)], "length": lengths})
    assert reads_closing_marker(model, rows.assign(label=0, instance_id="a"))
    relevance = pd.DataFrame(
        {
            "instance_id": ["a", "b", "c"],
            "length": lengths,
            **{m: [[list(np.linspace(0, 1, n))] for n in lengths] for m in ("raw", "rollout", "flow")},
            "blankout": [list(np.linspace(1, 0, n)) for n in lengths],
        }
    )
    kept = correlations(relevance, "t", exclude_special=True, spearman="scipy", closing=True)
    assert kept["n"].tolist()[:3] == [n - 2 for n in lengths]  # [CLS] and [SEP] left out


def test_a_decoder_s_relevance_is_read_from_its_last_token_with_the_sink_mass_beside_it(tmp_path):
    """Issue 36: A&Z's raw, rollout and flow of a decoder come from q (its last token) and are causal, and the share
    of each row on the specials ([BOS] and the closing [EOS] it reads) is written beside them, per layer."""
    from attnexp.analyses.az.measures import relevance_and_importance
    from attnexp.models.hf.data import framed_ids
    from attnexp.models.hf.loading import load_pretrained

    model = load_pretrained(str(tiny_checkpoint(tmp_path, "llama", seed=6)), task="bc", n_classes=2)
    ids = framed_ids(model.tokenizer, TEXTS, None, 32)
    rows = pd.DataFrame({"tokens": ids, "label": [1, 0, 0], "instance_id": ["a", "b", "c"]})
    options = dict(batch_size=3, relevance_row="cls", rollout_residual=True, flow_solver="scipy", progress=lambda _: None)
    relevance = relevance_and_importance(model, rows, score="prob_gold", **options)
    batch = collate(rows)
    with torch.no_grad():
        maps = model(batch).encoded.maps.mean(2)  # heads averaged
    for i, row in enumerate(relevance.itertuples()):
        n = row.length
        q_row = maps[i, :, n - 1, :n]
        np.testing.assert_allclose(np.array([list(r) for r in row.raw]), (q_row / q_row.sum(-1, keepdim=True)).numpy(), atol=1e-6)
        for method in ("raw", "rollout", "flow"):
            values = np.array([list(r) for r in getattr(row, method)])
            sink = np.array(getattr(row, f"{method}_sink"))
            np.testing.assert_allclose(sink, (values[:, 0] + values[:, n - 1]) / values.sum(-1), atol=1e-9)
            assert ((sink > 0) & (sink < 1)).all()


def _write_gguf(path, lm, tokenizer, half: bool) -> None:
    """`lm` (a `LlamaForCausalLM`) as llama.cpp's converter writes it, with the gguf package's writer: the `llama`
    metadata and tensor names transformers' GGUF reader maps back, q/k rows in llama.cpp's rotary order, the
    tokenizer's pieces; matrices in F16 (`half`) or F32, norms in F32."""
    import gguf

    c = lm.config
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_context_length(c.max_position_embeddings)
    writer.add_embedding_length(c.hidden_size)
    writer.add_block_count(c.num_hidden_layers)
    writer.add_feed_forward_length(c.intermediate_size)
    writer.add_rope_dimension_count(c.head_dim)
    writer.add_head_count(c.num_attention_heads)
    writer.add_head_count_kv(c.num_key_value_heads)
    writer.add_layer_norm_rms_eps(c.rms_norm_eps)
    writer.add_rope_freq_base(float((getattr(c, "rope_parameters", None) or {}).get("rope_theta", 10000.0)))
    writer.add_vocab_size(c.vocab_size)
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores([0.0] * len(pieces))
    writer.add_token_types([3 if p in tokenizer.all_special_tokens else 1 for p in pieces])  # 3: control, 1: normal
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_unk_token_id(tokenizer.unk_token_id)

    def rotary_order(w, heads):  # llama.cpp's `permute` (convert_hf_to_gguf.py), undone by transformers' reader
        return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, c.num_hidden_layers)
    for key, value in lm.state_dict().items():
        base, suffix = key.rsplit(".", 1)
        name, weights = f"{names.get_name(base)}.{suffix}", value.numpy()
        if name.endswith("attn_q.weight"):
            weights = rotary_order(weights, c.num_attention_heads)
        elif name.endswith("attn_k.weight"):
            weights = rotary_order(weights, c.num_key_value_heads)
        writer.add_tensor(name, weights.astype(np.float16 if half and weights.ndim == 2 else np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.mark.parametrize("fmt", ["F32", "F16"])
def test_a_llama_written_to_gguf_loads_through_gguf_file_with_the_logits_it_came_from(tmp_path, fmt):
    """Issue 36: a tiny Llama (grouped-query attention) written to a GGUF file in a directory of its own (no config.json,
    no tokenizer files) loads through `gguf_file` (transformers' GGUF reader, dequantized to float32) with the logits
    of the model it came from, to the rounding of the format: exactly for F32, to float32 rounding of the
    F16-rounded model for F16. The classifier gets the same network under a new head (a GGUF file holds none); its
    tokenizer, config record and saved checkpoint follow the file."""
    from transformers import AutoModelForCausalLM, GgufConfig, LlamaForCausalLM

    from attnexp.models.hf.data import load_tokenizer
    from attnexp.models.hf.loading import checkpoint_dict, from_checkpoint, load_pretrained

    source = tiny_checkpoint(tmp_path / "hf", "llama", seed=3)
    torch.manual_seed(0)  # the causal LM's output layer (the checkpoint is a classifier)
    lm = LlamaForCausalLM.from_pretrained(source).eval()
    original = load_pretrained(str(source), task="bc", n_classes=2)
    folder = tmp_path / "gguf"
    folder.mkdir()
    _write_gguf(folder / "tiny.gguf", lm, original.tokenizer, half=fmt == "F16")
    reference = LlamaForCausalLM(lm.config).eval()  # the model as the format holds it
    rounded = {k: v.half().float() if fmt == "F16" and v.ndim == 2 else v for k, v in lm.state_dict().items()}
    reference.load_state_dict(rounded)
    ids = torch.tensor(framed_ids_of(original.tokenizer, TEXTS))
    mask = (ids != -1).long()
    ids = ids.clamp(min=0)

    options = dict(gguf_file="tiny.gguf", local_files_only=True, dtype=torch.float32)
    back = AutoModelForCausalLM.from_pretrained(str(folder), quantization_config=GgufConfig(dequantize=True), **options).eval()
    assert all(p.dtype == torch.float32 for p in back.parameters())
    with torch.no_grad():
        logits, expected, unrounded = (m(input_ids=ids, attention_mask=mask).logits for m in (back, reference, lm))
    torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
    if fmt == "F32":
        torch.testing.assert_close(logits, unrounded, rtol=0, atol=0)
    else:
        assert 0 < (logits - unrounded).abs().max() < 2e-2 * unrounded.abs().max()

    model = load_pretrained(str(folder), gguf_file="tiny.gguf", task="bc", n_classes=2, finetune=True, seed=0)
    assert model.config.gguf_file == "tiny.gguf" and model.config.causal and model.config.n_heads == 4
    assert all(p.dtype == torch.float32 for p in model.parameters())
    with torch.no_grad():
        hidden = model.model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        torch.testing.assert_close(hidden, reference.model(input_ids=ids, attention_mask=mask).last_hidden_state)
    tokenizer = load_tokenizer(str(folder), gguf_file="tiny.gguf")
    assert tokenizer.convert_ids_to_tokens(list(range(len(tokenizer)))) == original.tokenizer.convert_ids_to_tokens(
        list(range(len(original.tokenizer)))
    )
    rows = {"tokens": framed_ids_of(original.tokenizer, TEXTS, pad=False), "label": [1, 0, 0], "instance_id": ["a", "b", "c"]}
    batch = collate(pd.DataFrame(rows))
    rebuilt = from_checkpoint(checkpoint_dict(model, finetuned=True))  # fine-tuned: the weights from the file
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(batch).logits, model(batch).logits)
    as_given = from_checkpoint(checkpoint_dict(model, finetuned=False))  # used as given: read again from the GGUF file
    assert as_given.config.gguf_file == "tiny.gguf"
    with torch.no_grad():
        torch.testing.assert_close(as_given.model.model(input_ids=ids, attention_mask=mask).last_hidden_state, hidden)


def framed_ids_of(tokenizer, texts, pad: bool = True) -> list[list[int]]:
    """The texts' ids as the decoder runs read them (`framed_ids`); `pad`: right-padded with -1 to one length."""
    from attnexp.models.hf.data import framed_ids

    ids = framed_ids(tokenizer, texts, None, 32)
    width = max(map(len, ids))
    return [row + [-1] * (width - len(row)) for row in ids] if pad else ids


def test_a_missing_gguf_file_is_refused_at_config_validation_naming_its_key(tmp_path):
    """Issue 36: `hf.models.<name>.gguf_file` must name a file inside the checkpoint directory (or be an absolute path,
    with a local directory as checkpoint), checked before any job; a directory holding it needs no config.json, and
    the file's name reaches the job's settings as written."""
    folder = tmp_path / "llama-gguf"
    folder.mkdir()
    (folder / "present.gguf").write_bytes(b"GGUF")
    hf = lambda **model: {"models": {"mine": {"checkpoint": str(folder), **model}}, "datasets": ["syn_sentiment"]}  # noqa: E731
    config = validated_config(hf=hf(gguf_file="present.gguf"))
    assert hf_settings(config, "mine").gguf_file == "present.gguf"
    with pytest.raises(ConfigError, match="config.json"):  # without it, the directory is a save_pretrained one
        validated_config(hf=hf())
    assert validated_config(hf={**hf(), "datasets": []})["hf"]["models"]["mine"]["gguf_file"] is None  # the default
    validated_config(hf=hf(gguf_file=str(folder / "present.gguf")))
    for gguf_file, fix in (
        ("absent.gguf", "present.gguf"),
        (str(tmp_path / "elsewhere.gguf"), "existing .gguf file"),
    ):
        with pytest.raises(ConfigError) as error:
            validated_config(hf=hf(gguf_file=gguf_file))
        message = str(error.value)
        assert "hf.models.mine.gguf_file" in message and fix in message
    hub = {"checkpoint": "someone/llama", "gguf_file": str(folder / "present.gguf")}
    with pytest.raises(ConfigError) as error:  # an absolute file with a hub name: transformers cannot join the two
        validated_config(hf={"models": {"mine": hub}, "datasets": ["syn_sentiment"]})
    assert "hf.models.mine.gguf_file" in str(error.value) and "local directory" in str(error.value)


def test_erasure_masks_the_keys_of_every_head_and_renormalises_over_the_rest(tiny):
    """Issue 37: a multi-head model erases in the masked-key semantics (every head's row q loses the erased keys and
    is renormalised over all it keeps, [CLS]/[SEP] included), and is not `swappable` (no single attention vector)."""
    from attnexp.analyses.erasure.instances import swappable

    _, model, batch = tiny
    assert not swappable(model)
    with torch.no_grad():
        output = model(batch)
        nothing = torch.zeros(3, 1, batch.tokens.shape[1], dtype=torch.bool)
        torch.testing.assert_close(model.decode_erased(output.encoded, nothing, batch)[:, 0], output.logits, atol=1e-5, rtol=1e-5)
        seen = []
        decode_rows = model._decode_rows
        model._decode_rows = lambda encoded, rows, batch: seen.append(rows) or decode_rows(encoded, rows, batch)
        erased = nothing.clone()
        erased[:, 0, 1] = True  # the first real token
        changed = model.decode_erased(output.encoded, erased, batch)[:, 0]
    (rows,) = seen
    own = output.encoded.cls_rows
    expected = own.clone()
    expected[:, :, 1] = 0
    expected = expected / expected.sum(-1, keepdim=True)  # specials keep their share of the rest
    torch.testing.assert_close(rows[:, 0], expected)
    assert (rows[:, 0, :, 0] > own[:, :, 0]).all()  # [CLS]'s weight grows with the renormalisation
    assert not torch.allclose(changed, output.logits)
