#!/usr/bin/env bash
# Put the peer programs that bench/device_run.sh compares against into the git-ignored
# folder peers/ (benchmarking aids, not part of gpuqueens; never committed):
#
#   peers/tools/seed_nqueens.sh          builds and runs the seed CUDA program
#   peers/seeds/002_38695e4fd0590979.txt the seed document it extracts the program from
#   peers/ygch/src                       ygch/n_queens (MIT), from a clone of its repository
#
#   bash bench/prepare_peers.sh SEED_DIR [YGCH_CLONE]
#   bash bench/prepare_peers.sh --engine COMMIT     # peers/engine-<commit>: gpuqueens at COMMIT
#
# SEED_DIR holds tools/seed_nqueens.sh and seeds/002_38695e4fd0590979.txt (the tool finds the
# seed as "$here/../seeds/...", so the tools/ + seeds/ layout is kept). YGCH_CLONE is a clone
# of https://github.com/ygch/n_queens (default: peers/ygch itself, e.g. after
# "git clone https://github.com/ygch/n_queens peers/ygch"); its src/ is used as it is.
# --engine exports an earlier commit of this repository (git archive) so that the "engines"
# step of bench/device_run.sh can time its kernels side by side with the current ones.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
  -h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
  --engine)
    [ $# -eq 2 ] || { echo "usage: bash bench/prepare_peers.sh --engine COMMIT" >&2; exit 2; }
    commit=$(git -C "$root" rev-parse --short "$2^{commit}" 2>/dev/null) \
      || { echo "prepare_peers: $2 is not a commit of this repository" >&2; exit 1; }
    dest="$root/peers/engine-$commit"
    rm -rf "$dest" && mkdir -p "$dest"
    git -C "$root" archive "$commit" | tar -x -C "$dest"
    echo "gpuqueens at $commit in $dest"
    exit 0 ;;
  -*) echo "prepare_peers: unknown option $1 (bash bench/prepare_peers.sh --help)" >&2; exit 2 ;;
esac
usage="usage: bash bench/prepare_peers.sh SEED_DIR [YGCH_CLONE] (--help for more)"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
seed_dir=$1
seed=002_38695e4fd0590979.txt
for file in "$seed_dir/tools/seed_nqueens.sh" "$seed_dir/seeds/$seed"; do
  [ -f "$file" ] || { echo "prepare_peers: $file not found" >&2; exit 1; }
done
mkdir -p "$root/peers/tools" "$root/peers/seeds"
cp "$seed_dir/tools/seed_nqueens.sh" "$root/peers/tools/seed_nqueens.sh"
cp "$seed_dir/seeds/$seed" "$root/peers/seeds/$seed"
chmod +x "$root/peers/tools/seed_nqueens.sh"
echo "seed peer copied into $root/peers"

ygch=${2:-$root/peers/ygch}
if [ -d "$ygch/src" ]; then
  if [ "$ygch" != "$root/peers/ygch" ]; then
    rm -rf "$root/peers/ygch" && mkdir -p "$root/peers/ygch"
    cp -r "$ygch/src" "$root/peers/ygch/src"
    [ -f "$ygch/LICENSE" ] && cp "$ygch/LICENSE" "$root/peers/ygch/"
  fi
  git -C "$ygch" log -1 --format='%H %cs' > "$root/peers/ygch/COMMIT" 2>/dev/null || true
  echo "ygch/n_queens in $root/peers/ygch ($(cat "$root/peers/ygch/COMMIT" 2>/dev/null || echo 'commit unknown'))"
else
  echo "ygch/n_queens not found: git clone https://github.com/ygch/n_queens $root/peers/ygch"
fi
