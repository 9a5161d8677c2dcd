"""The serving snippets (specsim.lesson.serving.SNIPPETS) and the "Turn it on" section of In practice that shows them:
each names the release it was checked against, and its code and note say what that release does."""

from __future__ import annotations

from tests.conftest import ROOT, open_page


def test_every_snippet_names_the_release_it_was_checked_against():
    import re

    from specsim.lesson import serving

    text = " ".join(m.value for m in open_page("practice.py").markdown)  # "Turn it on" is on In practice
    assert "Each snippet was checked against the tool's documentation;" not in text
    for s in serving.SNIPPETS:
        assert s.release.startswith(s.tool), (s.tool, s.release)
        assert f"**{s.tool}: {s.method}**, checked against {s.release}" in text
        if s.tool == "vLLM":
            assert s.release in (serving.VLLM_RELEASE, serving.VLLM_MTP_RELEASE, serving.VLLM_EAGLE3_RELEASE)
            assert re.fullmatch(r"vLLM v\d+\.\d+\.\d+", s.release)
            assert f"/en/{s.release.removeprefix('vLLM ')}/" in s.source  # the versioned page, not "latest"
        if s.tool in ("transformers", "SGLang"):
            assert re.search(r"\d+\.\d+\.\d+$", s.release), s.release


def test_the_transformers_release_is_the_one_the_app_pins():
    from specsim.lesson import serving

    pins = dict(line.split("#")[0].strip().split("==") for line in
                (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines() if "==" in line)
    assert serving.TRANSFORMERS_RELEASE == f"transformers {pins['transformers']}"


def test_vllm_draft_model_snippet_uses_the_current_method_form():
    from specsim.lesson import serving

    snippet = next(s for s in serving.SNIPPETS if s.tool == "vLLM" and s.method == "draft model")
    code = snippet.code.replace("\n", " ")
    assert '"method": "draft_model"' in code and '"model": "Qwen/Qwen3-0.6B"' in code
    assert '"num_speculative_tokens": 5' in code and "facebook/opt" not in code
    assert "speculative_model=" not in code


def test_the_llama_cpp_snippet_calls_draft_min_the_shortest_draft_and_draft_p_min_a_confidence_stop():
    """llama.cpp's --draft-min is the shortest draft worth verifying and --draft-p-min its confidence stop; neither
    bounds K per loop."""
    from specsim.lesson import serving

    llama = next(s for s in serving.SNIPPETS if s.tool == "llama.cpp")
    assert "--draft-p-min" in llama.code and "bound K per loop" not in llama.note
    assert "shortest draft worth verifying" in llama.note and "confidence stop" in llama.note


def test_the_transformers_prompt_lookup_snippet_says_which_match_it_takes():
    """transformers' prompt lookup searches the prompt and what was generated and takes the earliest match; specsim's
    takes the latest."""
    from specsim.lesson import serving

    lookup = next(s for s in serving.SNIPPETS if s.tool == "transformers" and s.method == "prompt lookup")
    assert "earliest" in lookup.note and "latest" in lookup.note and "what was generated" in lookup.note
