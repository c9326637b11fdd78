#!/usr/bin/env bash
# Copy the seed peer (a benchmarking aid, not part of gpuqueens) into the git-ignored folder
# peers/, so that it travels to the GPU machine with the working tree (name "peers" in the
# device tool's carry list) and runs there without ../shared:
#
#   peers/tools/seed_nqueens.sh          builds and runs the seed CUDA program
#   peers/seeds/002_38695e4fd0590979.txt the seed document it extracts the program from
#
# The tool finds the seed as "$here/../seeds/...", so keeping the tools/ + seeds/ layout is all
# the path setting it needs; bench/device_run.sh points SEED_BUILD_DIR into peers/build.
#
#   bash bench/prepare_peers.sh [SHARED_DIR]     (default: ../shared beside the checkout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${1:-${SHARED_DIR:-$root/../shared}}
seed=002_38695e4fd0590979.txt
for file in "$shared/tools/seed_nqueens.sh" "$shared/seeds/$seed"; do
  [ -f "$file" ] || { echo "prepare_peers: $file not found" >&2; exit 1; }
done
mkdir -p "$root/peers/tools" "$root/peers/seeds"
cp "$shared/tools/seed_nqueens.sh" "$root/peers/tools/seed_nqueens.sh"
cp "$shared/seeds/$seed" "$root/peers/seeds/$seed"
chmod +x "$root/peers/tools/seed_nqueens.sh"
echo "seed peer copied into $root/peers (carry \"peers\" to the device machine)"

# Optional second peer, ygch/n_queens (MIT): bring it with the search tool's fetch, then
#   YGCH_GIT=/work/.mirror/ygch+n_queens/repo bash bench/prepare_peers.sh
# exports its src/ into peers/ygch/src (git-ignored, never committed).
if [ -n "${YGCH_GIT:-}" ]; then
  rm -rf "$root/peers/ygch" && mkdir -p "$root/peers/ygch"
  git --git-dir="$YGCH_GIT" archive HEAD src LICENSE | tar -x -C "$root/peers/ygch"
  git --git-dir="$YGCH_GIT" log -1 --format='%H %cs' > "$root/peers/ygch/COMMIT"
  echo "ygch/n_queens $(cat "$root/peers/ygch/COMMIT") exported into $root/peers/ygch"
fi
