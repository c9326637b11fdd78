#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build, a quick check of the engine, benchmark side by side
# with two peer programs, an Nsight Compute profile of the main kernel, the GPU tests, every
# kernel under compute-sanitizer, and a short table at the end.
#
#   bash bench/device_run.sh [--budget SECONDS] [--with-22] [--nmax N] [--seed-nmax N]
#                            [--ygch-nmax N] [--steps "build smoke bench ygch seed ncu tests direct sanitize table"]
#                            [--big "N ..."] [--out DIR]
#
# Before (once): put the peers in the git-ignored folder peers/:
#   git clone https://github.com/ygch/n_queens peers/ygch     (ygch/n_queens, MIT)
#   bash bench/prepare_peers.sh SEED_DIR                      (the seed program: not distributed
#                                                              with gpuqueens, see docs/performance.md;
#                                                              optional: without it the seed step says so)
# The kernels and the peers are built with nvcc for the GPU's own architecture (nvidia-smi's
# compute capability; sm_90 where it cannot be read).
# Outputs go to DIR (default: out/device_run, git-ignored); every step
# logs to its own file, the table step reads the earlier steps' files from the same folder and
# writes side_by_side.json for bench/plot_times.py.
#
# The steps run in the order above, the most wanted first, within a time budget (default 480 s,
# 0 = none): each step gets at most its own share (build 120 s, smoke 120, bench 180, ygch 90,
# seed 150, ncu 120, tests 240, direct 120, sanitize: memcheck 120 and racecheck 90), never
# past the budget; a step whose time runs out is stopped (its output so far is kept; the
# benchmarks end before an n that would not fit), and steps that find the budget spent are not
# run; the table says which.
# "smoke" counts n = 4..17 (at most --nmax) through the public call against OEIS within 120 s:
# if the engine gives a wrong count, fails or hangs there, the timing steps are skipped and the
# tests and the sanitizer run for the diagnosis. "sanitize" runs bench/gpu_sanitize.py (every
# kernel on small inputs, against the CPU) under compute-sanitizer's memcheck and racecheck.
# The default steps took 421 s on one H200 with n up to 21 (2026-11-27, docs/performance.md),
# the sanitizer's shares cut: with the default budget the last ones may be cut.
# Steps that run only when named: "big" (n = 22 and 23 against OEIS through the command line,
# or the n of --big "N ...", each with a checkpoint in the output folder, so that a stopped
# step resumes when run again; n = 22 took 72 s on one H200, n = 23 is projected at about
# 11 minutes), "matchsticks" (the matchstick
# distributions and puzzle tables on the GPU, bench/gpu_matchsticks.py and
# bench/gpu_matchstick_table.py), "table8" (the 8x8 puzzle table's first round sampled:
# its half sweeps and 4 of its 136 centre patterns, bench/gpu_matchstick_sample.py; the half
# sweeps are projected at 55-70 GB), "workers" (bench/device_workers.py)
# and "engines" (this tree's kernels, this tree with the split's work items instead of the
# device's expansion (--split 2), this tree with the search from row 8 (--expand 3), this
# tree in the widest blocks (--block-size widest), and each peers/engine-*/ from bench/prepare_peers.sh
# --engine COMMIT, n = 18..nmax, each tree's own bench/gpu_nqueens.py --path direct, in turn,
# twice), "ncuitems" (Nsight Compute on nqueens_count at n = 19, the kernels alone, with the
# device's expansion and with the split's work items: why the work items weigh so much).
# Steps can be run in separate calls with the same --out; --budget 0 lifts every limit
# but the smoke step's.
#
# Install first, in the repository (a virtual environment is fine; the steps run $PYTHON, else
# python, else python3):
#   pip install ".[test,cuda12]"     # pytest for "tests", CuPy for every GPU step; or ".[test,cuda13]"
#   pip install ".[bench]"           # matplotlib, only to plot side_by_side.json with bench/plot_times.py
# Tools on the PATH: nvcc (CUDA toolkit) for "build" (the cubin and its resource usage), "ygch"
# (builds the peer) and "seed" (the seed tool builds its program); "tests" skips its nvcc-marked
# tests without it. The other steps compile through CuPy (NVRTC) and need no nvcc. "ncu" needs
# Nsight Compute and "sanitize" compute-sanitizer (each skipped without it); "build" reads the
# SASS only where cuobjdump and nvdisasm are found. Exit status: 1 if any step that ran failed
# or was stopped, else 0.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

nmin=8
nmax=21
seed_nmax=20
ygch_nmax=21
budget=480
steps="build smoke bench ygch seed ncu tests direct sanitize table"
big_ns="22 23"
out_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --with-22) nmax=22 ;;
    --nmax) nmax=$2; shift ;;
    --seed-nmax) seed_nmax=$2; shift ;;
    --ygch-nmax) ygch_nmax=$2; shift ;;
    --budget) budget=$2; shift ;;
    --steps) steps=$2; shift ;;
    --big) big_ns=$2; shift ;;
    --out) out_dir=$2; shift ;;
    -h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "device_run: unknown option $1 (bash bench/device_run.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$budget" in
  ''|*[!0-9]*) echo "device_run: --budget takes whole seconds (0: no budget), not '$budget'" >&2; exit 2 ;;
esac
[ -n "${big_ns// /}" ] || { echo "device_run: --big takes board sizes (e.g. \"23\"), not an empty list" >&2; exit 2; }
for n in $big_ns; do
  case "$n" in
    ''|*[!0-9]*) echo "device_run: --big takes board sizes (e.g. \"23\"), not '$big_ns'" >&2; exit 2 ;;
  esac
  if [ "$n" -lt 4 ] || [ "$n" -gt 27 ]; then
    echo "device_run: --big takes n from 4 to 27 (the n whose counts OEIS has), not $n" >&2; exit 2
  fi
done
known="build smoke bench ygch seed ncu tests direct sanitize big engines ncuitems matchsticks table8 workers table"
for name in $steps; do
  case " $known " in
    *" $name "*) ;;
    *) echo "device_run: no step '$name' (the steps: $known)" >&2; exit 2 ;;
  esac
done

out=${out_dir:-$root/out/device_run}
mkdir -p "$out" && out=$(cd "$out" && pwd)  # absolute: the peer steps run in other folders
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1  # every line reaches the logs at once, also from a step that is stopped
# the interpreter: $PYTHON, else python (an active virtual environment's), else python3
py=${PYTHON:-$(command -v python || command -v python3 || echo python)}
status=0
started=$SECONDS
engine_ok=1   # cleared when the smoke step finds the engine wrong or hanging
not_run=""    # steps asked for but not run, with the reason

banner() { echo; echo "=== $* ==="; }

# the GPU's architecture for nvcc (e.g. 90 for an H100 or H200); 90 where nvidia-smi cannot tell
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
case "$sm" in ''|*[!0-9]*) sm=90 ;; esac

# allowance CAP: the seconds a step may still take: CAP (0: none), never past the budget
allowance() {
  local t=$1 rest
  if [ "$budget" -gt 0 ]; then
    rest=$(( budget - (SECONDS - started) ))
    if [ "$t" -eq 0 ] || [ "$rest" -lt "$t" ]; then t=$rest; fi
  fi
  echo "$t"
}

# limited SECONDS COMMAND...: COMMAND, stopped after SECONDS (0: never); a line says so
limited() {
  local t=$1 rc
  shift
  if [ "$t" -eq 0 ]; then "$@"; return; fi
  if [ "$t" -lt 5 ]; then echo "device_run: no time left for: $*"; return 124; fi
  timeout -k 10 "$t" "$@"
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "device_run: stopped after $t s: $*"; fi
  return "$rc"
}

# step NAME: whether to run step NAME (asked for, and time left in the budget)
step() {
  case " $steps " in *" $1 "*) ;; *) return 1 ;; esac
  if [ "$1" != table ] && [ "$budget" -gt 0 ] && [ "$(allowance 0)" -lt 10 ]; then
    banner "$1: not run, the budget of $budget s is spent"
    not_run="$not_run $1(budget)"
    return 1
  fi
}

# timing_step NAME: step NAME, and only if the engine passed the smoke step
timing_step() {
  step "$1" || return 1
  if [ "$engine_ok" -eq 0 ]; then
    banner "$1: not run, the engine failed the smoke step"
    not_run="$not_run $1(smoke)"
    return 1
  fi
}

# share CAP: the allowance of a step whose share is CAP seconds under a budget
share() { if [ "$budget" -gt 0 ]; then allowance "$1"; else echo 0; fi; }

# inner_budget SECONDS: gpu_nqueens.py's own --budget-s within a step limited to SECONDS (none
# for 0), a little short of it, so that the benchmark ends before an n rather than being stopped
inner_budget() { [ "$1" -gt 0 ] && echo "--budget-s $(( $1 > 40 ? $1 - 20 : $1 / 2 ))"; }

if step build; then
  banner "environment and build"
  (
    failed=0  # every command runs and logs; the step fails if any of them failed
    nvidia-smi -L || true
    nvcc --version | tail -2 || { echo "build: nvcc not found or failed"; failed=1; }
    "$py" -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__)" \
      || { echo "build: CuPy cannot be imported (pip install \".[cuda12]\" or \".[cuda13]\")"; failed=1; }
    nvcc -arch="sm_$sm" -cubin -O3 --resource-usage -Xptxas -warn-spills,-warn-lmem-usage \
      -o "$out/nqueens.cubin" kernels/nqueens.cu || { echo "build: nvcc could not build the cubin"; failed=1; }
    # compile through CuPy/NVRTC once, so later steps find the kernel cache warm
    limited "$(share 120)" "$py" -c "from gpuqueens.kernels import load_module; load_module('nqueens.cu'); load_module('nqueens_symmetric.cu'); print('NVRTC build ok')" \
      || { echo "build: the NVRTC build failed"; failed=1; }
    # the main iteration in SASS with this toolkit (the warp model's costs were read with nvcc 13.0);
    # optional: its failure does not fail the step
    "$py" bench/simt_model.py --sass | tail -1 || echo "(no cuobjdump or nvdisasm: SASS not read)"
    exit "$failed"
  ) 2>&1 | tee "$out/build.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step smoke; then
  smoke_nmax=$(( nmax < 17 ? nmax : 17 ))
  banner "smoke: n = 4..$smoke_nmax through the public call on the GPU, against OEIS, within 120 s"
  limited "$(allowance 120)" "$py" bench/gpu_nqueens.py --nmin 4 --nmax "$smoke_nmax" --no-cold --repeats 1 \
    --long-run-s 0 --plain-nodes-max 0 --json "$out/smoke.json" 2>&1 | tee "$out/smoke.txt"
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    status=1
    engine_ok=0
    echo "smoke: the engine gave a wrong count, failed or did not finish: the timing steps are skipped" | tee -a "$out/smoke.txt"
  fi
fi

if timing_step bench; then
  banner "benchmark n=$nmin..$nmax through the public call"
  # gpu_nqueens.py ends before an n that would not fit, so that the step is not stopped mid-count
  seconds=$(share 180)
  limited "$seconds" "$py" bench/gpu_nqueens.py --nmin "$nmin" --nmax "$nmax" $(inner_budget "$seconds") \
    --json "$out/ours.json" 2>&1 | tee "$out/bench.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step ygch; then
  banner "ygch/n_queens peer n=$nmin..$ygch_nmax (6 pre-placed rows, its configuration 2)"
  if [ -d peers/ygch/src ]; then
    : > "$out/ygch.txt"
    # built and run in one child, so that the step's share bounds both
    limited "$(share 90)" bash -c '
      cd peers/ygch/src && nvcc -gencode "arch=compute_$4,code=sm_$4" -O3 -Xcompiler -fopenmp \
        -D_USE_CONFIG2_ n_queens_cuda.cu n_queens.cpp utils.cpp main.cpp -o n_queens > "$1/ygch_build.log" 2>&1 \
        || { echo "ygch build failed, see ygch_build.log"; exit 1; }
      for n in $(seq "$2" "$3"); do ./n_queens "$n" 6; done' \
      ygch "$out" "$nmin" "$ygch_nmax" "$sm" 2>&1 | tee -a "$out/ygch.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    echo "peers/ygch/src is missing: git clone https://github.com/ygch/n_queens peers/ygch" | tee "$out/ygch.txt"
  fi
fi

if step seed; then
  banner "seed peer n=$nmin..$seed_nmax"
  if [ -x peers/tools/seed_nqueens.sh ]; then
    # SEED_BUILD_DIR and SEED_ARCH (nvcc's -arch) are the seed tool's own settings
    limited "$(share 150)" env SEED_BUILD_DIR="$root/peers/build" SEED_ARCH="${SEED_ARCH:-sm_$sm}" bash peers/tools/seed_nqueens.sh -n "$nmin" "$seed_nmax" \
      2>&1 | tee "$out/seed.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    echo "peers/tools/seed_nqueens.sh is missing: the seed program is not distributed with gpuqueens (docs/performance.md); where you have it, bench/prepare_peers.sh SEED_DIR puts it there" | tee "$out/seed.txt"
  fi
fi

if timing_step ncu; then
  banner "Nsight Compute: nqueens_count at n=18 through the public call"
  if command -v ncu >/dev/null; then
    # profiling starts after a first count (n = 8): the device check's launches (n = 13 and
    # 14) and the compile come before the profiled n = 18
    profiled=$(printf '%s\n' "import cupyx.profiler, gpuqueens" \
      "gpuqueens.nqueens(8, backend='gpu', progress=False)" \
      "with cupyx.profiler.profile():" \
      "    print(gpuqueens.nqueens(18, backend='gpu', progress=False))")
    limited "$(share 120)" ncu --profile-from-start off --kernel-name nqueens_count --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
      --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis \
      "$py" -c "$profiled" > "$out/ncu18.txt" 2>&1 || status=1
    # compare with the warp model (docs/performance.md): lanes, issue slots, the ALU pipe, shared memory
    grep -E "Duration|Registers Per Thread|Achieved Occupancy|Avg. Active Threads|Avg. Not Predicated|Grid Size|Block Size|Issue Slots Busy|Issued Ipc|Executed Ipc|ALU|Shared|L1/TEX Hit|Warp Cycles Per Issued|No Eligible|device_run:" "$out/ncu18.txt"
  else
    echo "ncu not found (Nsight Compute): profile skipped" | tee "$out/ncu18.txt"
  fi
fi

if step tests; then
  banner "GPU tests (pytest -m 'gpu and not slow'; the tests marked nvcc skip without nvcc)"
  # verbose into the log, so that a test that hangs is named by its last line; the tail here
  limited "$(share 240)" "$py" -m pytest -m "gpu and not slow" -v -p no:cacheprovider --durations=10 tests \
    > "$out/tests.log" 2>&1 || status=1
  grep -E "FAILED|ERROR" "$out/tests.log" | head -20
  tail -15 "$out/tests.log"
fi

if timing_step direct; then
  direct_nmin=$(( nmax < 16 ? nmax : 16 ))
  banner "the kernels alone (prefixes at row 5, main search, symmetric search), n=$direct_nmin..$nmax"
  seconds=$(share 120)
  limited "$seconds" "$py" bench/gpu_nqueens.py --path direct --nmin "$direct_nmin" --nmax "$nmax" --no-cold \
    --plain-nodes-max 0 $(inner_budget "$seconds") --json "$out/direct.json" 2>&1 | tee "$out/direct.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  "$py" -c "import json, sys; [print(r['n'], {k: round(r[k], 4) for k in ('prefixes_s', 'kernel_s', 'symmetric_s')}) for r in json.load(open(sys.argv[1]))]" \
    "$out/direct.json" 2>&1 | tee -a "$out/direct.txt"
fi

if step sanitize; then
  banner "compute-sanitizer: memcheck, then racecheck, on small runs of every kernel against the CPU"
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do  # each tool's cases, cheapest first (bench/gpu_sanitize.py)
      if [ "$tool" = memcheck ]; then cap=120; else cap=90; fi
      limited "$(share "$cap")" compute-sanitizer --tool "$tool" --error-exitcode 99 "$py" bench/gpu_sanitize.py \
        --tool "$tool" > "$out/sanitize_$tool.txt" 2>&1
      rc=$?  # logged: the summary lines alone do not say which of the checker or the cases failed
      [ "$rc" -eq 0 ] || { status=1; echo "device_run: compute-sanitizer --tool $tool exited with status $rc" >> "$out/sanitize_$tool.txt"; }
      grep -E "^(ok  |DIFF|FAIL)| cases agree|ERROR SUMMARY|RACECHECK SUMMARY|device_run:" "$out/sanitize_$tool.txt" | sed "s/^/$tool: /"
    done
  else
    echo "compute-sanitizer not found (CUDA toolkit): the kernels' memory checks skipped" | tee "$out/sanitize_memcheck.txt"
  fi
fi

if timing_step big; then
  # Each count keeps a checkpoint in the output folder: a step that is stopped (Ctrl-C, the
  # budget) resumes where it stopped when it is run again with the same --out.
  banner "n = $big_ns on the GPU against OEIS (checkpoints in $out)"
  for n in $big_ns; do
    limited "$(share 0)" "$py" -m gpuqueens nqueens "$n" --backend gpu --checkpoint "$out/big_$n.ckpt" 2>&1 | tee "$out/big_$n.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { status=1; echo "n=$n not finished: run the step again to resume"; break; }
    "$py" - "$n" "$out/big_$n.txt" <<'PY' 2>&1 | tee -a "$out/big.log"
import re
import sys
from pathlib import Path
sys.path.insert(0, "tests")
import oeis
n, text = int(sys.argv[1]), Path(sys.argv[2]).read_text()
found = re.findall(r"total (\d+)\s+unique (\d+)", text)
if not found:
    sys.exit(f"n={n}: no count in {sys.argv[2]}")
got = tuple(map(int, found[-1]))
want = (oeis.total(n), oeis.unique(n))
print(f"n={n}: total {got[0]} unique {got[1]}: {'equal to OEIS' if got == want else f'NOT OEIS {want}'}")
sys.exit(got != want)
PY
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  done
fi

if timing_step engines; then
  banner "engines: this tree's kernels, with the split's work items, from row 8, in the widest blocks, and peers/engine-*/, n=18..$nmax (kernel seconds, best of 2 turns)"
  trees=$(ls -d peers/engine-*/ 2>/dev/null | sed 's:/$::')
  : > "$out/engines.txt"
  [ -n "$trees" ] || echo "no peers/engine-* (bash bench/prepare_peers.sh --engine COMMIT): this tree alone" \
    | tee "$out/engines.txt"
  for turn in 1 2; do  # in turn, so that every tree sees the device in the same state
    # split2: this tree with the split's work items (--split 2); expand3: this tree with the
    # search from row 8 (--expand 3: a smaller stack, more warps per SM); widest: this tree
    # with the block size at which an SM holds the most search threads (--block-size widest)
    for tree in . split2 expand3 widest $trees; do
      name=$([ "$tree" = . ] && echo current || basename "$tree")
      options=()
      if [ "$tree" = split2 ]; then tree=.; options=(--split 2); fi
      if [ "$tree" = expand3 ]; then tree=.; options=(--expand 3); fi
      if [ "$tree" = widest ]; then tree=.; options=(--block-size widest); fi
      limited "$(share 0)" "$py" "$tree/bench/gpu_nqueens.py" --path direct --nmin 18 --nmax "$nmax" --no-cold \
        --plain-nodes-max 0 "${options[@]}" --json "$out/engines-$name-$turn.json" >> "$out/engines.txt" 2>&1 \
        || status=1
    done
  done
  "$py" - "$out" <<'PY' 2>&1 | tee -a "$out/engines.txt"
import glob, json, os, sys
best = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "engines-*-[12].json"))):
    name = os.path.basename(path)[len("engines-"):-len("-1.json")]
    for row in json.load(open(path)):
        key = (name, row["n"])
        best[key] = min(best.get(key, float("inf")), row["kernel_s"])
names = sorted({name for name, _ in best})
print("n  " + "  ".join(f"{name:>22}" for name in names))
for n in sorted({n for _, n in best}):
    print(f"{n:<3}" + "  ".join(f"{best.get((name, n), float('nan')):>22.4f}" for name in names))
PY
fi

if timing_step ncuitems; then
  banner "Nsight Compute: nqueens_count at n=19, the prefixes expanded on the device against the split's work items"
  if command -v ncu >/dev/null; then
    for mode in expanded split2; do
      options=()
      [ "$mode" = split2 ] && options=(--split 2)
      limited "$(share 120)" ncu --kernel-name nqueens_count --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
        --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats \
        "$py" bench/gpu_nqueens.py --path direct --nmin 19 --nmax 19 --repeats 1 --no-cold \
        --plain-nodes-max 0 "${options[@]}" > "$out/ncu19-$mode.txt" 2>&1 || status=1
      grep -E "Duration|Grid Size|Executed Instructions  |Issued Instructions  |Avg. Active Threads|Avg. Not Predicated|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|device_run:" \
        "$out/ncu19-$mode.txt" | sed "s/^/$mode: /"
    done
  else
    echo "ncu not found (Nsight Compute): profile skipped" | tee "$out/ncu19-expanded.txt"
  fi
fi

if step matchsticks; then
  banner "matchsticks on the GPU: whole distributions (16x16..18x18, 20x20, 20x20 in 75 GB), then the puzzle table 5x5..7x7"
  limited "$(share 0)" "$py" bench/gpu_matchsticks.py --grids 16-18,20 --repeats 1 --json "$out/matchsticks.json" 2>&1 | tee "$out/matchsticks.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # 20x20 with its batches sized as on an 80 GB card (75 GB free), whatever this card holds
  limited "$(share 0)" "$py" bench/gpu_matchsticks.py --grids 20 --repeats 0 --memory-gb 75 \
    --json "$out/matchsticks80.json" 2>&1 | tee "$out/matchsticks80.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # problem 2 checked against every row up to 6x6, against four rows of 7x7 (a join each)
  limited "$(share 0)" "$py" bench/gpu_matchstick_table.py --grids 5-6 --json "$out/matchstick_table.json" 2>&1 | tee "$out/matchstick_table.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  limited "$(share 0)" "$py" bench/gpu_matchstick_table.py --grids 7 --exact-squares 0,5,10,14 --json "$out/matchstick_table7.json" 2>&1 | tee "$out/matchstick_table7.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step table8; then
  banner "the 8x8 puzzle table's first round, sampled: half sweeps, 4 centre patterns, the projection"
  limited "$(share 0)" "$py" bench/gpu_matchstick_sample.py 8x8 --patterns 4 --json "$out/sample8.json" 2>&1 \
    | tee "$out/sample8.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step workers; then
  banner "workers: one process per visible GPU, pinned by PCI address; n=20 totals; the fork pool"
  limited "$(share 0)" "$py" bench/device_workers.py --n 20 2>&1 | tee "$out/workers.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step table; then
  banner "side by side"
  "$py" - "$out/ours.json" "$out/seed.txt" "$out/ygch.txt" "$out/ncu18.txt" "$out/side_by_side.json" \
    "$out/direct.json" "$not_run" <<'PY' 2>&1 | tee "$out/table.txt"
import json, re, sys
from pathlib import Path

ours_path, seed_path, ygch_path, ncu_path, json_path, direct_path = map(Path, sys.argv[1:7])
not_run = sys.argv[7].split()
# the engine's goals (docs/performance.md): warm seconds of gpuqueens.count(n) on one H100
GOAL_S = {18: 0.15, 19: 0.4, 20: 1.3, 21: 10, 22: 80}
ours = {r["n"]: r for r in json.loads(ours_path.read_text())} if ours_path.exists() else {}
kernel = {r["n"]: r["kernel_s"] for r in json.loads(direct_path.read_text())} if direct_path.exists() else {}
seed = {}
if seed_path.exists():
    # the seed prints "N: Total Unique dd:hh:mm:ss.cc" (cc = hundredths of a second)
    row = re.compile(r"^\s*(\d+):\s*(\d+)\s+(\d+)\s+(\d+):(\d+):(\d+):(\d+)\.(\d+)")
    for line in seed_path.read_text().splitlines():
        if m := row.match(line):
            n, total, unique, dd, hh, mm, ss, cc = map(int, m.groups())
            seed[n] = (total, unique, dd * 86400 + hh * 3600 + mm * 60 + ss + cc / 100)

ygch = {}
if ygch_path.exists():
    # ygch prints "cuda N queens result TOTAL, calc time: [MS ms]"
    row = re.compile(r"cuda (\d+) queens result (\d+), calc time: \[([\d.]+)ms\]")
    for m in row.finditer(ygch_path.read_text()):
        ygch[int(m.group(1))] = (int(m.group(2)), float(m.group(3)) / 1000)

def rate(nodes, seconds):
    return f"{nodes / seconds:.3e}" if nodes and seconds else "-"

print(f"{'n':>3} {'total':>16} {'ours s':>9} {'goal s':>6} {'kernel s':>9} {'seed s':>9} {'seed/ours':>9} "
      f"{'ygch s':>9} {'ygch/ours':>9} {'ours nodes/s':>12} {'seed nodes/s':>12} agree")
for n in sorted(set(ours) | set(seed) | set(ygch)):
    r, s = ours.get(n), seed.get(n)
    y = ygch.get(n)
    total = r["total"] if r else (s[0] if s else y[0])
    ours_s = r["warm_s"] if r else None
    seed_s = s[2] if s else None
    nodes = r["plain_nodes"] if r else None
    agree = "-" if not (r and (s or y)) else (
        "yes" if (not s or (r["total"], r["unique"]) == s[:2]) and (not y or r["total"] == y[0]) else "NO")
    ratio = f"{seed_s / ours_s:.2f}" if ours_s and seed_s else "-"
    ours_txt = "-" if ours_s is None else f"{ours_s:.3f}"
    seed_txt = "-" if seed_s is None else f"{seed_s:.2f}"
    ygch_s = y[1] if y else None
    ygch_txt = "-" if ygch_s is None else f"{ygch_s:.3f}"
    ygch_ratio = f"{ygch_s / ours_s:.2f}" if ours_s and ygch_s else "-"
    goal = GOAL_S.get(n)
    goal_txt = "-" if goal is None else f"{goal:g}" + ("" if ours_s is None else " ok" if ours_s < goal else " NO")
    kernel_txt = f"{kernel[n]:.3f}" if n in kernel else "-"
    print(f"{n:>3} {total:>16} {ours_txt:>9} {goal_txt:>6} {kernel_txt:>9} {seed_txt:>9} {ratio:>9} "
          f"{ygch_txt:>9} {ygch_ratio:>9} {rate(nodes, ours_s):>12} {rate(nodes, seed_s):>12} {agree}")
print("ours s: warm seconds of the public call; kernel s: the kernels alone (step direct);"
      " nodes/s = queens placed by the plain unreduced search (fixed per n) / wall seconds;"
      " the seed's clock has 0.01 s resolution.")
rows = [{"n": n, "gpuqueens_s": ours[n]["warm_s"] if n in ours else None,
         "seed_s": seed[n][2] if n in seed else None, "ygch_s": ygch[n][1] if n in ygch else None}
        for n in sorted(set(ours) | set(seed) | set(ygch))]
json_path.write_text(json.dumps(rows, indent=1))
if ncu_path.exists():
    text = ncu_path.read_text()
    for name in ("Achieved Occupancy", "Avg. Active Threads Per Warp", "Registers Per Thread", "Duration"):
        if m := re.search(re.escape(name) + r"\s+\S*\s+([\d.,]+)", text):
            print(f"ncu n=18 nqueens_count: {name} = {m.group(1)}")
if not_run:
    print("not run (the reason in brackets):", " ".join(not_run))
PY
fi

echo
echo "device_run: outputs in $out, $(( SECONDS - started )) s (status $status)"
exit $status
