"""The bad-input campaign (issue 8): every bad input the tests feed specsim, in one table.

Each row names where the input goes, what it is, and a fragment of the message the user must see.
The tests parametrize over these rows (tests/test_bad_input_app.py, tests/test_bad_input_cli.py,
tests/browser/test_bad_input.py); ``len(CAMPAIGN)`` is the campaign's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HUGE = "x" * 100_000
# the live page's boxes as a refusal names them (app.live.params.BOXES, written out: a test that cannot drift with it)
K_BOX, T_BOX, N_BOX, SEED_BOX = "“K: proposals per loop”", "“Temperature (0 = greedy)”", "“Max new tokens”", "“Seed”"
LONG_NUMBER = "9" * 10_000


@dataclass(frozen=True)
class Bad:
    """One bad input: ``where`` it is entered, ``value`` (query parameters, a form field, or CLI arguments)."""

    id: str
    where: str  # "calculator URL", "live URL", "live form", "live models", "CLI", "browser"
    value: dict = field(hash=False)
    expect: str  # a fragment of the message the user sees


def _calc(id_: str, expect: str, **query) -> Bad:
    return Bad(id_, "calculator URL", query, expect)


def _live(id_: str, expect: str, **query) -> Bad:
    return Bad(id_, "live URL", query, expect)


def _form(id_: str, expect: str, **fields) -> Bad:
    return Bad(id_, "live form", fields, expect)


CALCULATOR_URL = [
    _calc("calc-script-tag", "URL parameter `k`", k="<script>alert(1)</script>"),
    _calc("calc-nul-byte", "URL parameter `k`", k="6\x00"),
    _calc("calc-nan", "URL parameter `k`", k="nan"),
    _calc("calc-inf", "URL parameter `alpha`", alpha="inf"),
    _calc("calc-minus-inf", "URL parameter `c`", c="-inf"),
    _calc("calc-negative-k", "URL parameter `k`", k="-3"),
    _calc("calc-negative-c", "URL parameter `c`", c="-0.5"),
    _calc("calc-k-zero", "URL parameter `k`", k="0"),
    _calc("calc-k-above-max", "URL parameter `k`", k="17"),
    _calc("calc-alpha-above-100", "URL parameter `alpha`", alpha="101"),
    _calc("calc-c-above-1", "URL parameter `c`", c="1.01"),
    _calc("calc-v-below-min", "URL parameter `v`", v="0.49"),
    _calc("calc-arabic-indic-digit", "URL parameter `k`", k="\u0666"),
    _calc("calc-fullwidth-digits", "URL parameter `alpha`", alpha="\uff15\uff15"),
    _calc("calc-k-fraction", "URL parameter `k`", k="6.5"),
    _calc("calc-exponent", "URL parameter `k`", k="1e1"),
    _calc("calc-hex", "URL parameter `k`", k="0x10"),
    _calc("calc-very-long", "URL parameter `k`", k=LONG_NUMBER),
    _calc("calc-empty", "URL parameter `k`", k=""),
    _calc("calc-whitespace", "URL parameter `alpha`", alpha="   "),
    _calc("calc-repeated-last-bad", "URL parameter `k`", k=["5", "five"]),
]

LIVE_URL = [
    _live("live-url-k-zero", "URL parameter `k`", k="0"),
    # Issue 62 (14): a NUL byte in a model id showed only Python's "embedded null byte" on Run
    _live("live-url-target-nul", "URL parameter `target`", pair="custom", target="owner/model\x00"),
    _live("live-url-k-above-max", "URL parameter `k`", k="17"),
    _live("live-url-k-word", "URL parameter `k`", k="four"),
    _live("live-url-k-unicode-digit", "URL parameter `k`", k="\u0666"),
    _live("live-url-t-nan", "URL parameter `t`", t="nan"),
    _live("live-url-t-negative", "URL parameter `t`", t="-0.1"),
    _live("live-url-t-above-max", "URL parameter `t`", t="2.01"),
    _live("live-url-n-zero", "URL parameter `n`", n="0"),
    _live("live-url-n-above-max", "URL parameter `n`", n="257"),
    _live("live-url-n-huge", "URL parameter `n`", n="99999999999"),
    _live("live-url-seed-negative", "URL parameter `seed`", seed="-1"),
    _live("live-url-seed-2-to-31", "URL parameter `seed`", seed=str(2**31)),
    _live("live-url-seed-fraction", "URL parameter `seed`", seed="1.5"),
    _live("live-url-prompt-empty", "URL parameter `prompt`", prompt=""),
    _live("live-url-prompt-whitespace", "URL parameter `prompt`", prompt="  \t "),
    _live("live-url-prompt-huge", "URL parameter `prompt`", prompt=HUGE),
    _live("live-url-pair-script", "URL parameter `pair`", pair="<script>alert(1)</script>"),
    _live("live-url-drafter-unknown", "URL parameter `drafter`", drafter="magic"),
    _live("live-url-policy-unknown", "URL parameter `policy`", policy="sometimes"),
    _live("live-url-target-too-long", "URL parameter `target`", pair="custom", target="a/" + "b" * 300),
]

# Typed into the live page's form, then Run pressed. Values are what the widget holds (K, max new tokens and the seed
# are text boxes).
LIVE_FORM = [
    _form("form-prompt-empty", "The prompt is empty", prompt=""),
    _form("form-prompt-whitespace", "The prompt is empty", prompt=" \n\t  "),
    _form("form-prompt-huge", "the limit is 2000", prompt=HUGE),
    _form("form-k-zero", K_BOX + " must be a whole number from 1 to 16, not '0'", k="0"),
    _form("form-k-above-max", K_BOX + " must be a whole number from 1 to 16", k="17"),
    _form("form-k-negative", K_BOX + " must be a whole number from 1 to 16", k="-4"),
    _form("form-k-letters", K_BOX + " must be a whole number from 1 to 16, not 'four'", k="four"),  # issue 23: not 0
    _form("form-k-fraction", K_BOX + " must be a whole number from 1 to 16, not '2.5'", k="2.5"),
    _form("form-temperature-negative", T_BOX + " must be a number from 0 to 2, not '-0.5'", temperature="-0.5"),
    _form("form-temperature-above-max", T_BOX + " must be a number from 0 to 2, not '2.5'", temperature="2.5"),
    _form("form-temperature-letters", T_BOX + " must be a number from 0 to 2, not 'warm'", temperature="warm"),  # not 0
    _form("form-max-new-zero", N_BOX + " must be a whole number from 1 to 256", max_new_tokens="0"),
    _form("form-max-new-above-max", N_BOX + " must be a whole number from 1 to 256", max_new_tokens="257"),
    _form("form-max-new-letters", N_BOX + " must be a whole number from 1 to 256, not 'ten'", max_new_tokens="ten"),
    _form("form-max-new-empty", N_BOX + " must be a whole number from 1 to 256, not ''", max_new_tokens=""),
    # The seed box holds text (numbers past 2**53 do not survive a browser number box): values are strings.
    _form("form-seed-negative", SEED_BOX + " must be a whole number from 0 to 2147483647", seed="-1"),
    _form("form-seed-2-to-31", SEED_BOX + " must be a whole number from 0 to 2147483647", seed=str(2**31)),
    _form("form-seed-past-2-to-53", SEED_BOX + " must be a whole number from 0 to 2147483647", seed="9007199254740993"),
    _form("form-seed-exponent", SEED_BOX + " must be a whole number from 0 to 2147483647", seed="1e23"),
]

# The custom model pair on the live page; "{tmp}" is the test's temporary folder (an allowed model folder there).
NOT_ALLOWED = "must be a Hugging Face hub id (owner/name) or a folder inside the folders this server loads models from"
LIVE_MODELS = [
    Bad("models-unknown-hub-id", "live models", {"target": "no-such-org/no-such-model", "draft": "{draft}"},
        "Could not load 'no-such-org/no-such-model'"),
    Bad("models-missing-folder", "live models", {"target": "{tmp}/missing-folder", "draft": "{draft}"},
        "Could not load"),
    Bad("models-folder-not-a-model", "live models", {"target": "{tmp}/junk", "draft": "{draft}"},
        "Could not load"),
    Bad("models-ids-empty", "live models", {"target": "   ", "draft": ""}, "A custom pair needs a target id"),
    Bad("models-target-nul", "live models", {"target": "owner/model\x00", "draft": "{draft}"},
        "The Target box holds a control character (\\x00)"),
    Bad("models-draft-nul", "live models", {"target": "{target}", "draft": "{draft}\x00"},
        "The Draft box holds a control character (\\x00)"),
    Bad("models-tokenizers-differ", "live models", {"target": "{target}", "draft": "{other_draft}"},
        "tokenizers differ"),
    # Issue 23: a server file or folder outside the allowed model folders, one message whatever it is
    Bad("models-server-file", "live models", {"target": "/etc/passwd", "draft": "{draft}"}, NOT_ALLOWED),
    Bad("models-server-folder", "live models", {"target": "/etc", "draft": "{draft}"}, NOT_ALLOWED),
    Bad("models-server-missing", "live models", {"target": "/no/such/folder", "draft": "{draft}"}, NOT_ALLOWED),
    Bad("models-climbs-out", "live models", {"target": "{tmp}/../../../../etc", "draft": "{draft}"}, NOT_ALLOWED),
    Bad("models-draft-server-file", "live models", {"target": "{target}", "draft": "/etc/shadow"}, NOT_ALLOWED),
    # Issue 39: a URL was read as a folder under the project, and the message showed the server's install path
    Bad("models-url", "live models", {"target": "http://127.0.0.1:1/x", "draft": "{draft}"}, "is a web address"),
    Bad("models-draft-url", "live models", {"target": "{target}", "draft": "https://example.org/m"},
        "is a web address"),
]



def _cli(id_: str, expect: str, *argv: str) -> Bad:
    return Bad(id_, "CLI", {"argv": list(argv)}, expect)


# Arguments added to a working command line (tiny local target and draft from the test's temporary folder).
CLI = [
    _cli("cli-prompt-empty", "The prompt is empty", "--prompt", ""),
    _cli("cli-prompt-whitespace", "The prompt is empty", "--prompt", "  \n\t "),
    _cli("cli-prompt-huge", "exceed the target's context", "--prompt", "the " * 25_000),
    _cli("cli-k-zero", "-k must be a whole number from 1 to 16, not 0.", "-k", "0"),
    _cli("cli-k-above-max", "-k must be a whole number from 1 to 16, not 17.", "-k", "17"),
    _cli("cli-k-word", "invalid int value", "-k", "four"),
    _cli("cli-temperature-negative", "--temperature must be a number from 0 to 2, not -0.5.", "--temperature", "-0.5"),
    _cli("cli-temperature-nan", "--temperature must be a number from 0 to 2, not nan.", "--temperature", "nan"),
    _cli("cli-temperature-inf", "--temperature must be a number from 0 to 2, not inf.", "--temperature", "inf"),
    _cli("cli-max-new-zero", "--max-new-tokens must be a whole number from 1 to 256, not 0.", "--max-new-tokens", "0"),
    _cli("cli-max-new-beyond-the-range", "--max-new-tokens must be a whole number from 1 to 256, not 100000.",
         "--max-new-tokens", "100000"),
    _cli("cli-seed-negative", "--seed must be a whole number from 0 to 2147483647, not -1.", "--seed", "-1"),
    _cli("cli-seed-2-to-64", "--seed must be a whole number from 0 to 2147483647", "--seed", str(2**64)),
    _cli("cli-seed-fraction", "invalid int value", "--seed", "1.5"),
    _cli("cli-top-p-zero", "--top-p must be a number from 0.01 to 1, not 0.0.", "--top-p", "0"),
    _cli("cli-top-p-nan", "--top-p must be a number from 0.01 to 1, not nan.", "--top-p", "nan"),
    _cli("cli-threads-negative", "argument --threads: must be at least 1", "--threads", "-1"),
    _cli("cli-device-unknown", "argument --device: must be cpu", "--device", "tpu"),
    _cli("cli-dtype-unknown", "Unknown dtype 'float8'", "--dtype", "float8"),
    _cli("cli-drafter-unknown", "invalid choice", "--drafter", "magic"),
    _cli("cli-early-exit-zero-layers", "argument --early-exit-layers: must be at least 1", "--drafter", "early_exit",
         "--early-exit-layers", "0"),
    _cli("cli-unknown-hub-id", "Could not load 'no-such-org/no-such-model'", "--target", "no-such-org/no-such-model"),
    _cli("cli-missing-folder", "Could not load", "--target", "{tmp}/missing-folder"),
    _cli("cli-tokenizers-differ", "tokenizers differ", "--draft", "{other_draft}"),
]

# Only a real browser shows these (tests/browser/test_bad_input.py).
BROWSER = [
    Bad("browser-calc-script-tag", "browser", {"url": "calculator?k=<script>alert(1)</script>&alpha=55"},
        "URL parameter k"),
    Bad("browser-calc-very-long-url", "browser", {"url": "calculator?alpha=55&k=" + "9" * 8_000}, "URL parameter k"),
    Bad("browser-calc-nul-byte", "browser", {"url": "calculator?alpha=55&k=6%00"}, "URL parameter k"),
    Bad("browser-calc-repeated-keys", "browser", {"url": "calculator?alpha=55&k=5&k=abc"}, "URL parameter k"),
    Bad("browser-unknown-page", "browser", {"url": "no-such-page?x=1"}, "Page not found"),
    Bad("browser-live-huge-prompt-typed", "browser", {"prompt": HUGE}, "the limit is 2000"),
    Bad("browser-live-k-typed-beyond", "browser", {"k": "99"}, K_BOX + " must be a whole number from 1 to 16"),
    Bad("browser-live-cancel-mid-run", "browser", {"action": "Cancel"}, "Cancelled"),
    Bad("browser-live-switch-page-mid-run", "browser", {"action": "Speedup calculator"}, "Cancelled"),
]

CAMPAIGN: list[Bad] = CALCULATOR_URL + LIVE_URL + LIVE_FORM + LIVE_MODELS + CLI + BROWSER


def by_where(where: str) -> list[Bad]:
    return [b for b in CAMPAIGN if b.where == where]
