"""The names of the model families, without importing torch: the workflow's wildcard constraints and the
config schema's choices read them at parse time."""

ENCODERS = ("lstm", "cnn", "average")  # J&W encoders (models.encoders)
ATTENTIONS = ("tanh", "dot", "uniform")  # J&W attention functions (models.attention)
TRANSFORMER_ENCODER, TRANSFORMER_ATTENTION = "transformer", "self"  # A&Z runs: results/models/.../transformer-self/
# the same Transformer whose last-layer [CLS] row is one head-averaged distribution (J&W analyses swap it)
TRANSFORMER_TIED_ATTENTION = "tiedcls"
TRANSFORMER_ATTENTIONS = (TRANSFORMER_ATTENTION, TRANSFORMER_TIED_ATTENTION)
HF_ENCODER = "hf"  # Hugging Face encoders (models.hf): results/hf/{hf_model}/...
