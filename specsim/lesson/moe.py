"""A mixture-of-experts target in the roofline model: why verifying K + 1 tokens is not free at small batch.

A dense model reads every weight for every token, so K + 1 tokens read what one token reads. A mixture of experts
routes each token to ``active`` of its ``experts`` feed-forward experts per layer: one token reads only the experts
it chose, but K + 1 tokens that choose differently read more of them. With routing spread evenly, T tokens touch
E·(1 − (1 − a/E)^T) distinct experts a layer in expectation, so at batch 1 a verification pass reads several times a
plain pass's bytes, and v is far from 1. A large batch already touches every expert each step (expert-parallel
serving spreads them over many GPUs), so there the extra tokens cost arithmetic only, and v returns near 1 until
each expert's share of the tokens nears the ridge R.

Each expert's GEMM is its own kernel, so the step is a sum of rooflines, as in :func:`specsim.lesson.roofline.
step_kernels`: max(the always-read weights, their arithmetic) + max(the experts read, their arithmetic). Attention
and the KV cache are left out here (the dense model's page shows what they add). Pure arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core import published
from specsim.lesson import roofline


@dataclass(frozen=True)
class MixtureOfExperts:
    """A mixture-of-experts decoder's shape from its config: routed experts and how many a token uses, per layer."""

    name: str
    total_params: float  # every weight, as its model card counts them
    hidden: int
    expert_intermediate: int  # one routed expert's gated-MLP width
    moe_layers: int  # the layers whose MLP is routed (the others are dense)
    experts: int  # routed experts per MoE layer
    active: int  # routed experts per token

    @property
    def expert_params(self) -> float:
        """One routed expert in one layer: gate, up and down projections."""
        return 3 * self.hidden * self.expert_intermediate

    @property
    def routed_params(self) -> float:
        return self.moe_layers * self.experts * self.expert_params

    @property
    def always_read_params(self) -> float:
        """Weights every token reads: attention, shared experts, dense layers, embeddings and output head."""
        return self.total_params - self.routed_params

    @property
    def active_params(self) -> float:
        return self.always_read_params + self.moe_layers * self.active * self.expert_params

    def experts_touched(self, tokens: float) -> float:
        """Expected distinct experts a layer reads for ``tokens`` tokens routed independently and evenly."""
        return self.experts * (1.0 - (1.0 - self.active / self.experts) ** tokens)

    def step_cost(self, tokens_per_sequence: int, batch: int, ridge: float) -> float:
        """One step over ``batch`` sequences adding ``tokens_per_sequence`` tokens each, in units of reading the
        always-read weights once. The touched experts share the step's expert work evenly."""
        tokens = batch * tokens_per_sequence
        always = max(1.0, tokens / ridge)
        experts_read = self.moe_layers * self.experts_touched(tokens) * self.expert_params
        experts_arithmetic = tokens * self.moe_layers * self.active * self.expert_params / ridge
        return always + max(experts_read, experts_arithmetic) / self.always_read_params

    def verify_cost(self, batch: int, k: int, ridge: float) -> float:
        """v at batch B: a step adding K + 1 tokens a sequence against a plain step adding one."""
        return self.step_cost(k + 1, batch, ridge) / self.step_cost(1, batch, ridge)

    def read_ratio(self, k: int) -> float:
        """At batch 1: the bytes a (K + 1)-token verification pass reads, against a one-token pass."""
        read = (self.always_read_params + self.moe_layers * self.experts_touched(k + 1) * self.expert_params)
        return read / self.active_params


DEEPSEEK_V3 = MixtureOfExperts("DeepSeek-V3", total_params=671e9, hidden=7168, expert_intermediate=2048,
                               moe_layers=61 - 3, experts=256, active=8)
"""From its config.json (hidden 7168, moe_intermediate_size 2048, 61 layers of which the first 3 are dense, 256
routed experts and 8 per token, plus one shared expert) and its weights README (671B parameters, 36.6B activated;
the shape above gives 37.5B activated, the shared expert and the dense layers counted as always read)."""


def dense_verify_cost(batch: int, k: int, ridge: float) -> float:
    """The dense model's v at the same batch, weights only, for the chart beside the MoE's."""
    return roofline.batched_verify_cost(batch, k, ridge)


MTP_BIG_BATCH = 256
"""The large batch at which the pages price DeepSeek-V3's MTP module: every expert is read each step."""


@dataclass(frozen=True)
class MtpLoop:
    """One speculative loop of DeepSeek-V3 with its MTP module as the draft at K = 1, in one deployment: the draft's
    cost c and the check's v in plain steps, rounded as the pages show them (c to 3 decimals, v to 2), so that the
    sum a page writes, c + v, is the sum of the figures it shows."""

    where: str
    batch: int
    c: float
    v: float

    @property
    def cost(self) -> float:
        """c + v: the loop's cost in plain steps."""
        return self.c + self.v


def mtp_loops(ridge: float = roofline.GPU_RIDGE) -> tuple[MtpLoop, MtpLoop, MtpLoop]:
    """The MTP loop at K = 1 three ways: on one memory system at batch 1 (c by the weights one token reads, v from
    this model), on one memory system at :data:`MTP_BIG_BATCH` (c by every weight of the module over the model's, as
    every expert is read anyway), and spread over many GPUs by expert parallelism at batch 1 (a step's time follows
    its layers: c by the module's one layer among the model's, v at best 1)."""
    def loop(where: str, batch: int, c: float, v: float) -> MtpLoop:
        return MtpLoop(where, batch, round(c, 3), round(v, 2))

    return (loop("one memory system", 1, published.DEEPSEEK_MTP_COST_BY_BYTES, DEEPSEEK_V3.verify_cost(1, 1, ridge)),
            loop("one memory system", MTP_BIG_BATCH, published.DEEPSEEK_MTP_COST_ALL_EXPERTS,
                 DEEPSEEK_V3.verify_cost(MTP_BIG_BATCH, 1, ridge)),
            loop("spread over many GPUs", 1, 1 / published.DEEPSEEK_V3_LAYERS, 1.0))
