"""Figures reported in the papers the lesson cites, kept as data so pages compute from them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedSetup:
    """One draft/target pairing from a paper, with per-token times where the paper gives them."""

    citation: str
    target: str
    draft: str
    draft_ms_per_token: float | None = None
    target_ms_per_token: float | None = None
    note: str = ""
    year: int | None = None
    dated: str = ""
    draft_layers: int | None = None  # depth, where the paper gives it: a draft token's latency follows its depth
    target_layers: int | None = None
    draft_params_b: float | None = None  # parameters, in billions, where the paper gives them
    target_params_b: float | None = None

    @property
    def when(self) -> str:
        """The date a citation gives: ``dated`` where set, else the year."""
        return self.dated or str(self.year)

    @property
    def draft_cost(self) -> float | None:
        """The draft's time per token as a fraction of the target's: the calculator's c."""
        if self.draft_ms_per_token is None or self.target_ms_per_token is None:
            return None
        return self.draft_ms_per_token / self.target_ms_per_token


CHEN_2023 = PublishedSetup(
    citation="Chen et al., 2023, Accelerating Large Language Model Decoding with Speculative Sampling",
    target="Chinchilla 70B",
    draft="a 4B model of the same architecture",
    draft_ms_per_token=1.8,
    target_ms_per_token=14.1,
    draft_layers=8,  # Chen et al., Table 1: the draft is wide and shallow, 8 layers to Chinchilla's 80
    target_layers=80,
    draft_params_b=4.0,
    target_params_b=70.0,
    note="with no loss of sample quality",
    year=2023,
)
LEVIATHAN_2023 = PublishedSetup(
    citation="Leviathan et al., 2023, Fast Inference from Transformers via Speculative Decoding (ICML 2023)",
    target="T5-XXL",
    draft="smaller T5 models",
    year=2023,
    dated="ICML 2023; arXiv 2022",  # the lesson dates it by the preprint (November 2022)
)


@dataclass(frozen=True)
class PublishedSpeedup:
    """A speedup over plain decoding as a paper (or a vendor) reported it: ``low`` to ``high`` times faster."""

    source: str  # who reported it, as cited: "Leviathan et al., 2023"
    low: float
    high: float
    setting: str  # what it was measured on
    qualifier: str = ""  # "up to", "over" or "about", as the source words it

    @property
    def figure(self) -> str:
        """The speedup as the source states it, e.g. "2–3×" or "up to 1.8×"."""
        span = f"{self.low:g}×" if self.low == self.high else f"{self.low:g}–{self.high:g}×"
        return f"{self.qualifier} {span}".strip()

    @property
    def claim(self) -> str:
        """The figure with its setting and source, e.g. "2–3× on T5-XXL (Leviathan et al., 2023)"."""
        return f"{self.figure} on {self.setting} ({self.source})"


LEVIATHAN_SPEEDUP = PublishedSpeedup(f"Leviathan et al., {LEVIATHAN_2023.when}", 2.0, 3.0, "T5-XXL")
CHEN_SPEEDUP = PublishedSpeedup(f"Chen et al., {CHEN_2023.year}", 2.0, 2.5,
                                "Chinchilla 70B, the abstract's rounding of its two tasks at K = 4 (1.92× and 2.46×)")
# LLMA ("inference with reference") copies spans of the reference documents a request comes with; abstract: "over 2×".
YANG_SPEEDUP = PublishedSpeedup("Yang et al., 2023", 2.0, 2.0, "outputs that overlap their reference documents", "over")
# Prompt lookup decoding copies from the prompt and the text so far (its README: "2x-4x" on input-grounded tasks).
SAXENA_SPEEDUP = PublishedSpeedup("Saxena, 2023", 2.0, 4.0, "input-grounded tasks (summaries, document QA, code edits)")
FU_SPEEDUP = PublishedSpeedup("Fu et al., 2024", 1.8, 1.8, "MT-Bench", "up to")
MEDUSA_1_SPEEDUP = PublishedSpeedup("Cai et al., 2024", 2.2, 2.2, "Vicuna chat models with Medusa-1", "over")
MEDUSA_2_SPEEDUP = PublishedSpeedup("Cai et al., 2024", 2.3, 3.6,
                                    "chat models with Medusa-2 (the backbone fine-tuned together with the heads)")
# NVIDIA's blog (TensorRT-LLM on one HGX H200, eight GPUs): the lesson's 1.9× is the 405B model's; 70B gained over 1.5×.
NVIDIA_MEDUSA_SPEEDUP = PublishedSpeedup("NVIDIA, 2024", 1.9, 1.9, "Llama 3.1 405B with Medusa heads on an HGX H200",
                                         "up to")
NVIDIA_MEDUSA_70B_SPEEDUP = PublishedSpeedup("NVIDIA, 2024", 1.5, 1.5, "Llama 3.1 70B with Medusa heads on an HGX H200",
                                             "over")

# MagicDec (arXiv 2408.11049, 2024; ICLR 2025): at long context the KV cache, read once per sequence, not the weights,
# dominates a large batch's decoding step, so speculation still pays at batch 32 to 256. Its v1 lists Jian Chen first,
# later versions Ranajoy Sadhukhan; figures from the abstract of v3 (8 A100s, moderate to long sequences).
MAGICDEC = "Chen, Tiwari, Sadhukhan et al., 2024"
"""MagicDec's authors as its first version lists them (arXiv 2408.11049v1, August 2024), whose figures these are;
the pages name the method beside them, "MagicDec (Chen, Tiwari, Sadhukhan et al., 2024)", never inside the
citation. Not Chen et al. 2023, the speculative sampling paper. Later versions list Sadhukhan first."""
MAGICDEC_SPEEDUP = PublishedSpeedup(MAGICDEC, 1.84, 1.84,
                                    "Llama 3.1 8B at batch sizes 32 to 256, moderate to long contexts, on 8 A100s",
                                    "up to")
MAGICDEC_LLAMA2_SPEEDUP = PublishedSpeedup(MAGICDEC, 2.0, 2.0,
                                           "LLaMA-2-7B-32K at batch sizes 32 to 256, moderate to long contexts, "
                                           "on 8 A100s", "up to")

EAGLE1_SPEEDUP = PublishedSpeedup("EAGLE: Li, Wei, Zhang and Zhang, 2024", 2.7, 3.5,
                                  "LLaMA2-Chat 70B, one request at a time (batch size 1), greedy")
"""EAGLE's abstract (arXiv 2401.15077): "a latency speedup ratio of 2.7x-3.5x" for LLaMA2-Chat 70B."""
EAGLE2_SPEEDUP = PublishedSpeedup("EAGLE-2: Li, Wei, Zhang and Zhang, 2024", 3.05, 4.26,
                                  "Vicuna, LLaMA2-Chat and LLaMA3-Instruct models on six tasks, one request at a time "
                                  "(batch size 1), greedy")
"""EAGLE-2's abstract (arXiv 2406.16858): "speedup ratios 3.05x-4.26x, which is 20%-40% faster than EAGLE-1"."""
EAGLE3_SPEEDUP = PublishedSpeedup("EAGLE-3: Li, Wei, Zhang and Zhang, 2025", 6.5, 6.5,
                                  "chat and reasoning models on five tasks, one request at a time (batch size 1), "
                                  "greedy; in SGLang at batch size 64 its throughput gain was 1.38×", "up to")
"""EAGLE-3's abstract (arXiv 2503.01840): "a speedup ratio up to 6.5x, with about 1.4x improvement over EAGLE-2"."""
DEEPSEEK_MTP_SPEEDUP = PublishedSpeedup("DeepSeek-V3 technical report: DeepSeek-AI, 2024", 1.8, 1.8,
                                        "DeepSeek-V3 drafting one token ahead with its own MTP module, in tokens "
                                        "per second")
DEEPSEEK_MTP_ACCEPTANCE = (0.85, 0.90)
DEEPSEEK_V3_LAYERS = 61  # its transformer layers; its MTP module (depth 1) is one more block of the same kind
"""DeepSeek-V3's technical report (arXiv 2412.19437, section 5.4.3): "the acceptance rate of the second token
prediction ranges between 85% and 90% across various generation topics", giving "1.8 times TPS"."""
DEEPSEEK_V3_ACTIVE_PARAMS_B = 36.6
"""DeepSeek-V3's README_WEIGHTS.md (Hugging Face, deepseek-ai/DeepSeek-V3): the main model's activation parameters
per token, 36.6B, including the 0.9B output head. A mixture of experts: 671B in all."""
DEEPSEEK_MTP_ACTIVE_PARAMS_B = 2.4
"""The same file: the MTP module's activation parameters, 2.4B, including the shared 0.9B embedding and 0.9B output
head (11.5B unique parameters, most of them experts)."""
DEEPSEEK_V3_EMBEDDING_PARAMS_B = 0.9
"""The same file: the embedding (and, separately, the output head) holds 0.9B parameters."""
DEEPSEEK_MTP_COST_BY_BYTES = ((DEEPSEEK_MTP_ACTIVE_PARAMS_B - DEEPSEEK_V3_EMBEDDING_PARAMS_B)
                              / DEEPSEEK_V3_ACTIVE_PARAMS_B)
"""The MTP module's c by weights read per token: its activated parameters less the embedding (a one-row lookup, not
read in full), the shared output head included, over the main model's activated parameters (the file's newer
version gives the 1.5B directly: "Activation parameters: 1.5B (including 0.9B for the output Head)"). What one
token reads: c at batch size 1."""
DEEPSEEK_V3_DECODE_GPUS = 320
"""DeepSeek-V3's technical report (section 3.4.2, decoding): "The minimum deployment unit of the decoding stage consists
of 40 nodes with 320 GPUs", its experts spread over them by expert parallelism (EP320, one expert a GPU)."""
DEEPSEEK_V3_TOTAL_PARAMS_B = 671
"""The same file: the main model's parameters in all, every expert included."""
DEEPSEEK_MTP_UNIQUE_PARAMS_B = 11.5
"""The same file: the MTP module's unique parameters (most of them its experts), excluding the shared 0.9B embedding
and 0.9B output head."""
DEEPSEEK_MTP_COST_ALL_EXPERTS = ((DEEPSEEK_MTP_UNIQUE_PARAMS_B + DEEPSEEK_V3_EMBEDDING_PARAMS_B)
                                 / (DEEPSEEK_V3_TOTAL_PARAMS_B - DEEPSEEK_V3_EMBEDDING_PARAMS_B))
"""The MTP module's c when a step's batch routes to every expert (a large batch): the module's weights and the shared
output head, over the main model's weights less its embedding (a lookup either way)."""
SUFFIX_SPEEDUP = PublishedSpeedup("SuffixDecoding: Oliaro, Jia, Campos and Qiao, NeurIPS 2025", 5.3, 5.3,
                                  "AgenticSQL, a multi-agent SQL workflow", "up to")
"""SuffixDecoding's abstract (arXiv 2411.04975, latest version; the project page says the same): "speedups of up to
5.3x"; the proceedings' abstract of an earlier version gives 3.9x."""
SGLANG_EAGLE_THROUGHPUT = {"plain": 158.34, "EAGLE-2": 244.10, "EAGLE-3": 373.25}
"""SGLang's speculative decoding page: tokens/s for LLaMA-3.1-8B-Instruct on MT-Bench on one H100, without
speculation, with EAGLE-2 and with EAGLE-3."""


@dataclass(frozen=True)
class PublishedGain:
    """A paper's gain over another speculative setup (not over plain decoding): ``low`` to ``high`` per cent."""

    source: str
    low_pct: float
    high_pct: float
    over: str  # what the gain is measured against
    setting: str

    @property
    def figure(self) -> str:
        return f"{self.low_pct:g}–{self.high_pct:g} %"


BLOCK_VERIFICATION_CITATION = "Sun et al., 2024; ICLR 2025"
"""Block Verification Accelerates Speculative Decoding (Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami and Suresh;
arXiv 2403.10444, March 2024; ICLR 2025). Its abstract: block verification keeps the output distributed exactly as
the target's, "is optimal in the expected number of tokens produced each iteration and specifically is never worse
than the standard token-level verification"."""
BLOCK_VERIFICATION_TOKENS = PublishedGain(BLOCK_VERIFICATION_CITATION, 7, 10, "token-wise verification",
                                          "PaLM-2 and Vicuna drafts and targets on a range of tasks and datasets")
"""The paper's experiments: block efficiency (tokens per iteration) "by 7%-10%" over token verification."""
BLOCK_VERIFICATION_SPEEDUP = PublishedGain(BLOCK_VERIFICATION_CITATION, 5, 8, "token-wise verification",
                                           "PaLM-2 and Vicuna drafts and targets on a range of tasks and datasets")
"""The same experiments: "overall empirical wall clock times by 5%-8%" (the abstract: "speedups ... of 5%-8%")."""

DISTILLSPEC = PublishedGain("Zhou et al., 2023; ICLR 2024", 10, 45,
                            "standard speculative decoding with a draft that was not distilled",
                            "a range of standard benchmarks, with greedy decoding and with sampling")
"""DistillSpec's abstract (arXiv 2310.08461): "10 - 45% speedups over standard SD"."""

LAYERSKIP_SPEEDUP = PublishedSpeedup("LayerSkip: Elhoushi et al., 2024", 1.82, 2.16,
                                     "Llama models trained with layer dropout and an early-exit loss (1.82× on coding, "
                                     "2.16× on CNN/DM summarisation; each the abstract's best for its task)")
"""LayerSkip's abstract (arXiv 2404.16710): "speedups of up to 2.16x on summarization for CNN/DM documents, 1.82x on
coding, and 2.0x on TOPv2 semantic parsing task"."""
KANGAROO_SPEEDUP = PublishedSpeedup("Kangaroo: Liu et al., 2024", 1.68, 1.68,
                                    "Spec-Bench, one sequence at a time, with an adapter trained on the shallow layers",
                                    "up to")
"""Kangaroo's abstract (arXiv 2404.18911): "Under single-sequence verification, Kangaroo achieves speedups up to
1.68x on Spec-Bench"."""

SPEEDUPS = {  # method key (as in specsim.methods) -> what the papers and vendors reported
    "draft_model": (LEVIATHAN_SPEEDUP, CHEN_SPEEDUP),
    "prompt_lookup": (YANG_SPEEDUP, SAXENA_SPEEDUP),
    "lookahead": (FU_SPEEDUP,),
    "medusa_tree": (MEDUSA_1_SPEEDUP, MEDUSA_2_SPEEDUP, NVIDIA_MEDUSA_SPEEDUP, NVIDIA_MEDUSA_70B_SPEEDUP),
    "eagle": (EAGLE1_SPEEDUP, EAGLE2_SPEEDUP, EAGLE3_SPEEDUP),
    "early_exit": (LAYERSKIP_SPEEDUP, KANGAROO_SPEEDUP),
}



@dataclass(frozen=True)
class ReportedRun:
    """A speedup a paper measured on one task, with the K it drafted: enough to back-solve α."""

    source: str
    task: str
    k: int
    speedup: float


CHEN_XSUM = ReportedRun(f"Chen et al., {CHEN_2023.year}", "XSum (summarisation)", 4, 1.92)
CHEN_HUMANEVAL = ReportedRun(f"Chen et al., {CHEN_2023.year}", "HumanEval (code)", 4, 2.46)
REPORTED_RUNS = (CHEN_XSUM, CHEN_HUMANEVAL)
"""Chen et al. (2023, table 1): speculative sampling with K = 4 on Chinchilla 70B, c = 1.8 / 14.1 ms."""
