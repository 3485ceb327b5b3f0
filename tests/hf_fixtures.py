"""Tiny randomly initialised BERT / DistilBERT / RoBERTa sequence classifiers with a WordPiece tokenizer, and Llama
(grouped-query) / GPT-2 ones with a word-level decoder tokenizer, saved locally
with save_pretrained (no download): what the Hugging Face tests load as a "checkpoint"."""

from pathlib import Path

WORDS = (
    "the a an film movie plot acting is was and but not very good bad great boring funny moving dull "
    "fine story cast it this that of to with qqq , . ! ?"
).split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def write_vocab(folder: Path) -> Path:
    pieces = SPECIAL + WORDS + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
    path = folder / "vocab.txt"
    path.write_text("\n".join(dict.fromkeys(pieces)) + "\n")
    return path


def wordpiece_tokenizer(folder: Path):
    """A BERT WordPiece tokenizer over `write_vocab`'s pieces. (transformers 5's `BertTokenizerFast(vocab_file=...)`
    keeps only the specials, so every word became [UNK]: built from the `tokenizers` model instead.)"""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    core = BertWordPieceTokenizer(str(write_vocab(folder)), lowercase=True)
    names = dict(unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
    return BertTokenizerFast(tokenizer_object=core._tokenizer, do_lower_case=True, **names)


DECODER_SPECIAL = ["<pad>", "<unk>", "<s>", "</s>"]


def decoder_tokenizer(bos: bool):
    """A word-level tokenizer as decoders have them: no [CLS]/[SEP] framing, no pad token; `bos`: it prepends <s>
    to every text (Llama's), else nothing (GPT-2's)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    words = DECODER_SPECIAL + list(dict.fromkeys(WORDS))
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if bos:
        core.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 2)])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def _saved(folder: Path, config, tokenizer, seed: int, head: str = "AutoModelForSequenceClassification") -> Path:
    import torch
    import transformers

    torch.manual_seed(seed)
    getattr(transformers, head).from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _sizes(vocab_size: int, num_labels: int) -> dict:
    """The tiny models' shared sizes (BERT-style names): 2 layers, width 16, weights drawn with std 0.5."""
    return dict(
        vocab_size=vocab_size,
        hidden_size=16,
        num_hidden_layers=2,
        intermediate_size=32,
        num_labels=num_labels,
        initializer_range=0.5,
    )


def tiny_decoder_checkpoint(folder: Path, kind: str = "llama", num_labels: int = 2, seed: int = 0) -> Path:
    """A 2-layer decoder-only classifier and its tokenizer in `folder`: `llama` with grouped-query attention (4 query
    heads, 2 key/value heads), or `gpt2` (2 heads); weights drawn with std 0.5, as `tiny_checkpoint`."""
    from transformers import GPT2Config, LlamaConfig

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = decoder_tokenizer(bos=kind == "llama")
    ids = dict(bos_token_id=2, eos_token_id=3, pad_token_id=None)
    sizes = _sizes(len(tokenizer), num_labels)
    if kind == "llama":
        config = LlamaConfig(**sizes, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=130, **ids)
    else:  # GPT-2's own names for the same sizes
        config = GPT2Config(
            vocab_size=sizes["vocab_size"], n_embd=16, n_layer=2, n_head=2, n_positions=130, num_labels=num_labels, **ids
        )
        config.initializer_range = 0.5
    return _saved(folder, config, tokenizer, seed)


def tiny_checkpoint(folder: Path, kind: str = "distilbert", num_labels: int = 2, seed: int = 0) -> Path:
    """A 2-layer, 2-head, width-16 `kind` ("bert", "distilbert" or "roberta"; "llama" and "gpt2": decoders, see
    `tiny_decoder_checkpoint`) classifier and its tokenizer in `folder`; weights drawn with std 0.5 (not 0.02) so that
    attention is far from uniform and outputs differ between inputs."""
    from transformers import BertConfig, DistilBertConfig, RobertaConfig

    if kind in ("llama", "gpt2"):
        return tiny_decoder_checkpoint(folder, kind, num_labels, seed)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = wordpiece_tokenizer(folder)
    sizes = {**_sizes(len(tokenizer), num_labels), "num_attention_heads": 2}
    if kind == "bert":
        config = BertConfig(**sizes, max_position_embeddings=130)
    elif kind == "roberta":  # the same word-piece vocabulary; [PAD] (id 0) as its padding index
        specials = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.cls_token_id)
        config = RobertaConfig(
            **sizes, max_position_embeddings=132, eos_token_id=tokenizer.sep_token_id, type_vocab_size=1, **specials
        )
    else:
        config = DistilBertConfig(
            vocab_size=sizes["vocab_size"], dim=16, n_layers=2, n_heads=2, hidden_dim=32, max_position_embeddings=130,
            num_labels=num_labels, initializer_range=0.5,
        )  # fmt: skip
    return _saved(folder, config, tokenizer, seed)


def tiny_lm_checkpoint(folder: Path, kind: str = "llama", seed: int = 0) -> Path:
    """A 2-layer language model and its tokenizer in `folder`, for the prompted kinds: a causal `llama` (grouped-query
    heads) or `gpt2`, or a masked LM `bert` (`BertForMaskedLM`, WordPiece); the classifiers' sizes and std 0.5."""
    from transformers import BertConfig, GPT2Config, LlamaConfig

    folder.mkdir(parents=True, exist_ok=True)
    if kind == "bert":
        tokenizer = wordpiece_tokenizer(folder)
        sizes = {**_sizes(len(tokenizer), 2), "num_attention_heads": 2}
        return _saved(folder, BertConfig(**sizes, max_position_embeddings=130), tokenizer, seed, "AutoModelForMaskedLM")
    tokenizer = decoder_tokenizer(bos=kind == "llama")
    ids = dict(bos_token_id=2, eos_token_id=3, pad_token_id=None)
    sizes = _sizes(len(tokenizer), 2)
    if kind == "llama":
        config = LlamaConfig(**sizes, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=130, **ids)
    else:
        config = GPT2Config(vocab_size=sizes["vocab_size"], n_embd=16, n_layer=2, n_head=2, n_positions=130, **ids)
        config.initializer_range = 0.5
    return _saved(folder, config, tokenizer, seed, "AutoModelForCausalLM")
