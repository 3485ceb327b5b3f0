"""The Hugging Face family: any transformers model as an `AttentionModel`, one concept a module.

- `checkpoints`: can a configured checkpoint (directory, cached hub name, GGUF file) be loaded offline, and is its
  kind's prompt right (torch-free: the config check runs it before any job);
- `architectures`: what an architecture is and serves, from its config (decoder-only, sizes, last-layer decoding);
- `attention`: the registered eager attention function, per query head (grouped-query heads repeated), which swaps
  the rows at the explained position and records the layers;
- `classifier`: `HFClassifier`, a sequence classifier (encoders explained at [CLS], decoders at their last token);
- `prompts` and `prompted`: a causal or masked LM with a template and a verbalizer (`HFPrompted`);
- `loading`: checkpoints in and out of the workflow's run files;
- `data`: a dataset re-tokenized by a model's own tokenizer.
"""
