#!/usr/bin/env bash
# GPU speed checks for one NVIDIA H200 (no network needed; every step has a timeout and the
# timeouts add up to 575 s, so the script ends within 10 minutes).
#
#   bash benchmarks/gpu.sh prepare   # HERE, once, in .venv: copy AntiBERTy's shipped weights in
#                                    # bf16 (~52 MB) to build/gpu_carry/ (ignored by git)
#   bash benchmarks/gpu.sh           # ON THE GPU MACHINE (its python3 has torch + transformers),
#                                    # with build/gpu_carry carried along (device run: carry
#                                    # ["build/gpu_carry"]); writes JSON files to $OUT if set
#   SMOKE=1 bash benchmarks/gpu.sh   # HERE, in .venv, on the CPU: every step at toy sizes, to
#                                    # check the script's plumbing (flags, files) before a GPU run
#
# Prints, each against a baseline timed in the same run:
#   1. the batched Glauber sampler on a randomly initialised BERT-base-sized BertForMaskedLM in
#      bf16 (n = 20): chain-steps/s vs the per-chain full-logits loop, and model FLOP/s as a
#      fraction of bf16 torch.matmul FLOP/s on the model's FFN shape (MFU against the measured
#      matmul, not the data-sheet peak);
#      1b. the same with CUDA graphs (HFMaskedLM(cuda_graphs=True): one captured graph per
#          input shape, replayed); 1c. fp32 weights under bf16 autocast instead of bf16 weights;
#   2. the same on AntiBERTy (bf16);
#   2b. the CUDA-only tests (graph capture vs eager scores), if pytest is installed there;
#   3. exact worst-start t_mix of Ising on the n-cycle (2^12, 2^14, 2^15, 2^16 states) with
#      glauber.exact.mixing's torch float64 backends on CUDA: dense squaring up to 2^15
#      states (each stored power is 8 S^2 bytes: 8 GiB at 2^15, 32 GiB at 2^16, too many for one
#      H200) and sparse point-mass stepping at every size (two S x b blocks), vs the numpy
#      backends at 2^12. An out-of-memory error is printed and recorded rather than hidden.
#   4. the exact 4-site AntiBERTy window (160,000 states, 32,000 factor classes): score table
#      (32,000 forwards) on the device vs the sampler's forwards/s, then the float64 factor
#      M = B A (7.6 GiB) squared on the device vs a same-size torch.matmul
#      (benchmarks/gpu_window.py). The sampler's MFU is part 1.
set -uo pipefail
cd "$(dirname "$0")/.."
CARRY=build/gpu_carry

if [ "${1:-}" = prepare ]; then
    set -e
    . .venv/bin/activate
    python - "$CARRY" <<'PY'
import shutil, sys
from pathlib import Path

import torch

from glauber.mlm_backend import antiberty_files

model_dir, vocab = antiberty_files()
site = Path(sys.argv[1]) / "site" / "antiberty"
target = site / "trained_models" / "AntiBERTy_md_smooth"
target.mkdir(parents=True, exist_ok=True)
(site / "__init__.py").write_text('"""AntiBERTy weights (bf16 copy) for benchmarks/gpu.sh."""\n')
shutil.copy(vocab, site / "trained_models" / "vocab.txt")
shutil.copy(model_dir / "config.json", target / "config.json")
state = torch.load(model_dir / "pytorch_model.bin", map_location="cpu", weights_only=True)
state = {k: v.bfloat16() if v.is_floating_point() else v for k, v in state.items()}
torch.save(state, target / "pytorch_model.bin")
print(f"wrote {site} ({sum(p.stat().st_size for p in site.rglob('*') if p.is_file()) / 2**20:.0f} MiB)")
PY
    exit 0
fi

PY=${PYTHON:-python3}
export PYTHONPATH="$PWD:$PWD/$CARRY/site${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RESULTS=${OUT:-/tmp/glauber-gpu}
mkdir -p "$RESULTS"
status=0

if [ "${SMOKE:-0}" = 1 ]; then  # toy sizes on the CPU; fp16 autocast and graph capture need CUDA
    DEVICE=cpu; BIG_BATCHES="4 8"; BIG_STEPS="1 1"; BATCHES="4"; STEPS="1"
    TORCH_SIZES="4 5"; TORCH_BIG=6; SQUARE_UP_TO=5; BASE_SITES=4; HEAD_BATCH=4
    WINDOW="--sites 99-100 --batch-size 16 --squarings 2 --dtype none"
else
    DEVICE=cuda; BIG_BATCHES="256 1024 4096 16384"; BIG_STEPS="20 20 10 5"
    BATCHES="256 4096"; STEPS="20 10"; TORCH_SIZES="12 14 15"; TORCH_BIG=16; SQUARE_UP_TO=15
    BASE_SITES=12; HEAD_BATCH=1024
    WINDOW="--sites 99-102 --batch-size 1024 --squarings 4"
fi
SAMPLER="$PY benchmarks/sampler.py --device $DEVICE --baseline-chains 4 --baseline-steps 2"
SAMPLER="$SAMPLER --head-batch $HEAD_BATCH"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || [ "${SMOKE:-0}" = 1 ] || status=1
$PY -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__)"

echo "== 1. sampler MFU, random BERT-base (bf16)"
timeout 95 $SAMPLER --model bert-base-random --dtype bfloat16 \
    --batch-sizes $BIG_BATCHES --steps $BIG_STEPS \
    --json "$RESULTS/gpu_sampler_bert_base.json" || { echo "FAILED (1)"; status=1; }

echo "== 1b. sampler, random BERT-base, bf16 weights, CUDA graphs"
timeout 55 $SAMPLER --model bert-base-random --dtype bfloat16 --cuda-graphs \
    --batch-sizes $BATCHES --steps $STEPS \
    --json "$RESULTS/gpu_sampler_bert_base_graphs.json" || { echo "FAILED (1b)"; status=1; }

echo "== 1c. sampler, random BERT-base, fp32 weights under bf16 autocast"
timeout 55 $SAMPLER --model bert-base-random --autocast bfloat16 \
    --batch-sizes $BATCHES --steps $STEPS \
    --json "$RESULTS/gpu_sampler_bert_base_autocast.json" || { echo "FAILED (1c)"; status=1; }

echo "== 2. sampler MFU, AntiBERTy (bf16)"
if [ -f "$CARRY/site/antiberty/trained_models/AntiBERTy_md_smooth/pytorch_model.bin" ] \
    || $PY -c "import antiberty" 2>/dev/null; then
    timeout 75 $SAMPLER --model antiberty --dtype bfloat16 \
        --batch-sizes $BIG_BATCHES --steps $BIG_STEPS \
        --json "$RESULTS/gpu_sampler_antiberty.json" || { echo "FAILED (2)"; status=1; }
else
    echo "SKIPPED (2): no AntiBERTy weights; run 'bash benchmarks/gpu.sh prepare' here and carry $CARRY"
    status=1
fi

echo "== 2b. CUDA-only tests: captured graphs vs eager scores"
if $PY -c "import pytest, hypothesis" 2>/dev/null; then
    timeout 30 $PY -m pytest -q -p no:cacheprovider tests/mlm_backend/test_static_shapes.py -k cuda \
        || { echo "FAILED (2b)"; status=1; }
else
    echo "SKIPPED (2b): pytest/hypothesis not installed on this machine"
fi

echo "== 3. exact t_mix, torch float64 backends (squaring to 2^$SQUARE_UP_TO, stepping to 2^$TORCH_BIG)"
EXACT="$PY benchmarks/exact_chain.py --parts torch_mixing --max-squaring-sites $SQUARE_UP_TO --device $DEVICE"
timeout 80 $EXACT --torch-sizes $TORCH_SIZES --numpy-baseline-sites $BASE_SITES \
    --json "$RESULTS/gpu_exact_chain.json" || { echo "FAILED (3)"; status=1; }
timeout 85 $EXACT --torch-sizes $TORCH_BIG --json "$RESULTS/gpu_exact_chain_2p$TORCH_BIG.json" \
    || { echo "FAILED (3, 2^$TORCH_BIG)"; status=1; }

echo "== 4. exact AntiBERTy window: score table and factor squaring on the device"
timeout 100 $PY benchmarks/gpu_window.py --device $DEVICE $WINDOW \
    --json "$RESULTS/gpu_window.json" || { echo "FAILED (4)"; status=1; }

exit $status
