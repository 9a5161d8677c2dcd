"""Greedy identity on a GPU, as measured: the bench's rows from the first GPU run (an NVIDIA H200, stock kernels,
docs/measurements/gpu-h200-2026-12-04/), kept as data so the page computes its sentence from them.

``python -m specsim.lesson.gpu_identity`` rebuilds ``assets/measurements/gpu_identity.json`` from those raw bench
outputs;
a test checks that the asset still says what they say.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from specsim.core.paths import ASSETS, REPO_ROOT

ASSET = ASSETS / "measurements" / "gpu_identity.json"
RAW = REPO_ROOT / "docs" / "measurements" / "gpu-h200-2026-12-04"
SOURCES = {"bfloat16": "bench.txt", "float32": "f32.txt"}
GPU = "NVIDIA H200"

_HEAD = re.compile(r"\((\w+) on (\w+), [^)]*\); (\d+) held-out prompts x (\d+) new tokens, greedy")


@dataclass(frozen=True)
class Row:
    """One bench row: a drafter at one K in one dtype, and whether its greedy tokens equalled plain decoding's."""

    drafter: str
    k: int
    dtype: str
    identical: bool


def parse_bench(text: str) -> tuple[list[Row], int, int]:
    """The rows of ``python -m specsim.bench``'s table, with its prompts and tokens per prompt."""
    head = _HEAD.search(text)
    if head is None:
        raise ValueError("not a bench output: no '(dtype on device, …); N held-out prompts x T new tokens' line")
    dtype, prompts, tokens = head[1], int(head[3]), int(head[4])
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["drafter", "K"])
    columns = lines[start].split()
    at = columns.index("identical") - len(columns)  # from the right: the drafter's name is one word, other cells too
    rows = []
    for line in lines[start + 2:]:
        cells = line.split()
        if not cells or not cells[1].isdigit():
            break
        rows.append(Row(cells[0], int(cells[1]), dtype, cells[at] == "yes"))
    return rows, prompts, tokens


def parse_passes(text: str) -> dict[str, list[float]]:
    """The bench's pass table: n = 1, 2, … new tokens and the median ms of a target pass over them."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["n", "new", "tokens"])
    ns = [int(x) for x in lines[start].split()[3:]]
    ms = [float(x) for x in lines[start + 1].split()[2:]]
    if len(ns) != len(ms):
        raise ValueError("the pass table's n row and ms row differ in length")
    return {"n": ns, "ms": ms}


def build(raw: Path = RAW) -> dict:
    rows, prompts, tokens, passes = [], 0, 0, {}
    for dtype, file in SOURCES.items():
        text = (raw / file).read_text(encoding="utf-8")
        got, prompts, tokens = parse_bench(text)
        rows += got
        passes[dtype] = parse_passes(text)
    gpu = (raw / "gpu.txt").read_text(encoding="utf-8")
    return {"gpu": GPU if GPU in gpu else gpu.splitlines()[1].split(",")[0], "prompts": prompts, "tokens": tokens,
            "rows": [asdict(r) for r in rows], "passes": passes, "source": str(raw.relative_to(REPO_ROOT))}


def load(path: Path = ASSET) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def sentence(data: dict) -> str:
    """What the measurement says about identity on a GPU, counted from its rows."""
    rows = [Row(**r) for r in data["rows"]]

    def counted(dtype: str, drafter: str | None = None) -> tuple[int, int]:
        chosen = [r for r in rows if r.dtype == dtype and (drafter is None or r.drafter == drafter)]
        return sum(not r.identical for r in chosen), len(chosen)

    bf_bad, bf_all = counted("bfloat16")
    f32_bad, f32_all = counted("float32")
    per = ", ".join(f"{d} at {counted('bfloat16', d)[0]} of its {counted('bfloat16', d)[1]} Ks"
                    for d in sorted({r.drafter for r in rows if r.dtype == "bfloat16"}))
    return (f"**On a GPU, identity is observed, not guaranteed.** specsim's position-invariant kernels are CPU "
            f"code; on a GPU the target runs the stock kernels. Measured on an {data['gpu']} ({data['prompts']} "
            f"held-out prompts × {data['tokens']} greedy tokens for each drafter and K): in bfloat16, {bf_bad} of "
            f"the {bf_all} drafter-and-K settings wrote other tokens than plain decoding on at least one prompt "
            f"({per}); in float32, {f32_bad} of {f32_all} did. Same algorithm, same weights: only the rounding of a "
            "pass over K + 1 tokens differs from a one-token pass's, and bfloat16's coarser rounding flips "
            "near-ties more often.")


def main(argv: list[str] | None = None) -> int:
    data = build()
    ASSET.parent.mkdir(parents=True, exist_ok=True)
    ASSET.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(sentence(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
