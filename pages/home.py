"""The idea: what speculative decoding is, the loop, why it works, and where to go next."""

import streamlit as st

from app import frame, state
from app.calculator.figures import iteration_figure
from app.calculator.text import fmt
from app.charts import chart
from app.home.figures import one_pass_figure
from app.settings import CalcSettings
from specsim.core.published import (
    CHEN_2023,
    CHEN_HUMANEVAL,
    CHEN_SPEEDUP,
    CHEN_XSUM,
    FU_SPEEDUP,
    LEVIATHAN_2023,
    LEVIATHAN_SPEEDUP,
    MEDUSA_1_SPEEDUP,
)
from specsim.measure import analytics

LOOP_K, LOOP_KEPT = 4, 2  # the loop drawn on this page: K guesses, the first LOOP_KEPT of them kept

st.title("Speculative decoding: the idea")
frame.opening("home.py")
st.markdown(
    "Picture a careful author dictating a book to a quick assistant who knows their style. Rather than wait "
    "for every word, the assistant jots down the next few words they expect. The author takes in the whole "
    "jotting at a glance, because reading is much quicker than composing, keeps it up to the first word they "
    "would have put differently, says the right word for that spot, and the assistant starts guessing again "
    "from there. An author who always picks their favourite word gets the book word for word as they would have "
    "dictated it alone; one who picks among wordings by chance gets a book that could equally have come from them "
    "alone. Either way it is simply finished sooner whenever the assistant guesses well."
)
st.markdown(
    "A language model is in the author's position. It produces one token per forward pass, and each pass has "
    "to wait for the token before it. Speculative decoding lets a small **draft** model do the guessing and "
    "the large **target** model do the checking, without changing what the target writes: the same tokens under "
    "greedy decoding (in exact arithmetic: in floating point, a near-tie between two tokens can flip when the "
    "target scores several positions at once), and text drawn from the same distribution when sampling."
)

st.subheader("One pass checks every guess")
st.markdown(
    "A language model does not only predict the token after the last one it reads. In one forward pass over n "
    "tokens it predicts, at *every* position, the token that should come next there, each prediction seeing only "
    "the tokens before it. That is how it reads a prompt, and it is the whole trick: hand the target the last "
    "token of the text followed by K guesses, and one pass says what it would have written after each of them.")
chart(one_pass_figure(LOOP_K), key=state.HOME_ONE_PASS_CHART)
st.caption(f"The prediction after the last context token is what the target would write in guess 1's place, so it "
           f"checks guess 1; the prediction after guess 1 checks guess 2, and so on. The prediction after guess "
           f"{LOOP_K} is a token nobody guessed: if every guess is kept, it is the free +1. Writing those "
           f"{LOOP_K + 1} tokens one at a time would take {LOOP_K + 1} passes in a row.")

st.subheader("The loop, in four steps")
st.markdown(
    "1. **Draft.** The small model proposes the next K tokens, one after another, each pass cheap.\n"
    "2. **Verify.** The target scores the K proposed positions, and the one just after them, K + 1 positions "
    "in all, in a single forward pass.\n"
    "3. **Accept.** Reading left to right, the target keeps proposals while it agrees with them and stops at "
    "the first disagreement. Call the number kept j.\n"
    "4. **Add one.** That same pass already tells the target which token belongs at position j + 1, so it "
    "appends it: its top token under greedy decoding; when sampling, a draw from its scores there, or, after a "
    "rejection, a draw from the *residual*: the part of the target's distribution that the draft's guesses "
    "left uncovered (*Why the output is unchanged* shows how and why). The loop ends with j + 1 new tokens, and "
    "the draft "
    "starts again from there.\n\n"
    "One loop therefore yields at least 1 token and at most K + 1. Since the target approves every token "
    "that is kept and writes the rest itself, the text is exactly what the target alone would produce: the same "
    "tokens under greedy decoding, and the same distribution when sampling with the acceptance rule of the papers."
)
chart(iteration_figure(LOOP_K, LOOP_KEPT), key=state.HOME_LOOP_CHART)
st.caption(f"One loop with K = {LOOP_K}: the draft proposes t+1 … t+{LOOP_K} one after another, and the target scores "
           f"all of them, and the position after them, in one pass. It keeps the first {LOOP_KEPT} (✓), rejects "
           f"t+{LOOP_KEPT + 1} (✗) and puts its own token there (purple +1). The pass scored "
           f"t+{LOOP_KEPT + 2} onwards too, but those guesses are never checked (grey) and their scores are "
           f"discarded: they continue the rejected t+{LOOP_KEPT + 1}, text that will not be written. "
           f"{LOOP_KEPT + 1} tokens for one target pass.")
lesson = CalcSettings()  # the lesson's K and draft cost, as the calculator opens
useless = float(analytics.speedup(0.0, lesson.k, lesson.draft_cost, lesson.verify_cost))
st.success(
    "**Key insight: the loop yields j + 1, never zero.** Even when the target turns down the very first "
    "proposal, its verification pass has already worked out the right token for that slot, so the loop "
    "still moves one token forward and the text is still the target's. A draft that is always wrong cannot stall "
    "decoding, but it is not free either: every loop still pays for the draft's passes and for a check over K + 1 "
    f"tokens, and yields one token. With the calculator's opening K = {lesson.k} and a draft pass costing "
    f"{fmt(lesson.draft_cost)} of a target pass, and a check of K + 1 tokens costing no more than one pass, a useless "
    "draft runs at "
    f"**{fmt(useless)}× plain speed**, and its weights and cache take "
    "memory besides; where a check of K + 1 tokens costs more than one pass (on a CPU, for one), slower still. "
    "Either way the slowdown is bounded: at worst each loop still writes one token for its draft passes and one "
    "check, and a short measurement shows what that costs. That is what makes speculation safe to try: measure "
    "how often guesses are kept, and switch it off where they rarely are."
)

st.subheader("Three facts that make it work")
st.markdown(
    "1. **Checking is parallel, writing is sequential.** Given K tokens, the target can score all of them in "
    "one pass, the way it reads a prompt; writing them itself would take K passes in a row.\n"
    "2. **Some tokens are easy.** A closing bracket, the end of a common phrase, the rest of a long word: a "
    "much weaker model predicts these correctly, and text is full of them.\n"
    "3. **At small batch, on a GPU, decoding a large model is limited by memory, not arithmetic.** Each pass "
    "streams the model's weights from memory to produce a single token, and the compute units mostly wait. "
    "Scoring a handful of extra positions in the same pass uses arithmetic that was sitting idle, so it costs "
    "little extra time. Where that does not hold (a CPU that runs short of arithmetic, a large batch) the extra "
    "positions cost more; in a model so small that launching its kernels (the many small programs a GPU runs for "
    "one pass, each with a fixed start-up cost) sets the pace, the check looks free, but "
    "the draft pays a launch for every kernel too, so a draft pass costs about its share of the target's layers, "
    "not its much smaller share of the bytes. *Is verification free here?* measures it."
)

st.subheader("Four words these pages use")
st.markdown(
    "- **Prefill**: the target's first pass, over the whole prompt at once, before any token is generated. Plain "
    "and speculative decoding share it, so speedups on these pages count the tokens after it.\n"
    "- **KV cache**: what each layer keeps of every token already read (a *key* and a *value* vector), so a pass "
    "computes only the new tokens. A checking pass adds an entry per guess; entries for refused guesses are cut off "
    "(*Under the hood* shows it).\n"
    "- **Memory-bound**: a pass whose time goes into reading memory (the weights, and each request's KV cache), "
    "not into arithmetic. At "
    "small batch on a GPU decoding is memory-bound, so a few extra positions cost almost nothing "
    "(*Is verification free here?* measures it).\n"
    "- **Batch**: the requests a server decodes together in one pass. The more it batches, the less idle arithmetic "
    "is left for checking guesses.")

st.subheader("What the papers measured")
speed_ratio = CHEN_2023.target_ms_per_token / CHEN_2023.draft_ms_per_token
st.markdown(
    f"Chen et al. ({CHEN_2023.year}) drafted for **{CHEN_2023.target}** with {CHEN_2023.draft}, made wide and "
    f"shallow on purpose: {CHEN_2023.draft_layers} layers against the target's {CHEN_2023.target_layers}, because "
    "in their distributed setup every layer pays fixed costs (communication between chips, kernel launches), so a "
    "token's time follows the layers run one after another more than the parameter count. (A large model decoding "
    "one sequence on one chip pays mostly for the bytes of weights it reads instead.) A draft token took "
    f"{CHEN_2023.draft_ms_per_token} ms against {CHEN_2023.target_ms_per_token} ms for the target, about "
    f"{speed_ratio:.1f}× quicker, and decoding as a whole ran {CHEN_XSUM.speedup:.2f}× faster on "
    f"{CHEN_XSUM.task} and {CHEN_HUMANEVAL.speedup:.2f}× on {CHEN_HUMANEVAL.task} at K = {CHEN_XSUM.k} "
    f"(the abstract rounds it to {CHEN_SPEEDUP.figure}), {CHEN_2023.note}. "
    f"In the calculator's terms the draft cost is c = {CHEN_2023.draft_ms_per_token} / "
    f"{CHEN_2023.target_ms_per_token} = {fmt(CHEN_2023.draft_cost)} of a target pass, which is its default. "
    f"Leviathan et al. ({LEVIATHAN_2023.when}) measured {LEVIATHAN_SPEEDUP.figure} on **{LEVIATHAN_2023.target}**, "
    f"drafting with {LEVIATHAN_2023.draft}. The variants report their own figures: {FU_SPEEDUP.claim} for "
    f"lookahead decoding, and {MEDUSA_1_SPEEDUP.claim}."
)

frame.closing("home.py")
