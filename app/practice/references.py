"""In practice, "References": the papers and sources the pages cite, each with its link (arXiv ids checked against
the papers' abstract pages)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    authors: str  # with the year, as the pages cite it
    title: str
    where: str  # venue, or "" for a preprint
    link_text: str
    url: str

    def markdown(self) -> str:
        venue = f" {self.where}." if self.where else ""
        return f"- {self.authors}. *{self.title}.*{venue} [{self.link_text}]({self.url})"


def arxiv(authors: str, title: str, arxiv_id: str, where: str = "") -> Reference:
    return Reference(authors, title, where, f"arXiv:{arxiv_id}", f"https://arxiv.org/abs/{arxiv_id}")


REFERENCES: tuple[Reference, ...] = (
    arxiv("Leviathan, Kalman and Matias (2023)", "Fast Inference from Transformers via Speculative Decoding",
          "2211.17192", "ICML"),
    arxiv("Chen, Borgeaud, Irving, Lespiau, Sifre and Jumper (2023)",
          "Accelerating Large Language Model Decoding with Speculative Sampling", "2302.01318"),
    arxiv("Yang et al. (2023)", "Inference with Reference: Lossless Acceleration of Large Language Models",
          "2304.04487"),
    Reference("Saxena (2023)", "Prompt Lookup Decoding", "code and write-up on GitHub",
              "apoorvumang/prompt-lookup-decoding", "https://github.com/apoorvumang/prompt-lookup-decoding"),
    arxiv("Miao et al. (2023)", "SpecInfer: Accelerating Generative Large Language Model Serving with Tree-based "
          "Speculative Inference and Verification", "2305.09781", "ASPLOS 2024"),
    arxiv("Zhang et al. (2023)", "Draft & Verify: Lossless Large Language Model Acceleration via Self-Speculative "
          "Decoding", "2309.08168", "ACL 2024"),
    arxiv("Zhou et al. (2023)", "DistillSpec: Improving Speculative Decoding via Knowledge Distillation",
          "2310.08461", "ICLR 2024"),
    arxiv("Fu, Bailis, Stoica and Zhang (2024)", "Break the Sequential Dependency of LLM Inference Using Lookahead "
          "Decoding", "2402.02057"),
    arxiv("Cai et al. (2024)", "Medusa: Simple LLM Inference Acceleration Framework with Multiple Decoding Heads",
          "2401.10774"),
    arxiv("Li, Wei, Zhang and Zhang (2024)", "EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty",
          "2401.15077"),
    arxiv("Li, Wei, Zhang and Zhang (2024)", "EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees",
          "2406.16858"),
    arxiv("Li, Wei, Zhang and Zhang (2025)", "EAGLE-3: Scaling up Inference Acceleration of Large Language Models "
          "via Training-Time Test", "2503.01840"),
    arxiv("Elhoushi et al. (2024)", "LayerSkip: Enabling Early Exit Inference and Self-Speculative Decoding",
          "2404.16710", "ACL 2024"),
    arxiv("Liu et al. (2024)", "Kangaroo: Lossless Self-Speculative Decoding via Double Early Exiting", "2404.18911",
          "NeurIPS 2024"),
    arxiv("Chen, Tiwari, Sadhukhan et al. (2024)", "MagicDec: Breaking the Latency-Throughput Tradeoff for Long "
          "Context Generation with Speculative Decoding", "2408.11049"),
    arxiv("DeepSeek-AI (2024)", "DeepSeek-V3 Technical Report", "2412.19437"),
    arxiv("Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami and Suresh (2024)",
          "Block Verification Accelerates Speculative Decoding", "2403.10444", "ICLR 2025"),
    arxiv("Oliaro, Jia, Campos and Qiao (2024)", "SuffixDecoding: Extreme Speculative Decoding for Emerging AI "
          "Applications", "2411.04975", "NeurIPS 2025"),
    arxiv("Timor, Mamou, Korat, Berchansky, Jain, Pereg, Wasserblat and Harel (2025)", "Accelerating LLM Inference "
          "with Lossless Speculative Decoding Algorithms for Heterogeneous Vocabularies", "2502.05202", "ICML 2025"),
)

# cited by the pages outside papers: Medusa's production figures (Variants) and EAGLE-2 against EAGLE-3 in SGLang
REFERENCES += (
    Reference("NVIDIA (2024)", "Low Latency Inference Chapter 1: Up to 1.9x Higher Llama 3.1 Performance with Medusa "
              "on NVIDIA HGX H200 with NVLink Switch", "NVIDIA Technical Blog", "developer.nvidia.com",
              "https://developer.nvidia.com/blog/low-latency-inference-chapter-1-up-to-1-9x-higher-llama-3-1-"
              "performance-with-medusa-on-nvidia-hgx-h200-with-nvlink-switch/"),
    Reference("SGLang (2025)", "Speculative Decoding", "SGLang documentation", "docs.sglang.io",
              "https://docs.sglang.io/docs/advanced_features/speculative_decoding"),
)

SOURCES = ("- Further reading for interviews: the *Speculative Decoding Explained* video and the notes in "
           "[phoenixtype/ai-engineering-interview-prep](https://github.com/phoenixtype/ai-engineering-interview-prep).")


def markdown() -> str:
    return "\n".join([r.markdown() for r in REFERENCES] + [SOURCES])
