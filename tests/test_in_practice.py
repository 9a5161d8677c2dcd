"""Domains, vocabulary coverage and the "In practice" page: its references, the default draft's acceptance figures
reconciled, a domain result that says only what it measured, and provenance under "How this was measured"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app import state
from app.practice import references
from specsim.core import defaults, published
from specsim.core.defaults import DEFAULT_DRAFT
from specsim.lesson import domains
from tests.conftest import ROOT, open_page
from tests.live_traces import hand_trace, one_torch_thread
from tests.page_text import page_text

_threads = pytest.fixture(scope="module", autouse=True)(one_torch_thread)


@pytest.fixture(scope="module")
def practice_page():
    """The page as it opens, shared by the tests that only read it."""
    at = open_page("practice.py")
    assert not at.exception and not at.error
    return at


def test_pool_counts_checked_guesses_only():
    r = domains.pool("x", [hand_trace(), hand_trace()])
    assert (r.accepted, r.checked, r.tokens, r.loops) == (16, 20, 20, 8)
    assert r.alpha == pytest.approx(0.8) and r.tokens_per_loop == pytest.approx(2.5)


def test_domain_prompts_come_from_the_held_out_set_and_echo():
    prompts = domains.domain_prompts(2)
    assert list(prompts) == ["code", "prose", "echo"] and all(len(v) == 2 for v in prompts.values())


def test_vocab_coverage_of_the_default_draft(tmp_path):
    cov = domains.vocab_coverage(Path(defaults.DEFAULT_DRAFT), [1, 2, 10**6])
    assert cov is not None and cov.draft_vocab < cov.target_vocab
    assert cov.covered_in_text == pytest.approx(2 / 3)  # ids 1 and 2 are special tokens every draft keeps
    assert domains.vocab_coverage(tmp_path) is None


def test_page_opens_with_references_and_the_tokenizer_section():
    at = open_page("practice.py")
    assert not at.exception and not at.error
    text = " ".join(m.value for m in at.markdown)
    for needle in ("arXiv:2302.01318", "arXiv:2211.17192", "vLLM", "llama.cpp", "TensorRT-LLM", "token ids"):
        assert needle in text


def test_the_line_count_is_the_step_plus_the_loop_driver_not_the_wrapper():
    """The loop that runs is acceptance.verify (the rule), engine.SpeculativeStep (the step) and engine.decode_loop (the
    loop beside it); speculative_generate only wires them together. The files named are where the code is."""
    import inspect

    from specsim.core import acceptance, engine

    def lines(obj) -> int:
        return len(inspect.getsource(obj).splitlines())

    rule, step, driver = lines(acceptance.verify), lines(engine.SpeculativeStep), lines(engine.decode_loop)
    text = " ".join(m.value for m in open_page("practice.py").markdown)
    assert f"loop is {rule + step + driver} lines" in text
    assert f"`verify` in `specsim/core/acceptance.py` ({rule} lines" in text
    assert f"`SpeculativeStep` ({step} lines" in text and f"`specsim/core/engine.py`, the loop every decoder shares, " \
        f"`decode_loop` ({driver} lines" in text
    assert inspect.getsourcefile(engine.SpeculativeStep) == inspect.getsourcefile(engine.decode_loop)
    assert f"is {lines(engine.speculative_generate)} lines" not in text


def test_one_click_measures_every_domain(monkeypatch):
    short = {"code": ["Write a Python function that adds two numbers."], "prose": ["Describe the sea at dawn."],
             "echo": [domains.ECHO_PROMPTS[0]]}
    monkeypatch.setattr(domains, "domain_prompts", lambda per_domain=2: short)
    at = open_page("practice.py", timeout=600)
    at.button(key=state.DOMAIN_BUTTON).click().run()
    assert not at.exception and not at.error
    results = at.session_state[state.DOMAIN_RESULTS]
    assert [r.domain for r in results] == ["code", "prose", "echo"]
    assert all(r.loops > 0 and 0 <= r.alpha <= 1 for r in results)
    assert any(f"{results[0].accepted} of {results[0].checked}" in m.value for m in at.markdown)


def test_the_loops_size_is_read_from_the_source_of_the_objects_that_run():
    """The page counts the loop's lines from the files without importing them (a class replica loads no torch); the
    counts are those of the objects the engine runs, decorators included."""
    import inspect
    from pathlib import Path

    from app.practice import loop_size
    from specsim.core.acceptance import verify
    from specsim.core.engine import SpeculativeStep, decode_loop
    from specsim.core.paths import REPO_ROOT

    for part, obj in zip(loop_size.core_loop(), (verify, SpeculativeStep, decode_loop), strict=True):
        assert part.name == obj.__name__
        assert Path(inspect.getsourcefile(obj)).resolve() == (REPO_ROOT / part.file).resolve()
        assert part.lines == len(inspect.getsource(obj).splitlines())


def test_the_algorithm_as_code_is_the_rule_that_runs_beside_the_papers():
    """Issue 55, production item 4: the page shows specsim's own acceptance rule, read from its file, beside
    Algorithm 1; every code cell of the table is a line of that source."""
    import inspect

    from app.practice import algorithm
    from specsim.core.acceptance import verify
    from tests.conftest import open_page

    source, first = algorithm.rule_source()
    assert source == inspect.getsource(verify).rstrip("\n") and first == inspect.getsourcelines(verify)[1]
    assert 30 <= len(source.splitlines()) <= 45  # what a student reads in one go
    for _paper, code, _note in algorithm.CORRESPONDENCE:
        assert code in source, code
    at = open_page("practice.py")
    assert not at.exception
    assert any(c.value == source for c in at.code) and any("Uniform(0, 1)" in c.value for c in at.code)
    assert any(f"{len(source.splitlines())} lines from line {first}" in m.value for m in at.markdown)
    # a new learner's reading: as a dataframe, the "what differs" column was cut off at its edge; a table wraps it
    notes = [note for _paper, _code, note in algorithm.CORRESPONDENCE]
    assert any(list(t.value["what differs"]) == notes for t in at.table if "what differs" in t.value)


def _fake_results():
    from specsim.lesson.domains import DomainResult

    return [DomainResult("code", 2, 30, 45, 48, 20, 30 / 45, 2.4), DomainResult("prose", 2, 20, 40, 48, 25, 0.5, 1.9),
            DomainResult("echo", 2, 44, 46, 48, 12, 44 / 46, 4.0)]


def test_the_domain_ranking_shows_its_counts_and_an_interval_and_says_which_it_cannot_separate():
    """Issue 60: two prompts of 24 tokens a domain is a small sample; each domain stands beside its counts and a
    95 % Wilson interval, and neighbours whose intervals overlap are not ranked."""
    from specsim.measure.proportion import wilson_interval

    results = _fake_results()
    text = domains.ranking_sentence(results, 24)
    counts = domains.counts_sentence(results)  # under "How this was measured" (a lecturer's review: too dense)
    for r in results:
        low, high = wilson_interval(r.accepted, r.checked)
        shown = f"{r.domain} kept {r.accepted} of {r.checked} checked guesses (95 % interval {low:.0%}–{high:.0%})"
        assert shown in counts and shown not in text
    assert "2 prompts of up to 24 tokens" in text
    assert "do not separate code from prose" in text and "echo from code" not in text
    at = open_page("practice.py")
    at.session_state[state.DOMAIN_RESULTS] = results
    at.run()
    assert not at.exception
    assert any(text in m.value for m in at.markdown)
    measured = [e for e in at.expander if e.label == "How this was measured"]
    assert any(counts in m.value for e in measured for m in e.markdown)


def test_in_practice_gives_its_claims_their_conditions():
    """Issue 60: depth over parameters only where per-layer fixed costs dominate; DistillSpec's best divergence
    depends on task and decoding; different tokenizers can be paired losslessly, at a cost."""
    at = open_page("practice.py")
    text = " ".join(m.value for m in at.markdown)
    assert "Where each layer's fixed costs dominate" in text and "pays instead for the bytes of weights" in text
    assert "the best divergence changed with the task and the decoding, and TVD was not always it" in text
    assert "assistant_tokenizer=" in text and "Timor et al., ICML 2025" in text
    assert "re-tokenises them for the target" in text and "lowers acceptance and speed" in text


def test_in_practice_says_when_to_use_it_and_when_not_with_the_page_that_shows_each():
    """Issue 61, item 2: the conditions pulled together, each pointing to a page that exists."""
    from app.layout import all_pages
    from app.practice import when

    titles = {p.title for p in all_pages()}
    assert {c.page for c in when.CONDITIONS} <= titles
    for topic in ("Batch size", "Context length", "Kind of text", "Temperature", "The draft", "Memory"):
        assert any(c.what == topic for c in when.CONDITIONS)
    at = open_page("practice.py")
    assert not at.exception
    assert "When to use it, and when not" in [h.value for h in at.subheader]
    assert any(m.value == when.table_markdown() for m in at.markdown)


def test_serving_snippets_name_documented_flags_and_transformers_takes_its_arguments():
    from transformers import GenerationConfig

    from specsim.lesson import serving

    tools = {s.tool for s in serving.SNIPPETS}
    assert {"transformers", "vLLM", "llama.cpp", "SGLang"} <= tools
    config = GenerationConfig(prompt_lookup_num_tokens=4, num_assistant_tokens_schedule="heuristic")
    assert config.prompt_lookup_num_tokens == 4
    for snippet in serving.SNIPPETS:
        assert snippet.source.startswith("https://")
        if snippet.tool == "transformers":
            assert "assistant_model=" in snippet.code or "prompt_lookup_num_tokens=" in snippet.code


def test_the_transformers_snippet_runs_for_real_and_the_page_says_why_tokens_differ():
    """The snippet runs on the bundled target beside transformers' plain loop and specsim's two runs; the
    table and the sentence come from the tokens each wrote (here on the held-out list prompt, where bfloat16
    transformers parts from specsim's plain decoding)."""
    from app.practice.turn_on import snippet_prompts
    from specsim.measure import hf_assisted as hf

    at = open_page("practice.py")
    prompts = snippet_prompts()
    index = next(i for i, (label, _, _) in enumerate(prompts) if label.startswith("held-out, list"))
    at.selectbox(key=state.widget_key(state.HOOD_SNIPPET_PROMPT)).set_value(index).run()
    at.button(key=state.HOOD_SNIPPET_BUTTON).click().run(timeout=600)
    assert not at.exception, at.exception
    ran_on, check = at.session_state[state.HOOD_SNIPPET]
    assert ran_on == index and check.k == 4
    assert check.first_difference(hf.OURS_LOOKUP, hf.OURS_PLAIN) is None  # specsim's speculation is lossless
    table = at.dataframe[-1].value
    assert list(table["run"]) == list(check.tokens)
    page = " ".join(m.value for m in at.markdown)
    # issue 51: the result names the prompt it ran on, never a recording's drafter (the snippet is prompt lookup)
    assert "on a held-out list prompt" in page and "drafted by" not in page
    split = check.first_difference(hf.HF_LOOKUP, hf.OURS_PLAIN)
    own = check.first_difference(hf.HF_LOOKUP, hf.HF_PLAIN)
    if split is None:
        assert "The snippet wrote exactly specsim's tokens" in page
    elif own is None:
        assert f"other tokens than specsim from token {split + 1}" in page and "two **plain** loops differ" in page
    else:  # transformers' verification pass is not position-invariant: its speculation changed its own output
        assert f"parted from **transformers' own plain loop** at token {own + 1}" in page and "(✓ above)" in page


def test_the_snippets_pair_each_head_with_the_target_it_was_trained_for():
    """Issue 60: "a pair that shares a tokenizer" holds for a separate draft; an EAGLE, Medusa or MTP head must be
    trained for exactly that target, and the vLLM EAGLE-3 head (trained for Llama 3.1 8B) drafts for Llama 3.1 8B."""
    from specsim.lesson import serving

    eagle3 = next(s for s in serving.SNIPPETS if (s.tool, s.method) == ("vLLM", "EAGLE-3"))
    assert 'LLM(model="meta-llama/Llama-3.1-8B-Instruct"' in eagle3.code
    assert "Llama-3.1-8B-Instruct-speculator.eagle3" in eagle3.code
    at = open_page("practice.py")
    text = " ".join(m.value for m in at.markdown)
    assert "Replace the model names with a pair that shares a tokenizer" not in text
    assert "an EAGLE, Medusa or MTP head only with one trained for exactly that target" in text


def test_the_shipped_drafts_training_is_described_as_its_draft_json_says():
    """Issue 62 (7): the page said the default draft learned from the target's top-k log-probabilities, but it was
    trained from the corpus's token ids (draft.json's source), whose labels are one-hot."""
    from app.practice.drafts import distill_text, shipped_draft_json

    shipped = shipped_draft_json()
    assert shipped is not None and shipped["source"] != "records"
    text = distill_text(shipped)
    assert "soft targets" not in text and "the token the target wrote" in text
    assert "soft targets" in distill_text({**shipped, "source": "records"})


def test_the_references_list_every_method_the_pages_cite():
    """A lecturer's review: block verification (Sun et al.), SuffixDecoding and Timor et al. were cited on the pages but
    missing from the references."""
    from app.practice import references

    text = references.markdown()
    for arxiv_id in ("2403.10444", "2411.04975", "2502.05202"):
        assert f"https://arxiv.org/abs/{arxiv_id}" in text
    assert "written from" not in text


def test_the_drafts_section_computes_its_shares_from_the_papers_figures():
    """Issue 55, item 6: depth against parameters, and DistillSpec, every figure from published.py or draft.json."""
    from app.practice import drafts

    c = published.CHEN_2023
    text = drafts.depth_text()
    assert f"{c.draft_ms_per_token / c.target_ms_per_token:.1%} of its time per token" in text
    assert f"{c.draft_params_b / c.target_params_b:.1%} of the target's parameters" in text
    assert f"{c.draft_layers / c.target_layers:.0%} of its layers" in text
    # the claim the section makes: time follows depth more than parameters
    time_share = c.draft_ms_per_token / c.target_ms_per_token
    assert abs(time_share - c.draft_layers / c.target_layers) < abs(time_share - c.draft_params_b / c.target_params_b)
    config = json.loads((ROOT / DEFAULT_DRAFT / "draft.json").read_text())
    distill = drafts.distill_text(config)
    assert published.DISTILLSPEC.figure in distill and "on-policy" in distill and "α = 1 − TV(p, q)" in distill
    assert f"{config['answer_tokens'] / 1e6:.0f} million tokens" in distill and f"{config['val_top1']:.0%}" in distill
    assert f"{config['answer_tokens']:,} training tokens" in drafts.distill_provenance(config)  # the exact count


def test_the_in_practice_page_shows_the_drafts_section():
    at = open_page("practice.py")
    assert not at.exception
    assert "Choosing a draft: depth sets its cost, distillation its acceptance" in [h.value for h in at.subheader]


def test_domain_results_count_copied_guesses():
    r = domains.DomainResult("echo", 2, accepted=10, checked=12, tokens=20, loops=8, alpha=10 / 12,
                             tokens_per_loop=2.5, copied_kept=7)
    assert "echo 7 of 10" in domains.copied_sentence([r])
    assert domains.copied_sentence([]) == "No guess was kept, copied or drafted."


def test_in_practice_says_a_token_outside_the_drafts_vocabulary_can_also_be_copied(practice_page):
    text = " ".join(m.value for m in practice_page.markdown)
    assert "only ever arrives" not in text
    assert "copied from earlier in the text" in text and "hybrid" in text


# ---- references, the default draft's α figures, the domain text, provenance (a learner's and a lecturer's review) --

CITED = {  # the methods the pages name, and where each was published (ids checked against the abstract pages)
    "2406.16858": "EAGLE-2", "2503.01840": "EAGLE-3", "2404.16710": "LayerSkip", "2404.18911": "Kangaroo",
    "2309.08168": "Draft & Verify", "2305.09781": "SpecInfer", "2408.11049": "MagicDec",
    "2412.19437": "DeepSeek-V3 Technical Report",
}


def test_the_references_hold_every_cited_method_with_its_arxiv_link(practice_page):
    text = page_text(practice_page)
    for arxiv_id, name in CITED.items():
        line = next((ln for ln in text.splitlines() if f"(https://arxiv.org/abs/{arxiv_id})" in ln), None)
        assert line is not None and f"[arXiv:{arxiv_id}]" in line and name in line, arxiv_id
    assert "Prompt Lookup Decoding" in text and "(https://github.com/apoorvumang/prompt-lookup-decoding)" in text
    assert len({r.url for r in references.REFERENCES}) == len(references.REFERENCES)  # none twice


def test_the_default_drafts_alpha_figures_are_read_from_where_their_pages_read_them(practice_page):
    """Each acceptance figure the pages quote for the default draft, from the page's own source, in one table with
    what it counts; the reading says why they differ and to measure on one's own traffic."""
    from app import recording
    from app.practice import drafts
    from app.variants import compare
    from specsim.core.paths import DOMAINS_RECORDED
    from specsim.lesson import unchanged
    from specsim.measure import machine

    text = page_text(practice_page)
    assert "The default draft's α, page by page" in text
    overlap = unchanged.measured_overlap()
    draft_json = json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text(encoding="utf-8"))
    expected = {
        "*Why the output is unchanged*": f"{overlap.accepted_mass[overlap.temperatures.index(0.0)]:.3f}",
        "*Variants* (the EAGLE panel)": f"{machine.heldout_alpha(defaults.CLASSIC_DRAFT, copy=False):.0%}",
        "*Variants* (the recorded comparison)":
            f"{next(r for r in compare.saved_heldout()['rows'] if r['key'] == 'draft_model')['acceptance']:.0%}",
        "*Live decoding* (the recorded run)": f"{recording.shipped_runs()['prose_run'].spec.acceptance_rate:.0%}",
        "*In practice* (the paragraph above)": f"{draft_json['val_top1']:.0%}",
    }
    for r in domains.load_recorded(DOMAINS_RECORDED).results:
        expected[f"*In practice* (acceptance by domain, above: {r.domain})"] = f"{r.alpha:.0%}"
    rows = drafts.alpha_figures()
    assert {r.page: r.shown for r in rows} == expected
    for r in rows:  # one table row per figure, with what it counts and whether copies count
        assert f"| **{r.shown}** | {r.page} | {r.counts} | {'yes' if r.copying else 'no'} |" in text
    assert sum(r.copying for r in rows) >= 3 and sum(not r.copying for r in rows) >= 3
    reading = drafts.alpha_reading(rows)
    assert reading in text and "measure it on your own traffic" in reading.lower()
    assert f"keep {machine.heldout_alpha(defaults.DEFAULT_DRAFT, copy=True):.0%}" in reading  # copying's share


def test_the_domain_text_is_conditional_and_explains_alpha_against_tau(practice_page):
    """Two prompts a domain do not separate the domains: the text says what it expects and that the runs neither
    confirm nor refute it; where a higher α goes with a lower τ, one sentence explains it from the counts."""
    from specsim.core.paths import DOMAINS_RECORDED

    text = page_text(practice_page)
    assert "text that copies its input is the easiest of all" not in text
    assert "should be the easiest of all" in text and "Those are expectations" in text
    results = domains.load_recorded(DOMAINS_RECORDED).results
    ranking = domains.ranking_sentence(results, domains.TOKENS_PER_PROMPT)
    assert "neither confirm the expectations above nor refute them" in ranking and ranking in text
    tau = domains.tau_sentence(results)
    echo, code = (next(r for r in results if r.domain == d) for d in ("echo", "code"))
    assert echo.alpha > code.alpha and echo.tokens_per_loop < code.tokens_per_loop  # the recorded puzzle
    assert tau in text and f"echo kept {echo.accepted / echo.loops:.2f} guesses a loop" in tau
    lost = echo.accepted + echo.loops - (echo.tokens - echo.prompts)
    assert abs(1 + (echo.accepted - lost) / echo.loops - echo.tokens_per_loop) < 1e-9  # the sentence's arithmetic
    assert f"lost {lost} tokens that way in its {echo.loops} loops" in tau


def test_tau_sentence_is_empty_when_alpha_and_tau_agree():
    from specsim.lesson.domains import DomainResult, tau_sentence

    assert tau_sentence([DomainResult("code", 2, 30, 45, 48, 20, 30 / 45, 2.4),
                         DomainResult("prose", 2, 20, 40, 48, 25, 0.5, 1.9)]) == ""


PROVENANCE = ("5,001,548", "lines from line", "specsim/core/acceptance.py")


def test_provenance_sits_in_how_this_was_measured(practice_page):
    """Counts, intervals, file paths and line numbers are under "How this was measured"; the sentences keep the
    numbers themselves (a lecturer's review: too dense)."""
    measured = [e for e in practice_page.expander if e.label == "How this was measured"]
    inside = " ".join(m.value for e in measured for m in e.markdown)
    outside = " ".join(m.value for m in practice_page.markdown if m.value not in inside)
    for needle in PROVENANCE:
        assert needle not in outside, needle
    assert not re.search(r"95 % interval \d", outside)  # the intervals themselves
    for needle in ("kept 13 of 26", "lines from line", "specsim/core/acceptance.py", "docs/distill.md"):
        assert needle in inside, needle
    assert "about 5 million tokens" in outside and "loop is " in outside


def test_the_references_close_the_page_after_the_how_to():
    """A new learner's reading: the reference list sat between the algorithm and *Turn it on*; it is the page's end."""
    from tests.conftest import open_page

    at = open_page("practice.py")
    headings = [h.value for h in at.subheader]
    assert headings[-1] == "References" and headings.index("Turn it on") < headings.index("References")
