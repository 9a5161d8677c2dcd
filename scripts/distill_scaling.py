"""The draft's data-scaling curve: held-out α against answer tokens, as a table and a figure for docs/.

    python -m specsim.distill eval --drafts DRAFT_FOLDER...   # held-out α (and c) of each trained draft
    python scripts/distill_scaling.py collect DRAFT...        # append each draft's held-out result to the jsonl
    python scripts/distill_scaling.py figure                  # docs/distill-scaling.png from the jsonl

``collect`` reads ``ROOT/eval/<draft>.json`` (written by the ``eval`` stage) and the draft's ``draft.json``
(its training data and steps). ``figure`` draws with plotly and photographs the chart with the
system's Chromium (the one the browser tests use), so no image-export package is needed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "docs" / "measurements" / "distill-scaling.jsonl"
FIGURE = ROOT / "docs" / "distill-scaling.png"


def collect(names: list[str]) -> None:
    from specsim.distill.__main__ import default_root

    distill = default_root()
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()] if ROWS.is_file() else []
    for name in names:
        folder = Path(name) if "/" in name else distill / "drafts" / name
        info = json.loads((folder / "draft.json").read_text())
        config = json.loads((folder / "config.json").read_text())
        res = json.loads((distill / "eval" / f"{folder.name}.json").read_text())
        o = res["overall"]
        row = {"draft": folder.name, "answer_tokens": info.get("answer_tokens"), "records": info.get("records"),
               "steps": info.get("steps_run"), "batch": info.get("batch"), "layers": config["num_hidden_layers"],
               "width": config["hidden_size"], "vocab": info.get("vocab"),
               "source": info.get("source", "records"), "val_top1": info.get("val_top1"),
               "alpha": o["alpha"], "position": o["position"], "accepted_per_chain": o["accepted_per_chain"],
               "chains": o["chains"], "domains": {d: v["alpha"] for d, v in res["domains"].items()},
               "target_dtype": res.get("target_dtype", "bfloat16"), "k": res["k"]}
        rows = [r for r in rows if r["draft"] != row["draft"]] + [row]
        print(json.dumps({k: row[k] for k in ("draft", "answer_tokens", "steps", "alpha")}))
    ROWS.parent.mkdir(parents=True, exist_ok=True)
    ROWS.write_text("".join(json.dumps(r) + "\n" for r in rows))


def figure(prefix: str = "s2x256-") -> None:
    import plotly.graph_objects as go
    from playwright.sync_api import sync_playwright

    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    curve = sorted((r for r in rows if r["draft"].startswith(prefix) and r["steps"] == 900),
                   key=lambda r: r["answer_tokens"])
    x = [r["answer_tokens"] / 1e6 for r in curve]
    fig = go.Figure()
    fig.add_scatter(x=x, y=[r["alpha"] for r in curve], mode="lines+markers", name="held-out α (K = 5 chains)")
    fig.add_scatter(x=x, y=[r["position"][0] for r in curve], mode="lines+markers", name="position 1",
                    line={"dash": "dot"})
    fig.add_scatter(x=x, y=[r["val_top1"] for r in curve], mode="lines+markers", name="held-in top-1 (validation)",
                    line={"dash": "dash"})
    for name, label, symbol in (("s2x384-all", "2x384, same steps and data", "diamond"),
                                ("s1x256-all", "1x256, same steps and data", "x")):
        arch = [r for r in rows if r["draft"] == name]
        if arch:
            fig.add_scatter(x=[arch[0]["answer_tokens"] / 1e6], y=[arch[0]["alpha"]], mode="markers",
                            name=f"held-out α, {label}", marker={"symbol": symbol, "size": 11})
    fig.add_hline(y=0.5, line={"color": "grey", "dash": "dot"}, annotation_text="goal α = 0.5")
    fig.update_layout(title="Standalone 2x256 draft, 900 steps of 32 answers: held-out acceptance against data",
                      xaxis={"title": "answer tokens the draft learnt from (millions)", "type": "log",
                             "tickvals": x, "ticktext": [f"{v:.2g}" for v in x]},
                      yaxis={"title": "acceptance", "range": [0, 0.6]}, width=900, height=560,
                      template="plotly_white", legend={"orientation": "h", "y": -0.22})
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "fig.html"
        fig.write_html(page, include_plotlyjs=True, full_html=True, config={"staticPlot": True})
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium")
            tab = browser.new_page(viewport={"width": 920, "height": 580})
            tab.goto(page.as_uri())
            tab.wait_for_selector(".main-svg")
            tab.locator(".plotly-graph-div").screenshot(path=str(FIGURE))
            browser.close()
    print("wrote", FIGURE.relative_to(ROOT))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # run as a script from any folder: the repo's specsim, not an installed one
    if sys.argv[1:2] == ["collect"]:
        collect(sys.argv[2:])
    elif sys.argv[1:2] == ["figure"]:
        figure()
    else:
        raise SystemExit(__doc__)
