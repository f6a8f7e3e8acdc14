#!/bin/bash
# The GPU work owed since the eighteenth session, for one ~10-minute device call (run from the
# repository root on the device machine, with `carry: [".whl", ".corpus_heldout"]`):
#   here, once:  mkdir -p .whl && pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                  --implementation cp --platform manylinux_2_17_x86_64 -d .whl lark==1.3.1
#                tar -xJf tools/tirx_oracle/data/heldout_round9.tar.xz -C /tmp/r9 \
#                  && cp -r /tmp/r9/.corpus_heldout .
# 1. held-out round 9's stage 4 (TIRx's CUDA against tirx's kernel) beside a CUDA-vs-interpreter
#    campaign; 2. the GPU tests of #32 (gemm_tuned) and #33 (GQA, decode, short sequences,
#    tensor-core GEMV); 3. the GEMV and decode benchmarks.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,memory.total --format=csv,noheader
set -o pipefail
( timeout 230 python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','200','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
timeout 240 python3 tools/tirx_oracle/corpus_gpu.py .corpus_heldout/oracle .corpus_heldout/results.json $OUT/s4.json --jobs 6 2>&1 | tail -5
wait
tail -3 $OUT/fuzz.log
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_hopper_attention.py tests/test_hopper.py tests/test_kernels_library_gpu.py tests/test_autotune_gpu.py \
  -k "grouped or tuned or decode_attention or short_and_ragged or tensor_core_gemv or decode_rows" 2>&1 | tee $OUT/tests.log | tail -15
timeout 60 python3 tools/bench/bench_library.py --only gemv --quick 2>&1 | tail -25
timeout 40 python3 tools/bench/bench_library.py --only decode --quick 2>&1 | tail -25
