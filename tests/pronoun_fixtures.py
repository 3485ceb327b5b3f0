"""Tiny randomly initialised language models whose tokenizers know the words of A&Z's pronoun examples, saved with
save_pretrained (no download): a masked `bert` (BertForMaskedLM, WordPiece), a causal `llama` (grouped-query heads,
words split at spaces and punctuation, <s> first) and a causal `gpt2` whose byte-level tokenizer folds the leading
space into the word ("Ġher"), with the bare "her" / "his" a different token, as GPT-2's own vocabulary has them."""

from pathlib import Path

WORDS = "The author talked to Sara about his her book . Mary convinced John of love a".split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def bert_tokenizer(folder: Path):
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = SPECIAL + [w.lower() for w in WORDS] + list(letters) + [f"##{c}" for c in letters]
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(dict.fromkeys(pieces)) + "\n")
    core = BertWordPieceTokenizer(str(vocab), lowercase=True)
    names = dict(unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
    return BertTokenizerFast(tokenizer_object=core._tokenizer, do_lower_case=True, **names)


def llama_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", "<s>", "</s>", *dict.fromkeys(WORDS)]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 2)])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def gpt2_tokenizer():
    """Byte-level words: "The", "Ġauthor", ...; the candidates with (" her": "Ġher") and without a leading space."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    spaced = [w if i in (0, 10) or w == "." else f"Ġ{w}" for i, w in enumerate(WORDS)]
    words = ["<|endoftext|>", "<unk>", "his", "her", *dict.fromkeys(spaced)]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    end = "<|endoftext|>"
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=end, eos_token=end, unk_token="<unk>")


def tiny_pronoun_lm(folder: Path, kind: str = "bert", layers: int = 2, seed: int = 0) -> Path:
    """A `layers`-layer, width-16 `kind` LM ("bert": masked; "llama" with 4 query and 2 key/value heads, "gpt2" with
    2 heads: causal) and its tokenizer in `folder`; weights drawn with std 0.5, so attention is far from uniform."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    if kind == "bert":
        tokenizer = bert_tokenizer(folder)
        config = BertConfig(
            vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=64, initializer_range=0.5,
        )  # fmt: skip
        model = BertForMaskedLM(config)
    elif kind == "llama":
        tokenizer = llama_tokenizer()
        config = LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=layers,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, initializer_range=0.5,
            bos_token_id=2, eos_token_id=3, pad_token_id=None,
        )  # fmt: skip
        model = LlamaForCausalLM(config)
    elif kind == "gpt2":
        tokenizer = gpt2_tokenizer()
        config = GPT2Config(
            vocab_size=len(tokenizer), n_embd=16, n_layer=layers, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0
        )
        config.initializer_range = 0.5
        model = GPT2LMHeadModel(config)
    else:
        raise ValueError(f"unknown kind {kind!r}; choose bert, llama or gpt2")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
