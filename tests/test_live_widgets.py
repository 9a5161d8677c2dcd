"""Token chips' HTML and the playback timer rule (pure parts of the live page's widgets)."""

import re

from app.live import playback, tokens
from specsim.lesson import replay
from tests.live_traces import hand_trace


def test_chips_escape_markup_and_show_whitespace():
    html = tokens.chips_html(replay.chips_at(hand_trace(), 3))
    assert "<b>" not in html.replace("<br>", "") and "&lt;b&gt;" in html  # token ' <b>' and prompt 'Hi <you>'
    assert "&lt;you&gt;" in html
    assert '<span class="sx-ws">↵</span><br>' in html  # the newline token is visible and still breaks the line
    assert html.count("sx-chip sx-accepted") == 3


def test_chip_titles_carry_p_q_and_the_acceptance_ratio():
    chips = replay.chips_at(hand_trace(greedy=False), 0)
    rejected = next(c for c in chips if c.role == "rejected")
    title = tokens.chip_title(rejected)
    assert "p(x) = 0.1000" in title and "q(x) = 0.5000" in title and "min(1, p/q) = 0.2000" in title
    assert "u = 0.7300 → rejected" in title
    html = tokens.chips_html(chips)
    titles = re.findall(r'title="([^"]*)"', html)
    assert any("drawn from norm(max(0, p − q))" in t for t in titles)  # the +1 token says how it was chosen


def test_tick_waits_a_full_interval_then_advances_and_stops_at_the_end():
    assert playback.tick(0, 5, last_tick=10.0, now=10.1, interval=1.0) == (0, True, 10.0)
    assert playback.tick(0, 5, last_tick=10.0, now=11.0, interval=1.0) == (1, True, 11.0)
    assert playback.tick(3, 5, last_tick=10.0, now=11.0, interval=1.0) == (4, False, 11.0)
    assert playback.tick(4, 5, last_tick=10.0, now=11.0, interval=1.0) == (4, False, 10.0)


def test_playing_a_whole_run_visits_every_iteration_once():
    step, playing, last, now, seen = 0, True, 0.0, 0.0, [0]
    while playing:
        now += 0.5
        step, playing, last = playback.tick(step, 6, last, now, 0.5)
        seen.append(step)
    assert seen == [0, 1, 2, 3, 4, 5]


def test_clamp():
    assert [playback.clamp(s, 3) for s in (-2, 0, 2, 9)] == [0, 0, 2, 2]


def test_a_long_prompt_shows_its_tail_and_keeps_the_whole_on_hover():
    from specsim.lesson.replay import Chip

    prompt = "start " + "x" * 500 + " end"
    html = tokens.chips_html([Chip(prompt, "prompt")])
    assert "…" in html and " end" in html and f'title="{prompt}"' in html
    body = re.search(r'title="[^"]*">(.*?)</span>', html).group(1)
    assert body.startswith("…") and len(body) == 1 + tokens.PROMPT_TAIL  # the visible part is cut
