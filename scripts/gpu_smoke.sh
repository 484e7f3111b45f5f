#!/usr/bin/env bash
# GPU smoke test of the paper profile's code paths with the tiny models (docs/gpu.md).
#
#   scripts/gpu_smoke.sh            # from the repository root, in the project's environment
#
# Runs `pytest -m gpu` (tests/e2e/test_gpu.py): steering on CUDA against the CPU, Qwen-Image and
# SD3 (bf16 / fp16, batches of 3, steered through the encoder hook), the Qwen3-VL-MoE and
# Gemma 3 judges (bf16, batches of 4), CLIP through transformers and open_clip (fp16 / bf16),
# the Qwen3 embedder and the Qwen3-VL rewriter, and `dvc repro` of the tiny profile on CUDA
# in the paper's dtypes. Nothing is downloaded. About 5 minutes on one H100/H200-class GPU;
# the whole run is capped at 10 minutes. Exit status 0: every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ]; then if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python; fi; fi
"$PYTHON" - <<'PY'
import sys, torch
if not torch.cuda.is_available():
    sys.exit("gpu_smoke: torch sees no CUDA device (torch %s, CUDA build %s)" % (torch.__version__, torch.version.cuda))
print("gpu_smoke: %s, torch %s, CUDA %s" % (torch.cuda.get_device_name(0), torch.__version__, torch.version.cuda))
PY
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false
export PATH="$(dirname "$(command -v "$PYTHON")"):$PATH"  # dvc from the same environment
start=$(date +%s)
timeout 600 "$PYTHON" -m pytest -q -m gpu -p no:cacheprovider --durations=5 tests/e2e/test_gpu.py "$@"
echo "gpu_smoke: passed in $(( $(date +%s) - start )) s"
