#!/bin/sh
# Worker and checkpoint measurements for docs/worker.md. Usage: bench/worker_measure.sh <build dir> [scratch dir]
set -eu
build=${1:?usage: worker_measure.sh <build dir> [scratch dir]}
scratch=${2:-$(mktemp -d)}
echo "== dd, 256 MiB with fsync, on $scratch"
dd if=/dev/zero of="$scratch/dd.bin" bs=1M count=256 conv=fsync 2>&1 | tail -n 1
echo "== dd read back (page cache hot, like the checkpoint read below)"
dd if="$scratch/dd.bin" of=/dev/null bs=1M 2>&1 | tail -n 1
rm -f "$scratch/dd.bin"
echo "== checkpoint_throughput"
"$build/bin/checkpoint_throughput" "$scratch" 256 3
echo "== worker_overhead"
"$build/bin/worker_overhead" "$scratch"
