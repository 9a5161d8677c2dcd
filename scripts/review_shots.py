"""Screenshots of pages for a reader's review, one viewport at a time, top to bottom (a learner's scroll).

    .venv/bin/python scripts/review_shots.py home calculator verify ...   # url paths; none: every lesson page
    .venv/bin/python scripts/review_shots.py --open-tabs calculator       # also every tab of a tabbed page

Writes out/review/<page>-NN.png (1400 × 1000 each) and out/review/<page>.txt (the page's text, for quoting).
Starts the app on a free port and drives Debian's chromium (Playwright's own browser is never downloaded).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from app.layout import all_pages  # noqa: E402
from tests.browser.conftest import IDLE, VIEWPORT  # noqa: E402
from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402

OUT = ROOT / "out" / "review"
MAIN = "[data-testid='stMain']"


def shoot(page, name: str, out: Path = OUT) -> int:
    page.wait_for_function(IDLE, timeout=120_000)
    page.wait_for_timeout(800)
    height = page.evaluate(f"() => document.querySelector(\"{MAIN}\").scrollHeight")
    n = 0
    for top in range(0, max(1, int(height)), VIEWPORT["height"] - 100):
        page.evaluate(f"() => document.querySelector(\"{MAIN}\").scrollTo(0, {top})")
        page.wait_for_timeout(250)
        n += 1
        page.screenshot(path=str(out / f"{name}-{n:02d}.png"))
    (out / f"{name}.txt").write_text(page.locator(MAIN).inner_text(), encoding="utf-8")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="url paths (default: every page)")
    parser.add_argument("--open-tabs", action="store_true", help="also shoot every tab of a page with tabs")
    parser.add_argument("--answers", action="store_true",
                        help="start with 'Show answers without guessing' on (default: the pages ask first)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the shots go (default {OUT})")
    args = parser.parse_args(argv)
    out = args.out
    paths = args.paths or [p.url_path for p in all_pages()]
    out.mkdir(parents=True, exist_ok=True)
    with running_app(env={"SPECSIM_SHOW_ANSWERS": "1" if args.answers else "0"}) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=VIEWPORT).new_page()
        for i, path in enumerate(paths, start=1):
            page.goto(f"{url}/{path}")
            page.wait_for_selector("h1", timeout=120_000)
            name = f"{i:02d}-{path}"
            print(name, shoot(page, name, out), "shots", flush=True)
            if args.open_tabs:
                tabs = page.locator("[data-baseweb='tab']")
                for t in range(1, tabs.count()):
                    label = tabs.nth(t).inner_text().strip()
                    tabs.nth(t).click()
                    print(f"{name} tab {label}", shoot(page, f"{name}-tab{t}", out), "shots", flush=True)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
