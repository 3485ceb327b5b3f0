"""How models compute and are trained: how a model computes once built or loaded (`Compute`), the settings of
`models.train.fit` and of one Hugging Face model, as plain frozen dataclasses without torch, so that the workflow can
build them when it plans the jobs (`attnexp.pipeline.settings` fills them from the validated config; the schema owns
every default)."""

from dataclasses import dataclass

# J&W §5: Adam (amsgrad), learning rate 1e-3, weight decay 1e-5 (none on the attention); not configurable for
# J&W and W&P runs (the A&Z Transformer: `az.train`)
JW_LEARNING_RATE = 1e-3
JW_WEIGHT_DECAY = 1e-5


@dataclass(frozen=True)
class Compute:
    """How a model computes, whatever computes with it (the top-level config keys of the same names): on `device`
    (as configured: "auto", "cpu", "cuda", "cuda:N"; resolved where it is applied, `models.device.resolve_device`) and,
    with `padded_lstm`, its BiLSTMs over the padded batch (false: torch's packed sequences; equal up to float rounding,
    ~1e-7). `apply` is the one way it reaches a model: training (`FitSettings.compute`), the analyses jobs and
    `attnexp.api.load_run` (the schema's defaults) all call it."""

    device: str
    padded_lstm: bool

    def apply(self, model):
        """`model` moved to the resolved device with every BiLSTM encoder switched to `padded_lstm`; returns it."""
        from attnexp.models.device import resolve_device
        from attnexp.models.encoders import set_padded_lstm

        return set_padded_lstm(model.to(resolve_device(str(self.device))), self.padded_lstm)


@dataclass(frozen=True)
class FitSettings:
    """How one model is trained. J&W and W&P runs take `epochs` and `batch_size` from the dataset (registry
    values, overridden under `hyperparameters.<dataset>`), the Transformer from `az.train`; `select_on` is
    `model_selection.split` (W&P: `wp.select_on`), `deterministic` is `seeding.deterministic`, `device` the
    resolved top-level `device` ("cpu", "cuda", "cuda:N"; `models.device.resolve_device`)."""

    epochs: int
    batch_size: int
    seed: int
    select_on: str  # "dev"; quirk "test" (the paper-era runs)
    deterministic: bool
    learning_rate: float
    weight_decay: float
    device: str  # "cpu", "cuda", "cuda:N"
    padded_lstm: bool  # BiLSTMs over the padded batch (faster on CPU; packed: equal up to float rounding)
    fused_adam: bool  # Adam's fused kernel (2-4x faster steps on large embeddings; the loop: equal up to rounding)
    amsgrad: bool  # J&W's Adam variant; the A&Z Transformer trains with plain Adam (`az.train.amsgrad`)

    @property
    def compute(self) -> Compute:
        """How the trained model computes (`device`, `padded_lstm`); `fit` applies it before the first epoch."""
        return Compute(device=self.device, padded_lstm=self.padded_lstm)


@dataclass(frozen=True)
class HFSettings:
    """One entry of config `hf.models` with the section's training options (defaults in the schema)."""

    name: str
    checkpoint: str
    gguf_file: str | None  # weights, config and tokenizer from this GGUF file of `checkpoint` (dequantized to float32)
    kind: str  # classifier, prompted or masked_lm (models.hf.prompted)
    prompt: str | None  # the template of the prompted kinds
    verbalizer: dict | None  # class name -> word
    few_shot: tuple  # (text, class name) examples of the prompted kinds
    finetune: bool
    allow_download: bool
    max_length: int
    epochs: int
    batch_size: int
    learning_rate: float
    deterministic: bool  # `seeding.deterministic`
    select_on: str  # `model_selection.split`
    fused_adam: bool  # the top-level `fused_adam` switch, as for every other training
