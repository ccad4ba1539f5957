#!/bin/sh
# Worker and checkpoint measurements for docs/worker.md and docs/performance.md.
# Usage: bench/worker_measure.sh <build dir> [scratch dir] [iterations per A/B round (2000)] [A/B rounds (7)]
# Run it on an idle machine: the load average is printed before and after, with the figures.
set -eu
build=${1:?usage: worker_measure.sh <build dir> [scratch dir] [iterations per round] [rounds]}
scratch=${2:-$(mktemp -d)}
iterations=${3:-2000}
rounds=${4:-7}
echo "== load before: $(uptime)"
nproc
echo "== dd, 256 MiB with fsync, on $scratch"
dd if=/dev/zero of="$scratch/dd.bin" bs=1M count=256 conv=fsync 2>&1 | tail -n 1
echo "== dd read back (page cache hot, like the checkpoint read below)"
dd if="$scratch/dd.bin" of=/dev/null bs=1M 2>&1 | tail -n 1
rm -f "$scratch/dd.bin"
echo "== checkpoint_throughput"
"$build/bin/checkpoint_throughput" "$scratch" 256 3
echo "== worker_overhead"
"$build/bin/worker_overhead" "$scratch" "$iterations" "$rounds"
echo "== lease handover of the ~100 MB model (5 handovers)"
python3 "$(dirname "$0")/worker_handover.py" "$build" "$scratch" 5
echo "== load after: $(uptime)"
