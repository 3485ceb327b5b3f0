"""The public Python API (attnexp.api): one raw sentence explained exactly as the pipeline explains a test
instance, A&Z views on Transformer-family models only, tokenizer adapters, lazy public names, and the example."""

import re
import subprocess
import sys
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch

import attnexp
from attnexp import api
from attnexp.analyses.jw.instances import importance_table
from attnexp.analyses.jw.kendall import PAIRS
from attnexp.data.preprocess import split_frame
from attnexp.data.vocab import UNK
from attnexp.models.train import build_model
from attnexp.models.transformer import build_transformer
from tests.conftest import REPO


@pytest.fixture(scope="module")
def settings():
    jw, az = api.default_settings()
    return replace(jw, permutations=8, ig_steps=4, adversary=replace(jw.adversary, steps=5)), az


def _text(meta: dict, tokens) -> str:
    return " ".join(meta["vocab"][t] for t in tokens[1:-1])


def test_a_raw_sentence_gets_the_pipelines_numbers_for_the_same_instance(planted_sentiment, settings):
    instances, meta = planted_sentiment
    model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0).eval()
    row = split_frame(instances, "test").iloc[[3]]
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    exp = api.explain(model, tokenizer, _text(meta, row["tokens"].iloc[0]), classes=meta["classes"], settings=settings[0])
    reference = importance_table(model, row, replace(settings[0], batch_size=1)).iloc[0]
    assert exp.tokens == list(row["tokens"].iloc[0]) and len(exp.words) == row["length"].iloc[0]
    assert exp.predicted == reference["predicted"]
    for name in ("attention", "gradient", "loo", "ig"):
        np.testing.assert_allclose(exp.measure(name), reference[name], rtol=1e-5, atol=1e-7)
    assert set(exp.tau) == set(PAIRS) and all(-1 <= tau <= 1 for tau, _ in exp.tau.values())
    assert exp.permutation_changes.shape == (8,) and exp.adversarial_attention.sum() == pytest.approx(1.0, abs=1e-5)
    assert exp.rollout is None and exp.flow is None  # no per-layer maps in the J&W classifier
    assert list(exp.to_frame().columns) == ["word", "attention", "gradient", "loo", "ig", "adversarial"]


def test_a_loaded_run_computes_exactly_what_the_analyses_job_computes(planted_sentiment, tmp_path):
    """`load_run` applies the schema's default `Compute` (device, padded BiLSTM), the one the analyses job builds from
    the default config and applies to the model it loads: the same function, bit for bit (the packed BiLSTM equals it
    only up to float rounding), so `explain` on a loaded run gets the job's numbers; `compute=` overrides it."""
    from attnexp import paths
    from attnexp.data.batching import sequential_batches
    from attnexp.io import write_json
    from attnexp.models.checkpoint import load_model, write_run
    from attnexp.models.encoders import LSTMEncoder
    from attnexp.models.settings import Compute
    from attnexp.models.train import fit
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import AnalyzeSettings, default_config, resolved
    from tests.factories import train_settings

    instances, meta = planted_sentiment
    files = {k: tmp_path / v for k, v in paths.model_files("syn_sentiment", "lstm", "tanh", 0).items()}
    model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0)
    trained = fit(model, instances, train_settings(1, 64), progress=lambda line: None)
    write_run(files, trained.model, trained.history, {"dataset": "syn_sentiment"}, trained.test_metrics)
    write_json(tmp_path / paths.preprocessed_files("syn_sentiment")["meta"], meta)

    run = api.load_run(files["model"].parent)
    analysis = resolved(
        AnalyzeSettings.from_plan(Plan.from_config(default_config()), "syn_sentiment", 0, "lstm", "tanh").analysis
    )
    job = Compute(analysis.device, analysis.padded_lstm).apply(load_model(files["model"]))  # as run_analyze loads it
    packed = api.load_run(files["model"].parent, compute=Compute("cpu", padded_lstm=False)).model

    def padded(m):
        return [e.padded for e in m.modules() if isinstance(e, LSTMEncoder)]

    schema_default = default_config()["padded_lstm"]
    assert api.default_compute() == Compute(default_config()["device"], schema_default)
    assert padded(run.model) == padded(job) == [schema_default] and padded(packed) == [False]
    assert schema_default is True  # the default the API used to miss (it ran BiLSTMs packed)
    batch = sequential_batches(split_frame(instances, "test"), 64)[0]
    with torch.no_grad():
        ours, theirs, other = run.model(batch.to(analysis.device)), job(batch.to(analysis.device)), packed(batch)
    assert torch.equal(ours.logits, theirs.logits) and torch.equal(ours.attention, theirs.attention)
    assert not torch.equal(other.logits, theirs.logits.cpu())  # packed: equal up to float rounding only
    torch.testing.assert_close(other.logits, theirs.logits.cpu(), atol=1e-5, rtol=1e-5)


def test_transformers_get_raw_rollout_and_flow_whose_last_raw_row_is_the_attention(planted_nli, settings):
    instances, meta = planted_nli
    model = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="tiedcls").eval()
    row = split_frame(instances, "test").iloc[0]
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    exp = api.explain(model, tokenizer, _text(meta, row["tokens"]), _text(meta, row["question"]), settings=settings[0])
    n = len(row["tokens"]) - 1  # [CLS] + the words: the Transformer does not read the closing marker
    for name in ("raw", "rollout", "flow"):
        values = getattr(exp, name)
        assert values.shape == (2, n) and np.allclose(values.sum(axis=1), 1.0)
    np.testing.assert_allclose(exp.raw[-1][1:], exp.attention, rtol=1e-5, atol=1e-7)  # the [CLS] row is `attend`
    assert exp.blankout.shape == (n,) and exp.input_gradient.shape == (n,)
    assert exp.measure("flow").shape == (n - 1,)


class WordPieceLike:
    """The two methods of a Hugging Face tokenizer the API uses ([CLS] = 101, [SEP] = 102, [UNK] = 100)."""

    unk_token_id = 100
    words = {"the": 5, "film": 6, "is": 7, "fine": 8}

    def __call__(self, text, pair=None, truncation=True, max_length=None):
        ids = [101, *(self.words.get(w, 100) for w in text.split()), 102]
        return {"input_ids": ids + ([*(self.words.get(w, 100) for w in pair.split()), 102] if pair else [])}

    def convert_ids_to_tokens(self, ids):
        names = {v: k for k, v in self.words.items()} | {100: "[UNK]", 101: "[CLS]", 102: "[SEP]"}
        return [names[i] for i in ids]


def test_a_hugging_face_tokenizer_is_wrapped_and_its_unknown_token_is_the_blank(planted_sentiment, settings):
    _, meta = planted_sentiment
    tokenizer = api.as_tokenizer(WordPieceLike())
    assert isinstance(tokenizer, api.HuggingFaceTokenizer) and tokenizer.blank_id == 100
    batch = api.encode_text(tokenizer, "the film is odd")
    assert batch.tokens.tolist() == [[101, 5, 6, 7, 100, 102]] and batch.real_mask.sum() == 4
    assert api.unknown_share(tokenizer, tokenizer.encode("the film is odd")) == 0.25  # "odd": [UNK]
    pair = api.encode_text(tokenizer, "the film", "is fine")  # packed, as the hf family reads pairs
    assert pair.tokens.tolist() == [[101, 5, 6, 102, 7, 8, 102]] and pair.question is None
    vocab = {**meta, "vocab": ["w"] * 110}
    model = build_transformer(vocab, n_layers=2, n_heads=2, width=16, dropout=0.0, attention="tiedcls").eval()
    exp = api.explain(model, tokenizer, "the film is fine", settings=settings[0], with_adversary=False)
    assert exp.words == ["the", "film", "is", "fine"] and exp.positions[0] == "[CLS]" and exp.unknown == 0.0
    with torch.no_grad():  # blank-out replaced each position by id 100, not our [UNK] (1)
        base = model.distribution(model(api.encode_text(tokenizer, "the film is fine")).logits)[0, exp.predicted]
        blanked = model.distribution(model(api.encode_text(tokenizer, "the [UNK] is fine")).logits)[0, exp.predicted]
    assert exp.blankout[2] == pytest.approx(abs(float(base - blanked)), abs=1e-6)
    with pytest.raises(TypeError, match="AttentionModel"):
        api.as_attention_model(torch.nn.Linear(2, 2))


def test_a_text_of_unknown_words_warns_and_shows_its_share_of_unknown_tokens(planted_sentiment, settings):
    """Issue 33: a text out of the model's vocabulary is no longer explained silently: `exp.unknown` is the share of
    its tokens mapped to [UNK], shown in the summary (and the notebook view); from `UNKNOWN_WARNING` on, a warning."""
    instances, meta = planted_sentiment
    model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0).eval()
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    kwargs = dict(classes=meta["classes"], settings=settings[0], with_permutation=False, with_adversary=False)
    with pytest.warns(UserWarning, match=r"'zzqx qqzv wwxy': 100% of its tokens are unknown.*\[UNK\].*larger vocabulary"):
        exp = api.explain(model, tokenizer, "zzqx qqzv wwxy", with_erasure=False, **kwargs)
    assert exp.unknown == 1.0 and exp.tokens[1:-1] == [UNK] * 3
    assert exp.summary.endswith(", 100% of the tokens unknown") and "cannot tell these words apart" in exp._repr_html_()
    text = _text(meta, split_frame(instances, "test")["tokens"].iloc[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exp = api.explain(model, tokenizer, text, **kwargs)
        few = api.explain(model, tokenizer, [text, f"{text} zzqx"], with_erasure=False, **kwargs)  # below the threshold
    assert exp.unknown == 0.0 and "unknown" not in exp.summary and "cannot tell" not in exp._repr_html_()
    assert few[0].unknown == 0.0 and few[1].unknown == pytest.approx(1 / (len(text.split()) + 1))
    assert api.HuggingFaceTokenizer(WordPieceLike()).unknown_id == 100
    assert api.HuggingFaceTokenizer(type("NoUnknown", (WordPieceLike,), {"unk_token_id": None})()).unknown_id is None


def test_public_names_load_lazily():
    assert set(attnexp.__all__) == set(api.__all__) and attnexp.explain is api.explain
    code = "import sys, attnexp.paths, attnexp; print('attnexp.api' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO / "src")
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.slow  # a real command (a whole-grid estimate, a fresh venv, a dry run, the example): not the edit loop
def test_the_example_trains_loads_explains_and_draws_offline(tmp_path):
    command = [sys.executable, str(REPO / "examples/explain_sentence.py"), "--out", str(tmp_path), "--permutations", "10"]
    out = subprocess.run([*command, "--adversary-steps", "20"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Kendall tau (p): attn_grad") == 2 and "over 10 permutations" in out.stdout
    assert "A&Z: raw / rollout / flow over 2 layers" in out.stdout
    for name in ("lstm-tanh", "transformer-tiedcls"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5000 and (tmp_path / f"{name}.pdf").is_file()


def test_a_hugging_face_model_and_tokenizer_are_explained_as_given(tmp_path, settings):
    """With the `hf` model family (attnexp.models.hf): a raw transformers model and tokenizer, pairs packed, no
    adversary."""
    import transformers  # here: importing transformers would slow down collecting every other test of this file

    from tests.hf_fixtures import tiny_checkpoint

    folder = tiny_checkpoint(tmp_path, "distilbert", num_labels=3, seed=3)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    exp = api.explain(model, tokenizer, "a good film", "not funny", settings=settings[0], az_settings=settings[1])
    assert exp.tokens == tokenizer("a good film", "not funny")["input_ids"] and "[SEP]" in exp.words
    assert len(exp.probabilities) == 3 and exp.adversarial_attention is None
    assert exp.flow.shape == exp.rollout.shape == (model.config.num_hidden_layers, len(exp.tokens))
    assert set(exp.tau) == set(PAIRS)


def test_a_hugging_face_model_s_own_labels_name_its_classes(tmp_path, settings):
    """Issue 35: a checkpoint saved with `id2label` is explained with its class names (`target="positive"` works);
    transformers' default LABEL_i names fall back to the indices."""
    import transformers

    from tests.hf_fixtures import tiny_checkpoint

    folder = tiny_checkpoint(tmp_path, "bert", seed=1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    kwargs = dict(settings=settings[0], az_settings=settings[1], with_permutation=False, with_adversary=False)
    default = transformers.AutoModelForSequenceClassification.from_pretrained(folder)
    assert api.explain(default, tokenizer, "a good film", with_erasure=False, **kwargs).classes == ["0", "1"]
    named = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1}
    )
    exp = api.explain(named, tokenizer, "a good film", target="positive", with_erasure=False, **kwargs)
    assert exp.classes == ["negative", "positive"] and exp.target == 1
    assert exp.label == exp.classes[exp.predicted]


def test_target_explains_another_class_than_the_predicted_one(planted_nli, settings):
    """`target=` (an index or a class name) moves the gradient and IG to that class's probability; attention and
    LOO stay; A&Z's blank-out follows it too."""
    from attnexp.analyses.jw.importance import gradient_importance

    instances, meta = planted_nli
    model = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="tiedcls").eval()
    row = split_frame(instances, "test").iloc[0]
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    text, question = _text(meta, row["tokens"]), _text(meta, row["question"])
    kwargs = dict(classes=meta["classes"], settings=settings[0], az_settings=settings[1])
    kwargs |= dict(with_permutation=False, with_adversary=False)
    own = api.explain(model, tokenizer, text, question, **kwargs)
    other = (own.predicted + 1) % len(meta["classes"])
    by_index = api.explain(model, tokenizer, text, question, target=other, **kwargs)
    by_name = api.explain(model, tokenizer, text, question, target=meta["classes"][other], **kwargs)
    assert own.target == own.predicted and by_name.target == other
    assert by_index.target == other and by_index.predicted == own.predicted
    assert f"explaining {meta['classes'][other]}" in by_index.summary and "explaining" not in own.summary
    batch = api.encode_text(tokenizer, text, question)
    expected = gradient_importance(model, batch, torch.tensor([other]))[0, 1 : 1 + len(own.words)]
    np.testing.assert_allclose(by_index.gradient, expected.numpy(), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(by_name.gradient, by_index.gradient)
    assert not np.allclose(by_index.gradient, own.gradient) and not np.allclose(by_index.ig, own.ig)
    assert not np.allclose(by_index.blankout, own.blankout)
    np.testing.assert_allclose(by_index.attention, own.attention)
    np.testing.assert_allclose(by_index.loo, own.loo)
    with pytest.raises(ValueError, match="not a class"):
        api.explain(model, tokenizer, text, question, target="nonsense", **kwargs)


def test_a_list_of_texts_is_explained_in_length_sorted_chunks_like_each_text_alone(
    planted_sentiment, planted_nli, settings, monkeypatch
):
    """Issue 33: a list is explained in chunks of similar lengths (at most `batch_size` texts, the longest at most
    `LENGTH_SPREAD` times the shortest), each one batch, and given back in its order; each text gets the numbers it
    gets alone (the erasure tests' too, but for the random ranking, seeded by the instance id)."""
    instances, meta = planted_sentiment
    model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0).eval()
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    test = split_frame(instances, "test").drop_duplicates("length").sort_values("length")  # lengths 5 .. 20: padded
    picked = test.iloc[[-1, 0, -2, 1, 6]]  # longest first: chunking reorders them
    texts = [_text(meta, tokens) for tokens in picked["tokens"]]
    assert len({len(t.split()) for t in texts}) == 5
    chunks, importance = [], api.importance_table

    def recorded(m, rows, *args, **kwargs):  # the lengths of each chunk's texts, as `explain` batches them
        chunks.append(list(rows["length"]))
        return importance(m, rows, *args, **kwargs)

    monkeypatch.setattr(api, "importance_table", recorded)
    together = api.explain(model, tokenizer, texts, settings=replace(settings[0], batch_size=2), with_adversary=False)
    assert isinstance(together, list) and [e.text for e in together] == texts
    assert [n for chunk in chunks for n in chunk] == sorted(picked["length"])  # shortest first, each text once
    assert max(map(len, chunks)) == 2 and all(c[-1] + 2 <= api.LENGTH_SPREAD * (c[0] + 2) for c in chunks)
    monkeypatch.undo()
    for text, batched in zip(texts, together, strict=True):
        alone = api.explain(model, tokenizer, text, settings=settings[0], with_adversary=False)
        assert batched.words == alone.words and batched.predicted == alone.predicted
        for name in ("attention", "gradient", "loo", "ig"):
            np.testing.assert_allclose(batched.measure(name), alone.measure(name), rtol=1e-4, atol=1e-7)
        assert batched.tau.keys() == alone.tau.keys() and batched.permutation_changes.shape == (8,)
        ours, theirs = (e.erasure_input[e.erasure_input["ranking"] != "random"] for e in (batched, alone))
        assert list(ours["ranking"]) == list(theirs["ranking"])
        for column in ("comprehensiveness", "sufficiency"):
            np.testing.assert_allclose(ours[column], theirs[column], rtol=1e-4, atol=1e-6)
        ours, theirs = (e.erasure_attention[e.erasure_attention["ranking"] != "random"] for e in (batched, alone))
        np.testing.assert_allclose(ours["first_flip_fraction"], theirs["first_flip_fraction"])
    instances, meta = planted_nli  # A&Z views of a Transformer, with a question per text
    model = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="tiedcls").eval()
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    rows = split_frame(instances, "test").iloc[:2]
    texts, questions = [_text(meta, t) for t in rows["tokens"]], [_text(meta, q) for q in rows["question"]]
    kwargs = dict(settings=settings[0], az_settings=settings[1], with_permutation=False, with_adversary=False)
    together = api.explain(model, tokenizer, texts, questions, target=[0, 1], **kwargs)
    for text, question, target, batched in zip(texts, questions, [0, 1], together, strict=True):
        alone = api.explain(model, tokenizer, text, question, target=target, **kwargs)
        assert batched.target == target
        for name in ("flow", "rollout", "raw", "blankout", "gradient"):
            np.testing.assert_allclose(getattr(batched, name), getattr(alone, name), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="1 questions for 2 texts"):
        api.explain(model, tokenizer, texts, [questions[0]], **kwargs)


def test_an_explanation_shows_as_html_in_a_notebook(planted_sentiment, settings):
    instances, meta = planted_sentiment
    model = build_model(meta, "average", "tanh", embedding_dim=12, hidden_size=8, seed=0).eval()
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    text = _text(meta, split_frame(instances, "test")["tokens"].iloc[0]) + " <b>&"
    exp = api.explain(model, tokenizer, text, classes=meta["classes"], settings=settings[0], with_adversary=False)
    page = exp._repr_html_()
    assert page.count("<tr>") == len(exp.measures) and page.count('<span title="') == len(exp.measures) * len(exp.words)
    assert "&lt;b&gt;" in page and "&amp;" in page and "<b>&" not in page  # words escaped
    assert html_text(exp.summary) in page and f"predicted {exp.label}" in page
    colours = {c for c in re.findall(r"background:(#[0-9a-f]{6})", page)}
    assert len(colours) > 3  # shaded, not one colour


def html_text(text: str) -> str:
    import html

    return html.escape(text)


def test_a_raw_sentence_gets_the_pipelines_erasure_numbers(planted_sentiment, planted_nli, settings):
    from attnexp.analyses.erasure.instances import erasure_tables
    from attnexp.pipeline.settings import default_config, erasure_settings

    instances, meta = planted_sentiment
    model = build_model(meta, "lstm", "tanh", embedding_dim=12, hidden_size=8, seed=0).eval()
    row = split_frame(instances, "test").iloc[[3]]
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    text = _text(meta, row["tokens"].iloc[0])
    exp = api.explain(model, tokenizer, text, settings=settings[0], with_permutation=False, with_adversary=False, seed=3)
    importance = importance_table(model, row, replace(settings[0], batch_size=1))
    row = row.assign(instance_id="input", rationale=[[]])  # the API's instance id seeds the random ranking
    importance["instance_id"] = "input"
    ours = importance[["instance_id", "attention", "gradient", "loo", "ig"]]
    attention, inputs = erasure_tables(model, row, ours, erasure_settings(default_config()), seed=3, batch_size=1, progress=False)
    np.testing.assert_allclose(exp.erasure_input["comprehensiveness"], inputs["comprehensiveness"], atol=1e-6)
    np.testing.assert_allclose(exp.erasure_attention["first_flip_fraction"], attention["first_flip_fraction"])
    assert list(exp.aopc["ranking"]) == [
        "attention",
        "gradient",
        "loo",
        "ig",
        "random",
        "attention_gradient",
        "attention_x_gradient",
    ]

    instances, meta = planted_nli  # a Transformer adds the A&Z rankings (raw, rollout, flow, blank-out, gradient)
    transformer = build_transformer(meta, n_layers=2, n_heads=2, width=16, dropout=0.0, max_length=64, attention="tiedcls")
    row = split_frame(instances, "test").iloc[0]
    tokenizer = api.VocabularyTokenizer(meta["vocab"], "whitespace")
    question = _text(meta, row["question"])
    exp = api.explain(
        transformer.eval(), tokenizer, _text(meta, row["tokens"]), question, settings=settings[0], with_adversary=False
    )
    assert {"raw", "rollout", "flow", "blankout", "grad_x_input"} <= set(exp.erasure_input["ranking"])  # auto: its measure
    assert (exp.erasure_input["ranking"] == "random").sum() == 5  # one random ranking, five bins
    assert exp.erasure_attention["ranking"].is_unique
