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
# Owed since the twenty-fourth session (its device time ran out; one ~9-minute call, with
# `carry: [".whl", ".corpus_r15"]`, .corpus_r15 = /tmp/r15/out/oracle + the stage-1 results):
#   bash tools/device_owed.sh owed24
# host-encoded TMA descriptors, tirx.backend.cuda.lang kernels, the golden GPU comparison (now
# with descriptors the host encodes), then stage 4 of round 15's TMA files.
# Owed by the twenty-seventh session (carry `.whl`; about 9 minutes; run it twice more with
# `owed27 campaign` for the 20 minutes): the varlen NaN test (max_seqlen_q too small; written
# after the last lease), the library's GPU tests, the GEMM and attention grids on an H200, and
# beside them a CUDA-vs-interpreter campaign (that session added an op, T.cuda.float22half2_rn,
# and changed the interpreter's pow):
#   bash tools/device_owed.sh owed27
# every call: lark from the carried wheel, the checkout on the path, the card
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,memory.total --format=csv,noheader
# The twenty-eighth session's call (carry `.whl`; about 9.5 minutes): owed27 plus the ready records
# (a new process with the kernels in the disk cache: tools/bench/bench_new_process.py) and their tests
#   bash tools/device_owed.sh owed28
# Owed by the twenty-eighth session (its device time ran out after one lease; carry `.whl`):
#   bash tools/device_owed.sh owed28b   (about 5 minutes)
# the library's GPU tests with the two test fixes of that session (the causal too-small
# max_seqlen_q case, the ready-records test's GEMV reference), the ready kernels on a real
# driver (tests/test_ready.py, tests/test_runtime_launch.py: the fake-driver test segfaulted
# there before ready.py read kernel.py's launcher), the attention memo and the host parts
# (tools/bench/host_new_shape.py), CuPy arrays through the calls (test_the_calls_take_cupy_arrays),
# a CUDA-vs-interpreter campaign beside them; then
# `bash tools/device_owed.sh owed27 campaign` for the rest of the owed 20 minutes.
# Owed by the twenty-ninth session (no device time that session; carry `.whl`; about 9 minutes):
#   bash tools/device_owed.sh owed29
# the GEMM with descriptors written on the device (tests/test_gemm_rows_on_device_gpu.py, then its
# host and GPU times in tools/bench/host_new_shape.py), owed28b's tests, a CUDA-vs-interpreter
# campaign beside them; then `owed27 campaign` for the rest of the owed 20 minutes.
# Stage 4 of held-out rounds 17 and 18 (owed by the twenty-ninth session; about 3 minutes). The
# oracle output is TIRx's code, so it is not committed: rebuild it here first (needs the oracle venv,
# docs/tirx_compat.md), then carry it:
#   for r in 17 18; do mkdir -p /tmp/r$r && tar -xJf tools/tirx_oracle/data/heldout_round$r.tar.xz -C /tmp/r$r \
#     && /root/oracle312/bin/python tools/tirx_oracle/corpus_harvest.py /tmp/r$r/src /tmp/r$r/out \
#     && mkdir -p .corpus_r$r && cp -r /tmp/r$r/out/oracle .corpus_r$r/ && cp /tmp/r$r/results_after.json .corpus_r$r/results.json; done
#   bash tools/device_owed.sh rounds17_18      (carry `.whl`, `.corpus_r17`, `.corpus_r18`)
# helpers: a CUDA-vs-interpreter campaign of $1 s in the background (`wait` for it), GPU tests
# into $OUT/$1.log within $2 s (the rest: the test files), stage 4 of rounds 17 and 18
campaign() {
  ( timeout $(($1 + 20)) python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','$1','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
}
gpu_tests() {
  local log=$OUT/$1.log lim=$2; shift 2
  timeout $lim python3 -m pytest -q -rfE --maxfail=8 -p no:cacheprovider "$@" > $log 2>&1; tail -2 $log
  grep -E "^(FAILED|ERROR)" $log | head -8
}
if [ "$1" = rounds17_18 ]; then
  for r in 17 18; do
    timeout 250 python3 tools/tirx_oracle/corpus_gpu.py .corpus_r$r/oracle .corpus_r$r/results.json $OUT/s4_r$r.json --jobs 10 \
      > $OUT/s4_r$r.log 2>&1; tail -n 4 $OUT/s4_r$r.log
  done
  exit 0
fi
# owed29, owed30 and owed31 ran on 2026-12-07 (the thirtieth and thirty-first sessions;
# docs/benchmarks.md) and are gone.
# Owed by the thirty-first session (its device time ran out; carry `.whl`; about 9 minutes): a
# CUDA-vs-interpreter campaign (codegen changed: two-argument math converts a float argument of
# another width), the library's GPU tests and the GEMM grid again on whatever card comes (the
# session had only H100s; the split-K space keeps replaced buffers since its last GPU test):
#   bash tools/device_owed.sh owed32
# The thirty-second session's K16 (A and B in 16-byte pieces) ran on 2026-12-07 (the thirty-third
# session): every launch faulted, and it was removed (docs/benchmarks.md). What the thirty-third
# session owes (carry `.whl`; about 9 minutes): the paired-atomic golden case on the GPU (its
# inputs now stay in bounds), the library's GPU tests, the GEMM grid and a CUDA-vs-interpreter
# campaign beside them (the rest of the owed 20 minutes)
#   bash tools/device_owed.sh owed33 [SECONDS of campaign, default 330]
# (first the K = 5000 pitch's tile sets against K = 5008: gemm_explore.py z5000, z5008)
# (owed33 ran on 2026-12-07, the thirty-fourth session's first call: docs/benchmarks.md.)
# The thirty-fourth session's cp.async loads for row pitches of 16 modulo 32 bytes (carry `.whl`;
# about 5 minutes): their bit-equality with the TMA loads and the calls that take them, then the
# explorer's loader pairs (K = 5000 / 5008, 4096^3, 5000^3, 200 x 12288 x 1000)
#   bash tools/device_owed.sh cp
# Owed by the thirty-fifth session (no device lent; carry `.whl`; about 9 minutes): the cp.async
# loads above, then the library's GPU tests (the attention kernels' row maximum is a `let` since
# the constant-`if` rule, their only IR change), the golden GPU cases (TIRx's constant `if` now
# built) and a 150 s CUDA-vs-interpreter campaign beside them
#   bash tools/device_owed.sh owed35
if [ "$1" = owed35 ]; then
  TIRX_GEMM_CP_LOADS=1 gpu_tests c 150 tests/test_kernels_library_gpu.py -k "cp_async or linear_and_matmul or split_k"
  timeout 150 python3 tools/bench/gemm_explore.py --only z5000,z5008,cp4096,cp5000 2>&1 | grep -v "^best" | cut -c1-150
  campaign 150
  gpu_tests t 220 tests/test_kernels_library_gpu.py tests/test_hopper_attention.py tests/test_tirx_golden_frontend_cuda_gpu.py
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
# Owed by the thirty-sixth session (carry `.whl`; about 9 minutes): the cp.async GEMM after its
# register fix (its tests and the hang probe), its timings against the TMA loads, then the
# library's GPU tests beside a CUDA-vs-interpreter campaign (For.step and the host tensors changed)
#   bash tools/device_owed.sh owed36
if [ "$1" = owed36 ]; then
  ( TIRX_GEMM_CP_LOADS=1 gpu_tests c 170 tests/test_kernels_library_gpu.py -k "cp_async or linear_and_matmul or split_k" ) &
  ( gpu_tests h 60 tests/test_host_target_gpu.py ) &
  timeout 150 python3 tools/bench/cp_hang_probe.py > $OUT/probe.log 2>&1; cat $OUT/probe.log
  wait
  timeout 170 python3 tools/bench/gemm_explore.py --only z5000,z5008,cp4096,cp5000 2>&1 | grep -v "^best" | cut -c1-150
  campaign 150
  gpu_tests t 170 tests/test_kernels_library_gpu.py -k "not cp_async and not linear_and_matmul and not split_k"
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
if [ "$1" = par ]; then  # owed35's tests as parallel processes (compiles are CPU-bound; 16 cores)
  ( TIRX_GEMM_CP_LOADS=1 gpu_tests c 380 tests/test_kernels_library_gpu.py -k "cp_async or linear_and_matmul or split_k" ) &
  ( gpu_tests a 380 tests/test_hopper_attention.py ) &
  ( gpu_tests g 380 tests/test_tirx_golden_frontend_cuda_gpu.py ) &
  ( gpu_tests t 380 tests/test_kernels_library_gpu.py -k "not cp_async and not linear_and_matmul and not split_k" ) &
  wait
  exit 0
fi
if [ "$1" = cpfix ]; then  # the cp.async GEMM after its register fix (48 + 2 x 224): the calls and a probe
  ( TIRX_GEMM_CP_LOADS=1 gpu_tests c 150 tests/test_kernels_library_gpu.py -k "cp_async or (linear_and_matmul and 257)" ) &
  ( gpu_tests h 60 tests/test_host_target_gpu.py ) &
  timeout 150 python3 tools/bench/cp_hang_probe.py > $OUT/probe.log 2>&1; cat $OUT/probe.log
  wait
  exit 0
fi
if [ "$1" = cpmin ]; then  # the least of it (about 2.5 minutes)
  gpu_tests c 100 tests/test_kernels_library_gpu.py -k "cp_async"
  timeout 120 python3 tools/bench/gemm_explore.py --only z5000min,cp4096 2>&1 | grep -v "^best" | cut -c1-150
  exit 0
fi
if [ "$1" = cp ]; then  # (the calls take the cp.async loads only with TIRX_GEMM_CP_LOADS=1)
  TIRX_GEMM_CP_LOADS=1 gpu_tests c 200 tests/test_kernels_library_gpu.py -k "cp_async or linear_and_matmul or split_k"
  timeout 240 python3 tools/bench/gemm_explore.py --only z5000,z5008,cp4096,cp5000,cp_skinny 2>&1 \
    | grep -v "^best" | cut -c1-150
  exit 0
fi
if [ "$1" = owed33min ]; then  # the least of it (about 6 minutes): the golden pair, the pitch explorer,
  # the library's GPU tests beside a 150 s campaign
  gpu_tests g 60 tests/test_tirx_golden_frontend_cuda_gpu.py -k "atomic_add_pair or local_def_python" -rs
  timeout 130 python3 tools/bench/gemm_explore.py --only z5000,z5008 2>&1 | grep -v "^best" | cut -c1-150
  campaign 150
  gpu_tests t 170 tests/test_kernels_library_gpu.py
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
if [ "$1" = owed33 ]; then
  gpu_tests g 60 tests/test_tirx_golden_frontend_cuda_gpu.py -k "atomic_add_pair or local_def_python" -rs
  timeout 150 python3 tools/bench/gemm_explore.py --only z5000,z5008 2>&1 | grep -v "^best" | cut -c1-150
  campaign ${2:-330}
  gpu_tests t 240 tests/test_kernels_library_gpu.py tests/test_gemm_rows_on_device_gpu.py tests/test_math_gpu.py
  timeout 150 python3 tools/bench/bench_library.py --only gemm 2>&1 | grep -E "^gemm|rror" | sed -E 's/err [0-9.e-]+ //'
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
if [ "$1" = owed32 ]; then
  campaign 420
  gpu_tests t 240 tests/test_kernels_library_gpu.py tests/test_gemm_rows_on_device_gpu.py tests/test_math_gpu.py
  timeout 150 python3 tools/bench/bench_library.py --only gemm 2>&1 | grep -E "^gemm|rror" | sed -E 's/err [0-9.e-]+ //'
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
# The thirty-first session's split-K summed in the kernel (carry `.whl`; about 9 minutes): the
# library's GPU tests (split-K among them) and the device-written-descriptor GEMM, then the
# split tile sets against the atomic epilogue and cuBLAS (tools/bench/gemm_explore.py `s*` cases)
#   bash tools/device_owed.sh split
if [ "$1" = split ]; then
  gpu_tests t 200 tests/test_kernels_library_gpu.py tests/test_gemm_rows_on_device_gpu.py
  timeout 330 python3 tools/bench/gemm_explore.py --out $OUT \
    --only s65,s16,s64,s100,s300,s128x1024,s1000,s1024,s2048x512,s16x1024 > $OUT/explore.log 2>&1
  grep -E "^best|rror" $OUT/explore.log
  exit 0
fi
# The thirty-first session's closing call (carry `.whl`; about 6 minutes): the library's GPU tests
# with the swapped product and the split-K sum, then the GEMM grid and the skinny shapes
#   bash tools/device_owed.sh final31
if [ "$1" = final31 ]; then
  gpu_tests t 240 tests/test_kernels_library_gpu.py tests/test_gemm_rows_on_device_gpu.py
  timeout 150 python3 tools/bench/bench_library.py --only gemm 2>&1 | grep -E "^gemm|rror" | sed -E 's/err [0-9.e-]+ //'
  timeout 90 python3 tools/bench/skinny_stream.py 2>&1 | tail -14
  [ "$2" = wide ] && timeout 120 python3 tools/bench/gemm_explore.py --out $OUT \
    --only r100x14336x4096,r80x8192x8192,r112x4096x14336,r40x28672x4096,r24x1024x8192,q65,p16,p32 2>&1 | grep -v "^best"
  exit 0
fi
if [ "$1" = owed28c ]; then  # the smallest: the ready and attention-memo GPU tests, the host parts
  timeout 190 python3 -m pytest -q -rfE --maxfail=8 -p no:cacheprovider tests/test_ready.py tests/test_runtime_launch.py \
    tests/test_kernels_library_gpu.py -k "ready or attention or runtime_launch or gpu_" > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log
  grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -12
  timeout 60 python3 tools/bench/host_new_shape.py --n 100 > $OUT/host.log 2>&1; grep -A12 "^attention" $OUT/host.log | grep -v "^ *[0-9]* *0\.0"
  exit 0
fi
if [ "$1" = owed28b ]; then  # after owed28: the tests with their failures named, the host parts
  ( timeout 290 python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','270','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
  timeout 240 python3 -m pytest -q -rfE --maxfail=8 -p no:cacheprovider tests/test_ready.py tests/test_runtime_launch.py \
    tests/test_kernels_library_gpu.py tests/test_decode_attention.py > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log
  grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -12
  timeout 60 python3 tools/bench/host_new_shape.py --n 200 > $OUT/host.log 2>&1; grep -A12 "^attention" $OUT/host.log | grep -v "^ *[0-9]* *0\.0"
  wait
  tail -2 $OUT/fuzz.log
  exit 0
fi
if [ "$1" = owed28 ]; then
  ( timeout 420 python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','380','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_library_gpu.py tests/test_decode_attention.py \
    tests/test_ready.py tests/test_runtime_launch.py > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log; grep -E "^E |FAILED" $OUT/tests.log | head -10
  timeout 150 python3 tools/bench/bench_new_process.py --runs 3 2>&1 | tail -14
  timeout 90 python3 tools/bench/host_new_shape.py > $OUT/host.log 2>&1; head -9 $OUT/host.log; grep -A9 "^attention" $OUT/host.log
  timeout 100 python3 tools/bench/bench_library.py --only attn 2>&1 | grep -E "^attn|rror"
  wait
  tail -3 $OUT/fuzz.log
  exit 0
fi
if [ "$1" = owed27 ]; then
  ( timeout 540 python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','500','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
  if [ "$2" = campaign ]; then wait; tail -3 $OUT/fuzz.log; exit 0; fi
  timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_library_gpu.py tests/test_decode_attention.py \
    > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log; grep -E "^E |FAILED" $OUT/tests.log | head -10
  timeout 120 python3 tools/bench/bench_library.py --only gemm 2>&1 | grep -E "^gemm|rror" | tail -24
  timeout 120 python3 tools/bench/bench_library.py --only attn 2>&1 | grep -E "^attn|rror"
  wait
  tail -3 $OUT/fuzz.log
  exit 0
fi
# The twenty-fifth session's calls (carry `.whl`, `.corpus_r14`, `.corpus_r15`, `.corpus_r16`;
# .corpus_rN = the round's oracle/ + merged stage-1 results.json + s4_done*.json of earlier calls,
# skipped on resume): `owed25 1` = the owed GPU tests, round 15's TMA files again, round 16
# stage 4 and a CUDA-vs-interpreter campaign side by side; `owed25 2` = resume round 16, the rest
# of rounds 14/15, a second campaign.
if [ "$1" = owed25 ]; then
  skips() { for f in "$1"/s4_done*.json; do [ -f "$f" ] && echo "--skip $f"; done; }
  [ "$2" = 1 ] && ( timeout 560 python3 tools/tirx_oracle/corpus_gpu.py .corpus_r16/oracle .corpus_r16/results.json \
      $OUT/s4_r16.json --jobs 7 $(skips .corpus_r16) > $OUT/s4_r16.log 2>&1 ) &
  ( timeout 560 python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','${FUZZ_S:-520}','--no-progress','--save','$OUT/fuzzfail']))" > $OUT/fuzz.log 2>&1 ) &
  if [ "$2" = 1 ]; then
    timeout 220 python3 -m pytest -q -p no:cacheprovider tests/test_tma_host_encode_gpu.py tests/test_cuda_lang_gpu.py \
      tests/test_dyn_smem.py tests/test_tirx_golden_frontend_cuda_gpu.py > $OUT/tests.log 2>&1
    grep -v "^PASSED" $OUT/tests.log | tail -15
    mkdir -p /tmp/s4tma && for f in tma_tile_copy wgmma_tma_swizzle tma_multicast_hints fused_hopper_kernels jit_async_specialize; do
      cp .corpus_r15/oracle/m__test_sm90a_$f.jsonl /tmp/s4tma/; done
    timeout 300 python3 tools/tirx_oracle/corpus_gpu.py /tmp/s4tma .corpus_r15/results.json $OUT/s4_tma.json --jobs 4 > $OUT/s4_tma.log 2>&1
  else
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_lang_gpu.py \
      tests/test_tirx_golden_frontend_cuda_gpu.py > $OUT/tests.log 2>&1 &
    timeout 200 python3 tools/tirx_oracle/corpus_gpu.py .corpus_s4re/oracle .corpus_s4re/results.json \
      $OUT/s4_re.json --jobs 2 > $OUT/s4_re.log 2>&1 &
    ( timeout 540 python3 tools/tirx_oracle/corpus_gpu.py .corpus_r15/oracle .corpus_r15/results.json \
        $OUT/s4_r15.json --jobs 4 $(skips .corpus_r15) > $OUT/s4_r15.log 2>&1 ) &
    timeout 540 python3 tools/tirx_oracle/corpus_gpu.py .corpus_r14/oracle .corpus_r14/results.json \
        $OUT/s4_r14.json --jobs 4 $(skips .corpus_r14) > $OUT/s4_r14.log 2>&1
  fi
  wait
  for f in $OUT/*.log; do echo "== $f"; tail -n 4 "$f"; done
  exit 0
fi
if [ "$1" = owed24 ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_tma_host_encode_gpu.py tests/test_cuda_lang_gpu.py \
    tests/test_dyn_smem.py tests/test_tirx_golden_frontend_cuda_gpu.py 2>&1 | grep -v "^PASSED" | tail -15
  mkdir -p /tmp/s4tma && for f in tma_tile_copy wgmma_tma_swizzle tma_multicast_hints fused_hopper_kernels jit_async_specialize; do
    cp .corpus_r15/oracle/m__test_sm90a_$f.jsonl /tmp/s4tma/; done
  timeout 300 python3 tools/tirx_oracle/corpus_gpu.py /tmp/s4tma .corpus_r15/results.json $OUT/s4_tma.json --jobs 10 > $OUT/s4_tma.log 2>&1
  tail -n 3 $OUT/s4_tma.log
  exit 0
fi
if [ "$1" = campaign ]; then
  exec python3 -c "import sys; from tirx.tools.cli import main; sys.exit(main(['fuzz','--cuda','--time','560','--no-progress','--save','$OUT/fuzzfail']))"
fi
# the twenty-second session's call (no argument)
timeout 120 python3 tools/bench/bench_library.py --only decode --quick --out $OUT 2>&1 | tail -30
timeout 110 python3 -m pytest -q -rA -p no:cacheprovider tests/test_kernels_library_gpu.py tests/test_ptx_cp_async.py \
  -k "decode or cuda_gives" 2>&1 | grep -v "^PASSED" | tail -8
( timeout 170 python3 tools/tirx_oracle/corpus_gpu.py .corpus/oracle .corpus/results.json $OUT/s4_main.json --jobs 6 > $OUT/s4_main.log 2>&1 ) &
timeout 180 python3 tools/tirx_oracle/corpus_gpu.py .corpus_heldout/oracle .corpus_heldout/results.json $OUT/s4_heldout.json --jobs 6 > $OUT/s4_heldout.log 2>&1
wait
tail -2 $OUT/s4_main.log $OUT/s4_heldout.log
