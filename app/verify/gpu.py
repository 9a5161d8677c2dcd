"""The "Is verification free here?" page's GPU measurement: v(n) timed on the project's H200 run beside this machine's
committed CPU curve, and why a small model's pass on a GPU is set by kernel launches, not by memory."""

from __future__ import annotations

import statistics

import plotly.graph_objects as go

from app.palette import DRAFT, MUTED, PLAIN, TARGET
from specsim.lesson import roofline
from specsim.measure.pathbench import PathRun


def gpu_v(data: dict, dtype: str) -> tuple[list[int], list[float]]:
    """n and v(n) of one dtype's pass table in the GPU run: each pass's ms over the one-token pass's."""
    passes = data["passes"][dtype]
    return passes["n"], [ms / passes["ms"][0] for ms in passes["ms"]]


def gpu_figure(data: dict, cpu: PathRun | None) -> go.Figure:
    fig = go.Figure()
    for dtype, colour in (("bfloat16", TARGET), ("float32", PLAIN)):
        ns, v = gpu_v(data, dtype)
        fig.add_scatter(x=ns, y=v, mode="lines+markers", name=f"{data['gpu']}, {dtype} (measured)",
                        line={"color": colour, "width": 3},
                        hovertemplate=f"{dtype}, n = %{{x}}: %{{y:.2f}}<extra></extra>")
    if cpu is not None:
        row = cpu.row("one call")
        ns = [1, *sorted(row.v)]
        fig.add_scatter(x=ns, y=[1.0, *(row.v[n] for n in ns[1:])], mode="lines+markers",
                        name=f"this app's CPU path on {cpu.machine.split(' |')[0]}, one C++ call (measured to "
                             f"n = {ns[-1]})",
                        line={"color": DRAFT, "dash": "dash"},
                        hovertemplate="CPU, n = %{x}: %{y:.2f}<extra></extra>")
    ns = data["passes"]["bfloat16"]["n"]
    fig.add_scatter(x=ns, y=[roofline.roofline_pass_cost(n, roofline.GPU_RIDGE) for n in ns], mode="lines",
                    name=f"roofline of a generic GPU, R = {roofline.GPU_RIDGE}", line={"color": MUTED, "dash": "dot"})
    fig.update_layout(title="Measured v(n): a GPU beside a CPU", height=340,
                      xaxis={"title": "new tokens in the pass (n)", "dtick": 2},
                      yaxis={"title": "v(n)", "rangemode": "tozero", "tickformat": ".2f"},
                      legend={"orientation": "h", "y": -0.3}, margin={"t": 50, "b": 10})
    return fig


def gpu_text(data: dict, cpu: PathRun | None = None, model: roofline.Transformer = roofline.SMOLLM2_135M,
             chip: roofline.Accelerator = roofline.H200) -> str:
    """What the GPU curve shows and what set it, every figure read from the run or the datasheet."""
    passes = data["passes"]["bfloat16"]
    one = passes["ms"][0]
    _, v = gpu_v(data, "bfloat16")
    read_ms = model.weight_bytes / (chip.tb_per_s * 1e12) * 1e3
    _, v32 = gpu_v(data, "float32") if "float32" in data["passes"] else ([], [])
    f32_note = (f"(The float32 curve's dips below 1, to {min(v32):.2f}, cannot be real, since a wider pass does no "
                f"less work: they show this run's timing noise, up to {1 - min(v32):.0%} at a single point on a shared "
                "host, so read the curves by their medians, not point by point.) "
                if v32 and min(v32) < 1 else "")
    return (f"**A measurement on a GPU.** The project ran the bundled target on an {data['gpu']} (stock kernels, "
            f"{len(passes['n'])} pass widths). A one-token bfloat16 pass took {one:.1f} ms and a pass over "
            f"2 to {passes['n'][-1]} tokens {min(passes['ms'][1:]):.1f}–{max(passes['ms'][1:]):.1f} ms: v(n) steps up "
            f"at n = 2 and is flat after it (median {statistics.median(v[1:]):.2f}), where a roofline says 1.00 this "
            f"far below the ridge (R = {chip.ridge_tokens:.0f} for this chip's datasheet). {f32_note}The flat part "
            "has another cause than memory. Reading "
            f"{model.name}'s {model.weight_bytes / 1e6:.0f} MB of weights at the datasheet's "
            f"{chip.tb_per_s:g} TB/s takes {read_ms:.2f} ms, {read_ms / one:.1%} of the pass: the rest is the host "
            "launching the pass's kernels, layer after layer, whatever their width. The bfloat16 step at n = 2 is not "
            "the weights either, and its cause was not timed apart: the float32 run shows no such step, so it is "
            "not a cost every pass over two or more tokens pays. A model this small on a GPU is "
            "*launch-bound*; the flat v is real, but the draft's passes are launch-bound too, so its c is far from "
            "its share of the bytes. "
            + (f"That is also why this app's CPU path, at {cpu.row('one call').pass_ms:.1f} ms a one-token pass (on "
               f"{cpu.machine.split(' |')[0]}), {'beats' if cpu.row('one call').pass_ms < one else 'nearly matches'} "
               "this GPU run on this model: it runs the whole pass as one C++ call, with no launches. "
               if cpu is not None else "")
            + "Serving stacks remove most of the launch cost by recording a pass as a *CUDA graph* and replaying it "
            "with one launch; this measurement ran eager PyTorch, without one, so it says nothing about how fast a "
            "GPU can run a small model. "
            + "A model large enough to fill the GPU's memory bandwidth is where the "
            "memory-bound picture above holds.")
