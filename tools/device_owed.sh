#!/bin/bash
# The GPU work owed since the twenty-second session, for one ~8-minute device call (run from the
# repository root on the device machine, with `carry: [".whl", ".corpus_heldout", ".corpus"]`):
#   here, once:  mkdir -p .whl && pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                  --implementation cp --platform manylinux_2_17_x86_64 -d .whl lark==1.3.1
#                mkdir -p /tmp/r13 && tar -xJf tools/tirx_oracle/data/heldout_round13.tar.xz -C /tmp/r13 \
#                  && cp -r /tmp/r13/.corpus_heldout .     (round 13's stage 4 after its fixes ran only
#                  to 1,162 of 1,654 kernels on an H100, 2026-12-06: docs/tirx_compat.md; rounds 9-12 ran;
#                  round 14's, heldout_round14.tar.xz, has not run at all)
#                mkdir -p .corpus && cp -r ~/.cache/tirx/corpus/out/oracle .corpus/ \
#                  && cp docs/data/tirx_corpus.json .corpus/results.json
# 1. decode attention (cp.async ring, parallel combine) against SDPA with the chunk-rule sweep;
# 2. the decode and cp.async GPU tests; 3. stage 4 of both corpora with the harness changes.
# A CUDA-vs-interpreter campaign after codegen or interpreter changes (the twentieth session's
# owed 20 minutes ran by the twenty-second: 7.5 + 8.3 + 4.3 + 4 minutes), one call each:
#   bash tools/device_owed.sh campaign
if [ "$1" = campaign ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
  exec python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','560','--no-progress','--save','$OUT/fuzzfail']))"
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,memory.total --format=csv,noheader
timeout 120 python3 tools/bench/bench_library.py --only decode --quick --out $OUT 2>&1 | tail -30
timeout 110 python3 -m pytest -q -rA -p no:cacheprovider tests/test_kernels_library_gpu.py tests/test_ptx_cp_async.py \
  -k "decode or cuda_gives" 2>&1 | grep -v "^PASSED" | tail -8
( timeout 170 python3 tools/tirx_oracle/corpus_gpu.py .corpus/oracle .corpus/results.json $OUT/s4_main.json --jobs 6 > $OUT/s4_main.log 2>&1 ) &
timeout 180 python3 tools/tirx_oracle/corpus_gpu.py .corpus_heldout/oracle .corpus_heldout/results.json $OUT/s4_heldout.json --jobs 6 > $OUT/s4_heldout.log 2>&1
wait
tail -2 $OUT/s4_main.log $OUT/s4_heldout.log
