#!/usr/bin/env bash
# One script for the GPU machine: build, GPU tests, benchmark, seed peer side by side.
#
#   bash bench/device_run.sh [--with-22] [--nmax N] [--seed-nmax N] [--steps "build tests bench seed table"]
#
# Before: run bench/prepare_peers.sh on the developer machine and carry "peers" to the device
# (it is git-ignored). Outputs go to $OUT/device_run (the device tool brings $OUT back) or to
# out/device_run. Every step logs to its own file; the script ends with a short table of our
# warm time against the seed's time for each n.
#
# Device time: one device command may run at most 10 minutes, so on the lent machine run the
# steps in separate calls when the range is large, e.g.
#   --steps "build tests"   then   --steps bench   then   --steps "seed table"
# (the table step reads the earlier steps' files from the same output folder, so keep $OUT
# contents or use out/ within one warm machine session).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

nmin=8
nmax=21
seed_nmax=20
steps="build tests bench seed table"
while [ $# -gt 0 ]; do
  case "$1" in
    --with-22) nmax=22 ;;
    --nmax) nmax=$2; shift ;;
    --seed-nmax) seed_nmax=$2; shift ;;
    --steps) steps=$2; shift ;;
    *) echo "device_run: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

out=${OUT:-$root/out}/device_run
mkdir -p "$out"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
status=0

step() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
banner() { echo; echo "=== $* ==="; }

if step build; then
  banner "environment and build"
  {
    nvidia-smi -L || true
    nvcc --version | tail -2
    python -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__)"
    nvcc -arch=sm_90 -cubin -O3 --resource-usage -Xptxas -warn-spills,-warn-lmem-usage \
      -o "$out/nqueens.cubin" kernels/nqueens.cu
    # compile through CuPy/NVRTC once, so later steps find the kernel cache warm
    python -c "from gpuqueens.kernels import load_module; load_module('nqueens.cu'); print('NVRTC build ok')"
  } 2>&1 | tee "$out/build.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step tests; then
  banner "GPU tests (pytest -m gpu)"
  python -m pytest -m gpu -q -p no:cacheprovider tests 2>&1 | tee "$out/tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step bench; then
  banner "benchmark n=$nmin..$nmax"
  python bench/gpu_nqueens.py --nmin "$nmin" --nmax "$nmax" --json "$out/ours.json" 2>&1 | tee "$out/bench.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if step seed; then
  banner "seed peer n=$nmin..$seed_nmax"
  if [ -x peers/tools/seed_nqueens.sh ]; then
    SEED_BUILD_DIR="$root/peers/build" bash peers/tools/seed_nqueens.sh -n "$nmin" "$seed_nmax" 2>&1 | tee "$out/seed.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    echo "peers/tools/seed_nqueens.sh is missing: run bench/prepare_peers.sh and carry peers/" | tee "$out/seed.txt"
  fi
fi

if step table; then
  banner "side by side"
  python - "$out/ours.json" "$out/seed.txt" <<'PY' 2>&1 | tee "$out/table.txt"
import json, re, sys
from pathlib import Path

ours_path, seed_path = map(Path, sys.argv[1:3])
ours = {r["n"]: r for r in json.loads(ours_path.read_text())} if ours_path.exists() else {}
seed = {}
if seed_path.exists():
    # the seed prints "N: Total Unique dd:hh:mm:ss.cc" (cc = hundredths of a second)
    row = re.compile(r"^\s*(\d+):\s*(\d+)\s+(\d+)\s+(\d+):(\d+):(\d+):(\d+)\.(\d+)")
    for line in seed_path.read_text().splitlines():
        if m := row.match(line):
            n, total, unique, dd, hh, mm, ss, cc = map(int, m.groups())
            seed[n] = (total, unique, dd * 86400 + hh * 3600 + mm * 60 + ss + cc / 100)

def rate(nodes, seconds):
    return f"{nodes / seconds:.3e}" if nodes and seconds else "-"

print(f"{'n':>3} {'total':>16} {'ours s':>9} {'seed s':>9} {'seed/ours':>9} {'ours nodes/s':>12} {'seed nodes/s':>12} agree")
for n in sorted(set(ours) | set(seed)):
    r, s = ours.get(n), seed.get(n)
    total = r["total"] if r else s[0]
    ours_s = r["warm_s"] if r else None
    seed_s = s[2] if s else None
    nodes = r["plain_nodes"] if r else None
    agree = "-" if not (r and s) else ("yes" if (r["total"], r["unique"]) == s[:2] else "NO")
    ratio = f"{seed_s / ours_s:.2f}" if ours_s and seed_s else "-"
    ours_txt = "-" if ours_s is None else f"{ours_s:.3f}"
    seed_txt = "-" if seed_s is None else f"{seed_s:.2f}"
    print(f"{n:>3} {total:>16} {ours_txt:>9} {seed_txt:>9} {ratio:>9} "
          f"{rate(nodes, ours_s):>12} {rate(nodes, seed_s):>12} {agree}")
print("nodes/s = queens placed by the plain unreduced search (fixed per n) / wall seconds;"
      " the seed's clock has 0.01 s resolution.")
PY
fi

echo
echo "device_run: outputs in $out (status $status)"
exit $status
