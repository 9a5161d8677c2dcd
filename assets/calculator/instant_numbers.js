// The calculator's four headline numbers, recomputed in the browser the moment a slider moves, so they change
// within a frame instead of after a round trip to the server. The script run that follows draws specsim's own
// numbers over them (specsim.measure.analytics stays the source of truth); tests/browser/test_instant_numbers.py checks,
// for every slider position, that the two agree on every digit shown.

// Mirrors specsim.measure.analytics.tokens_per_loop: the closed form (1 - a^(K+1)) / (1 - a), and K + 1 at a = 1.
export function tokensPerLoop(alpha, k) {
  if (Math.abs(alpha - 1) <= 1e-12) return k + 1;
  return (1 - alpha ** (k + 1)) / (1 - alpha);
}

// The four metrics as specsim.measure.analytics computes them (same operations, same order).
export function headline(k, alphaPct, c, v) {
  const tokens = tokensPerLoop(alphaPct / 100, k);
  const cost = k * c + v;  // analytics.cost_per_loop
  return {prefix: tokens - 1, tokens, cost, speedup: tokens / cost};
}

// Python's f"{x:.2f}" (app.calculator.text.fmt), or null when x lies so close to a rounding tie (x.xx5) that the last
// bit, which a browser's pow can set differently from numpy's, could decide the digit: the browser then shows
// nothing new and leaves that case to the script run.
export function fmt(x) {
  const hundredths = x * 100;
  if (Math.abs(hundredths - Math.floor(hundredths) - 0.5) < 1e-9) return null;
  return x.toFixed(2);
}

// Python's f"{x:.2f}" for a number computed with the same IEEE operations in both languages (the cost, K·c + v: no
// pow), so its bits are Python's: toFixed agrees except on an exact binary tie (x.125, x.375, …: x·8 odd), where
// Python rounds half to even and toFixed up; such a cost is left to the script run.
export function fmtExact(x) {
  if (Number.isInteger(x * 8) && !Number.isInteger(x * 4)) return null;
  return x.toFixed(2);
}

// The four metrics' texts, or null when one of them is too close to call.
export function shown(k, alphaPct, c, v) {
  const n = headline(k, alphaPct, c, v);
  const texts = [fmt(n.prefix), fmt(n.tokens), fmtExact(n.cost), fmt(n.speedup)];
  if (texts.includes(null)) return null;
  texts[3] += "×";
  return texts;
}

function byLabel(testId, label) {
  return Array.from(document.querySelectorAll(`[data-testid='${testId}']`)).find(
    (el) => el.innerText.trim().startsWith(label));
}

function sliderValue(label) {
  const input = byLabel("stSlider", label)?.querySelector("input[type='range']");
  return input ? Number(input.value) : null;
}

// Put `text` into a metric's value without replacing its text node, which React keeps and later rewrites.
function setText(el, text) {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let node = walker.nextNode();
  while (node && !node.nodeValue.trim()) node = walker.nextNode();
  if (node && node.nodeValue !== text) node.nodeValue = text;
}

// One observer for the page, whatever the number of renders: each render only brings the server's latest data.
let observer = null;
let latest = null;

function update() {
  const [k, alphaPct, c] = latest.sliders.map(sliderValue);
  if ([k, alphaPct, c].some((x) => x === null || Number.isNaN(x))) return;
  const texts = shown(Math.round(k), Math.round(alphaPct), Number(c.toFixed(3)), latest.v);
  if (texts === null) return;  // the script run will say
  latest.metrics.forEach((label, i) => {
    const value = byLabel("stMetric", label)?.querySelector("[data-testid='stMetricValue']");
    if (value) setText(value, texts[i]);
  });
}

export default function ({data}) {
  window.specsimInstantNumbers = {headline, fmt, shown};  // for the browser tests' cross-check
  latest = data;
  // A re-render can touch a slider's attributes before this render's data arrives (after v was typed, say): the
  // observer then computed with the previous v and wrote over the server's numbers. Recompute with the new data.
  update();
  if (observer === null) {
    observer = new MutationObserver((records) => {
      if (records.some((r) => r.target instanceof HTMLInputElement && r.target.type === "range")) update();
    });
    observer.observe(document.body, {subtree: true, attributes: true, attributeFilter: ["aria-valuetext", "value"]});
  }
  return () => {
    observer?.disconnect();
    observer = null;
  };
}
