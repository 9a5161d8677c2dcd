"""How to switch speculative decoding on in the tools people serve models with: one snippet per tool and method.

Each snippet names the release of its tool whose documentation (``source``) it was checked against
(``release``); the transformers ones run here
(:func:`specsim.measure.hf_assisted.hf_assisted_generate` calls ``generate`` with exactly these arguments, and the tests
check that the installed transformers accepts them). Model names are placeholders: replace a separate draft model
with any that shares the target's tokenizer, but an EAGLE, Medusa or MTP head only with one trained for exactly that
target (it reads the target's own features).
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.kpolicy import TRANSFORMERS_DEFAULTS as _HF

# The releases each snippet was checked against. transformers is the version this app pins (requirements.txt) and
# runs the snippets with; vLLM's pages are its v0.25.0 documentation; SGLang's flags are those of its v0.5.3 server
# arguments; llama.cpp names no releases beyond build numbers, so its snippet names the change that introduced the
# flags to llama-server and the README they are documented in.
TRANSFORMERS_RELEASE = "transformers 5.23.0"
VLLM_RELEASE = "vLLM v0.25.0"
SGLANG_RELEASE = "SGLang v0.5.3"
LLAMA_CPP_RELEASE = "llama.cpp builds since PR #10455 (November 2024), as documented in tools/server/README.md"
VLLM_MTP_RELEASE = "vLLM v0.19.1"  # the release whose MTP page this app's MTP snippet was checked against
VLLM_EAGLE3_RELEASE = "vLLM v0.11.0"  # the first release whose API reference this app read that lists "eagle3"
VLLM_DYNAMIC_SOURCE = "https://docs.vllm.ai/en/v0.25.0/features/speculative_decoding/dynamic_speculative_decoding/"
"""vLLM's Dynamic Speculative Decoding page, in the release the other vLLM snippets are pinned to: a speculative
config takes ``num_speculative_tokens_per_batch_size``, a list of [first batch size, last batch size, K] ranges of
concurrency, K = 0 switching speculation off for its range. It replaced ``disable_by_batch_size``, which stopped
working when vLLM retired its V0 engine (gone entirely by v0.11.0) and was deleted from SpeculativeConfig (vLLM PR
#35060). The page's EAGLE examples run with ``VLLM_USE_V2_MODEL_RUNNER=0``, the older model runner."""
SGLANG_TUNING = ("SGLang's documented speculative settings (its v0.5.3 server arguments) are fixed when the server "
                 "starts: the draft's depth (--speculative-num-steps), its branching (--speculative-eagle-topk) and "
                 "the tokens verified per pass (--speculative-num-draft-tokens), chosen for a workload with its "
                 "bench_speculative.py script; in that release none of them changes with the load (later releases "
                 "document adaptive speculation: check the one you run).")


@dataclass(frozen=True)
class Snippet:
    tool: str
    method: str
    language: str  # for the code block: "python" or "bash"
    code: str
    source: str  # the documentation page it was checked against
    release: str  # the named release of the tool that page documents, e.g. "vLLM v0.25.0"
    note: str = ""


SNIPPETS: tuple[Snippet, ...] = (
    Snippet("transformers", "draft model", "python", """\
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct")
target = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct")
draft = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")  # same tokenizer
inputs = tokenizer("Write a haiku about rain.", return_tensors="pt")
out = target.generate(**inputs, assistant_model=draft, max_new_tokens=64, do_sample=False)""",
            "https://huggingface.co/docs/transformers/generation_strategies", TRANSFORMERS_RELEASE,
            f"transformers 5.x drafts up to num_assistant_tokens = {_HF['num_assistant_tokens']} guesses a loop "
            f"on the '{_HF['num_assistant_tokens_schedule']}' schedule and stops a draft early where the draft's own "
            f"probability falls below assistant_confidence_threshold = {_HF['assistant_confidence_threshold']:g} "
            "(retuned during the run when scikit-learn is installed); set the draft's generation_config."
            "num_assistant_tokens_schedule to 'heuristic' for +2 after a fully kept draft, −1 otherwise."),
    Snippet("transformers", "prompt lookup", "python", """\
out = target.generate(**inputs, prompt_lookup_num_tokens=4, max_new_tokens=64, do_sample=False)""",
            "https://huggingface.co/docs/transformers/generation_strategies", TRANSFORMERS_RELEASE,
            "No draft model: guesses are copied from the text so far (the prompt and what was generated), from "
            "after the earliest place where its last few tokens appeared before; specsim's prompt lookup copies from "
            "the latest such place. The two can propose different guesses and keep different numbers of them, "
            "but the target checks every guess, so the greedy text is the same."),
    Snippet("vLLM", "n-gram (prompt lookup)", "python", """\
from vllm import LLM, SamplingParams

llm = LLM(model="Qwen/Qwen3-8B",
          speculative_config={"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4})
outputs = llm.generate(["The future of AI is"], SamplingParams(temperature=0.8, top_p=0.95))""",
            "https://docs.vllm.ai/en/v0.25.0/features/speculative_decoding/n_gram/", VLLM_RELEASE),
    Snippet("vLLM", "draft model", "python", """\
llm = LLM(model="Qwen/Qwen3-8B",
          speculative_config={"method": "draft_model", "model": "Qwen/Qwen3-0.6B",
                              "num_speculative_tokens": 5})""",
            "https://docs.vllm.ai/en/v0.25.0/features/speculative_decoding/draft_model/", VLLM_RELEASE,
            "The method is named: \"draft_model\". Earlier releases' pages (v0.8 to v0.14) gave the draft's name "
            "alone, speculative_config={\"model\": ...}, and releases before v0.8 a speculative_model= argument."),
    Snippet("vLLM", "EAGLE", "python", """\
llm = LLM(model="meta-llama/Meta-Llama-3-8B-Instruct",
          speculative_config={"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-8B",
                              "num_speculative_tokens": 2})""",
            "https://docs.vllm.ai/en/v0.25.0/features/speculative_decoding/eagle/", VLLM_RELEASE),
    Snippet("vLLM", "EAGLE-3", "python", """\
llm = LLM(model="meta-llama/Llama-3.1-8B-Instruct",
          speculative_config={"method": "eagle3", "model": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3",
                              "num_speculative_tokens": 2})""",
            "https://docs.vllm.ai/en/v0.11.0/api/vllm/config/speculative.html", VLLM_EAGLE3_RELEASE,
            "\"eagle3\" is one of SpeculativeConfig's methods in that release's API reference; the draft named is "
            "the one vLLM's current EAGLE page uses in its EAGLE-3 example. That example pairs it with Llama 3 8B; "
            "the head was trained on Llama 3.1 8B Instruct's features, so here it drafts for that target (an EAGLE "
            "head works only for the target it was trained for)."),
    Snippet("vLLM", "MTP (the model's own multi-token prediction)", "python", """\
llm = LLM(model="XiaomiMiMo/MiMo-7B-Base",
          speculative_config={"method": "mtp", "num_speculative_tokens": 1})""",
            "https://docs.vllm.ai/en/v0.19.1/features/speculative_decoding/mtp/", VLLM_MTP_RELEASE,
            "No draft model to name: the target carries its own MTP module, so only the model families vLLM "
            "supports for MTP take this method (DeepSeek-V3 is one: its MTP module drafts the next-next token)."),
    Snippet("llama.cpp", "draft model", "bash", """\
llama-server -m target.gguf -md draft.gguf --draft-max 16 --draft-min 5 --draft-p-min 0.75""",
            "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md", LLAMA_CPP_RELEASE,
            "-md (--model-draft) loads the draft; --draft-max caps the guesses per loop; --draft-min is the shortest "
            "draft worth verifying (a shorter one is not sent to the target), not a lower bound on K; --draft-p-min "
            "is the confidence stop: the draft stops at a guess it is less sure of than that."),
    Snippet("SGLang", "EAGLE", "bash", """\
python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\
    --speculative-algorithm EAGLE --speculative-draft-model-path yuhuili/EAGLE-LLaMA3.1-Instruct-8B \\
    --speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8""",
            "https://docs.sglang.io/docs/advanced_features/speculative_decoding", SGLANG_RELEASE,
            "A token tree: num-steps is its depth, eagle-topk its branching, num-draft-tokens how many tree tokens "
            "the target verifies in one pass (the values shown are the defaults its documentation gives)."),
    Snippet("SGLang", "EAGLE-3", "bash", """\
python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\
    --speculative-algorithm EAGLE3 --speculative-draft-model-path lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B \\
    --speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8""",
            "https://docs.sglang.io/docs/advanced_features/speculative_decoding", SGLANG_RELEASE,
            "The same tree settings as EAGLE-2 (its documentation says they are shared); the draft is an EAGLE-3 "
            "head trained for this target (the one SGLang's SpecForge benchmarks name)."),
)


def dynamic_schedule(best_k: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(batch size, best K) pairs, in increasing batch size, as vLLM's K-by-concurrency ranges: [first B, last B, K],
    each range running up to the next listed batch size, neighbours with the same K merged."""
    ranges: list[tuple[int, int, int]] = []
    for i, (b, k) in enumerate(best_k):
        last = best_k[i + 1][0] - 1 if i + 1 < len(best_k) else b
        if ranges and ranges[-1][2] == k:
            ranges[-1] = (ranges[-1][0], last, k)
        else:
            ranges.append((b, last, k))
    return ranges


def vllm_dynamic_snippet(schedule: list[tuple[int, int, int]], k_default: int) -> Snippet:
    """vLLM's Dynamic Speculative Decoding with a schedule: K by the number of requests decoding at once, on the
    EAGLE head of the page's own example (its documentation's examples use EAGLE and EAGLE-3 heads)."""
    rows = ",\n".join(f"                [{a}, {b}, {k}]" for a, b, k in schedule)
    code = (f"""import os
os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"  # the older model runner, as Dynamic SD's EAGLE examples run
from vllm import LLM

llm = LLM(model="meta-llama/Llama-3.1-8B-Instruct",
          speculative_config={{
              "method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
              "num_speculative_tokens": {k_default},
              "num_speculative_tokens_per_batch_size": [
{rows},
              ]}})""")
    return Snippet("vLLM", "dynamic speculation (K by batch size)", "python", code, VLLM_DYNAMIC_SOURCE, VLLM_RELEASE,
                   "Each entry is [first batch size, last batch size, K] for that many requests decoding at once; "
                   "K = 0 switches speculation off there. The schedule is this page's model, with the draft's cost c "
                   "held fixed as the batch grows (a real draft's cost grows with it): measure before you deploy "
                   "one. The documentation's examples use EAGLE and EAGLE-3 heads; check that your method is "
                   "supported. Its EAGLE examples set VLLM_USE_V2_MODEL_RUNNER=0 (the older model runner) for this "
                   "feature; plain EAGLE, on *In practice*, needs no such setting. Extend the last range to the most "
                   "requests your server runs at once.")
