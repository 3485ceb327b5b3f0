"""Adversarial attention (J&W §6.5, paper Eq. 2): attention far from the original (JSD) with almost the same output.

With hidden states and the model frozen, K candidate logit vectors per instance are optimised by Adam
(amsgrad) on

    L = sum_k [ -JSD(a_k, a_hat) + lambda * relu(dy_k - eps) ] - 1/K^2 sum_{k,k'} JSD(a_k, a_k').

The loss is a sum of per-instance terms and Adam is elementwise, so optimising a whole batch of
instances x candidates at once gives each instance exactly its own optimisation.

Each step takes the loss's gradient from `adversarial_gradient`: autograd only through the frozen model's
decoder (the hinge), the two divergence terms' gradients written out (`divergence_gradient`), the loss
itself evaluated only when progress is printed. `adversarial_loss` stays the definition the tests check
the gradient against.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnexp.analyses.divergences import EPS, jsd, tvd
from attnexp.analyses.jw.settings import AdversarySettings
from attnexp.data.batching import Batch
from attnexp.models.attention import masked_softmax
from attnexp.models.interface import AttentionModel


@dataclass
class AdversaryResult:
    original_attention: torch.Tensor  # [B, L]
    original_output: torch.Tensor  # [B, C]
    candidates: torch.Tensor  # [B, K, L] final candidate attentions
    candidate_output: torch.Tensor  # [B, K, C]
    candidate_jsd: torch.Tensor  # [B, K] JSD(candidate, original attention)
    candidate_tvd: torch.Tensor  # [B, K] TVD(candidate output, original output)
    emax_jsd: torch.Tensor  # [B] max JSD among candidates (and the original) with TVD <= report epsilon
    emax_attention: torch.Tensor  # [B, L] the attention achieving it
    emax_output: torch.Tensor  # [B, C] its output distribution
    epsilon: float  # the report threshold used


def instance_generator(seed: int, instance_id: str) -> torch.Generator:
    """A generator of its own for one instance, seeded from (seed, instance id) by a stable hash."""
    digest = hashlib.sha256(f"{seed}/{instance_id}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def initial_logits(
    batch: Batch, settings: AdversarySettings, generator: torch.Generator | None = None, seed: int | None = None
) -> torch.Tensor:
    """Candidate logits [B, K, L]: init_scale * N(0, 1) (the authors' extra log-uniform constant cancels in the softmax).

    With `seed`, each instance draws its [K, L_i] start from `instance_generator(seed, id)` (PAD columns 0), so the
    start of an instance does not depend on which instances share its batch (`analyses.memory_budget_mb`);
    otherwise one draw from `generator` for the whole batch."""
    size, width = batch.tokens.shape
    # drawn on the CPU (the generators' device) whatever the model's device: the same start on CPU and GPU
    device = batch.tokens.device
    if seed is None:
        return settings.init_scale * torch.randn(size, settings.candidates, width, generator=generator).to(device)
    logits = torch.zeros(size, settings.candidates, width)
    for row, (instance_id, length) in enumerate(zip(batch.instance_ids, batch.lengths.tolist(), strict=True)):
        logits[row, :, :length] = torch.randn(settings.candidates, length, generator=instance_generator(seed, instance_id))
    return settings.init_scale * logits.to(device)


def pair_halves(k: int, dtype: torch.dtype = torch.float32, device=None) -> torch.Tensor:
    """[K(K-1)/2, K]: 0.5 at the two candidates of each unordered pair (the pair mixtures' weights)."""
    first, second = torch.triu_indices(k, k, offset=1, device=device)
    halves = torch.zeros(len(first), k, dtype=dtype, device=device)
    pair = torch.arange(len(first), device=device)
    halves[pair, first] = 0.5
    halves[pair, second] = 0.5
    return halves


def mean_pairwise_jsd(attention: torch.Tensor, halves: torch.Tensor | None = None) -> torch.Tensor:
    """Mean JSD over all K x K ordered pairs of candidates [B, K, L] -> [B], as the authors' diversity term.

    Uses JSD(p, q) = 1/2 sum p log p + 1/2 sum q log q - sum m log m (m = (p + q) / 2, 1e-10 inside the logs),
    the same sum as `divergences.jsd` regrouped, over the K(K-1)/2 unordered pairs only (the diagonal is 0
    and JSD is symmetric); the pair mixtures come from one matrix product. `halves`: `pair_halves(K)`, passed
    by a caller that evaluates this many times.
    """
    k = attention.shape[-2]
    halves = pair_halves(k, attention.dtype, attention.device) if halves is None else halves
    attention = attention.clamp(0.0, 1.0)
    self_terms = (attention * torch.log(attention + EPS)).sum(-1)
    mixture = torch.matmul(halves, attention)
    pairs = self_terms @ halves.T - (mixture * torch.log(mixture + EPS)).sum(-1)
    return 2.0 * pairs.sum(-1) / k**2


def adversarial_loss(
    model: AttentionModel,
    encoded,
    batch: Batch,
    logits: torch.Tensor,
    original_attention: torch.Tensor,
    original_output: torch.Tensor,
    settings: AdversarySettings,
    real: torch.Tensor | None = None,
    halves: torch.Tensor | None = None,
    decode: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """Eq. 2 per instance [B] for candidate logits [B, K, L]; `real` (the batch's real_mask [B, 1, L]), `halves`
    (`pair_halves(K)`) and `decode` (`model.decoder(encoded, batch)`) may be built once by a caller that evaluates
    the loss at every step."""
    attention = masked_softmax(logits, batch.real_mask[:, None, :] if real is None else real)
    decode = model.decoder(encoded, batch) if decode is None else decode
    hinge = output_hinge(model, decode, attention, original_output, settings)
    diversity = mean_pairwise_jsd(attention, halves)
    return (-jsd(attention, original_attention[:, None, :]) + hinge).sum(-1) - diversity


def output_hinge(
    model: AttentionModel,
    decode: Callable[[torch.Tensor], torch.Tensor],
    attention: torch.Tensor,
    original_output: torch.Tensor,
    settings: AdversarySettings,
) -> torch.Tensor:
    """lambda * relu(dy_k - eps) [B, K] of candidate attentions [B, K, L]: dy the TVD of the outputs (the quirk: 2 TVD,
    the L1 distance, for QA/NLI)."""
    change = tvd(model.distribution(decode(attention)), original_output[:, None, :])
    if settings.code_thresholds and not model.is_binary:
        change = 2 * change
    return settings.lam * torch.relu(change - settings.hinge_epsilon(model.config.task))


def _log(x: torch.Tensor) -> torch.Tensor:
    """log(x + EPS), the logs of every JSD term."""
    return (x + EPS).log_()


def divergence_gradient(attention: torch.Tensor, original_attention: torch.Tensor, halves: torch.Tensor) -> torch.Tensor:
    """d/da of sum_k -JSD(a_k, a_hat) - mean_pairwise_jsd(a) for candidates a [B, K, L] in [0, 1], up to less than
    4 EPS once the softmax's backward has multiplied it by a.

    d/dx x log(x + EPS) = log(x + EPS) + 1 - EPS / (x + EPS): the 1s cancel between each JSD's two sides, and the
    last term, below 1, is dropped (times a <= 2 (x + EPS) it is at most 2 EPS). So with the mixtures m:
    dJSD(p, q)/dp = (log p - log m) / 2, and the diversity term's 2/K^2 sum over unordered pairs gives
    (K - 1) log a_i - sum_{j != i} log m_ij, over K^2 (logs with EPS inside)."""
    k = attention.shape[-2]
    own = _log(attention)
    mixed = _log(torch.add(attention, original_attention[:, None, :]).mul_(0.5))
    pairs = torch.matmul(halves.T, _log(torch.matmul(halves, attention)))
    # -(own - mixed) / 2 - ((k - 1) own - 2 pairs) / k^2, in as few passes as possible
    return mixed.mul_(0.5).add_(pairs, alpha=2.0 / k**2).sub_(own, alpha=0.5 + (k - 1) / k**2)


def adversarial_gradient(
    model: AttentionModel,
    decode: Callable[[torch.Tensor], torch.Tensor],
    batch: Batch,
    logits: torch.Tensor,
    original_attention: torch.Tensor,
    original_output: torch.Tensor,
    settings: AdversarySettings,
    halves: torch.Tensor,
    masked: bool = False,
) -> torch.Tensor:
    """d/d logits of `adversarial_loss(...).sum()` [B, K, L], equal up to float rounding and the EPS terms that
    `divergence_gradient` drops, and about twice as fast: autograd runs only through the decoder (the hinge); the
    divergences' gradient is `divergence_gradient`, then the softmax's backward a * (g - sum a g), 0 at masked
    positions. `masked`: the logits are already -inf outside real tokens."""
    with torch.no_grad():
        attention = torch.softmax(logits, -1) if masked else masked_softmax(logits, batch.real_mask[:, None, :])
    with torch.enable_grad():
        attention.requires_grad_(True)
        hinge = output_hinge(model, decode, attention, original_output, settings).sum()
        (gradient,) = torch.autograd.grad(hinge, [attention])
    with torch.no_grad():
        attention = attention.detach()
        gradient += divergence_gradient(attention, original_attention, halves)
        return gradient.sub_((attention * gradient).sum(-1, keepdim=True)).mul_(attention)


def adversarial_attention(
    model: AttentionModel,
    batch: Batch,
    settings: AdversarySettings,
    generator: torch.Generator | None = None,
    init: torch.Tensor | None = None,
    progress_every: int = 0,
    seed: int | None = None,
) -> AdversaryResult:
    """Optimise K adversarial attentions per instance and pick the epsilon-max JSD one (the original always qualifies).

    Starts: `init`, else per instance from `seed` (see `initial_logits`), else one draw from `generator`."""
    with torch.no_grad():
        output = model(batch)
        original_output = model.distribution(output.logits)
    encoded, original_attention = output.encoded, output.attention
    logits = (initial_logits(batch, settings, generator, seed) if init is None else init.clone()).detach()
    real, halves = batch.real_mask[:, None, :], pair_halves(settings.candidates, logits.dtype, logits.device)
    # -inf outside real tokens once, instead of masking at every step: their gradient is 0, so Adam keeps them -inf
    logits.masked_fill_(~real, float("-inf"))
    optimizer = torch.optim.Adam([logits], lr=settings.lr, amsgrad=True, fused=True)
    with torch.no_grad():
        decode = model.decoder(encoded, batch)  # the states' part of the decoder, computed once for all steps
    for step in range(settings.steps):
        logits.grad = adversarial_gradient(
            model, decode, batch, logits, original_attention, original_output, settings, halves, masked=True
        )
        if progress_every and (step + 1) % progress_every == 0:
            with torch.no_grad():
                loss = adversarial_loss(
                    model, encoded, batch, logits, original_attention, original_output, settings, real, halves, decode
                ).sum()
            print(f"  adversary step {step + 1}/{settings.steps}: loss {loss.item() / batch.size:.4f} per instance", flush=True)
        optimizer.step()

    with torch.no_grad():
        candidates = masked_softmax(logits.detach(), real)
        candidate_output = model.distribution(decode(candidates))
        candidate_jsd = jsd(candidates, original_attention[:, None, :])
        candidate_tvd = tvd(candidate_output, original_output[:, None, :])
        epsilon = settings.report_epsilon(model.config.task)
        pool_attention = torch.cat([candidates, original_attention[:, None, :]], dim=1)
        pool_output = torch.cat([candidate_output, original_output[:, None, :]], dim=1)
        pool_jsd = torch.cat([candidate_jsd, torch.zeros_like(candidate_jsd[:, :1])], dim=1)
        pool_tvd = torch.cat([candidate_tvd, torch.zeros_like(candidate_tvd[:, :1])], dim=1)
        score = pool_jsd.masked_fill(pool_tvd > epsilon, -1.0)
        best = score.argmax(dim=1)
        rows = torch.arange(batch.size, device=pool_jsd.device)
        return AdversaryResult(
            original_attention=original_attention,
            original_output=original_output,
            candidates=candidates,
            candidate_output=candidate_output,
            candidate_jsd=candidate_jsd,
            candidate_tvd=candidate_tvd,
            emax_jsd=pool_jsd[rows, best],
            emax_attention=pool_attention[rows, best],
            emax_output=pool_output[rows, best],
            epsilon=epsilon,
        )
