"""Abnar & Zuidema (2020): attention rollout and flow against input-importance measures.

The names below live here, not in `measures`, so that the report jobs can read them without importing torch."""

METHODS = ("raw", "rollout", "flow")
IMPORTANCES = ("blankout", "grad", "grad_x_input", "grad_l2")
GRADIENTS = ("grad", "grad_x_input", "grad_l2")  # the input-gradient measures (A&Z §4; `az.gradient`)
GRADIENT_SETTINGS = ("auto", *GRADIENTS)


def gradient_measure(setting: str, shift_invariant: bool) -> str:
    """The input-gradient measure a model reports for `az.gradient` = `setting`.

    "auto": `grad_x_input` on a model whose output ignores a shift of an input vector by c·1 (the pre-LayerNorm
    Transformer: every path from e_j passes a LayerNorm, so Σ_d ∂s/∂e_jd = 0 exactly), `grad` elsewhere (BERT-family
    post-LN models, the authors' SST script). `grad` on a shift-invariant model is refused: it would be rounding noise.
    """
    if setting not in GRADIENT_SETTINGS:
        raise ValueError(f"unknown az.gradient {setting!r}; choose one of {', '.join(GRADIENT_SETTINGS)}")
    if setting == "auto":
        return "grad_x_input" if shift_invariant else "grad"
    if setting == "grad" and shift_invariant:
        raise ValueError(SHIFT_INVARIANT_GRAD)
    return setting


SHIFT_INVARIANT_GRAD = (
    "az.gradient: grad (|Σ_d ∂s/∂e_jd|) is identically zero on the pre-LayerNorm Transformer (transformer-self, "
    "transformer-tiedcls): every path from an input vector to the output passes a LayerNorm, which ignores a shift by "
    "c·1, so the sum of the gradient's components is 0 and what is left is float rounding (spec abnar-zuidema.md §4). "
    "Use az.gradient: auto (grad_x_input for the Transformer, grad for Hugging Face BERT-family models), grad_x_input "
    "or grad_l2 (the L2 norm ||∂s/∂e_j||)"
)
