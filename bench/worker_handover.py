#!/usr/bin/env python3
"""Lease handover time of one themis-train job (docs/performance.md, "Worker").

A handover is what a moved lease costs the job: SIGTERM to the running worker (the coordinator's Stop)
-> stop agreement and checkpoint -> exit "preempted" -> a new worker process (the job's next attempt,
on other GPUs) starts, loads and verifies the newest checkpoint -> its first iteration. The model is
the ~100 MB MLP (32-5000-5000-10, 25.2 M fp32 parameters; with SGD momentum the checkpoint is 202 MB).

Usage: bench/worker_handover.py <build dir> [scratch dir] [handovers (default 5)] [hidden (default 5000)]
Prints every handover's phases and the p50. Times are wall clock, read from the workers' JSON lines
as they arrive on a pipe.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def start(binary, ckpt, hidden, job):
    env = dict(os.environ)
    for k in ("THEMIS_RANK", "RANK", "THEMIS_WORLD_SIZE", "WORLD_SIZE", "THEMIS_REPORT_ENDPOINT",
              "THEMIS_REPORT_SERVER_KEY", "THEMIS_REPORT_PUBLIC_KEY", "THEMIS_REPORT_SECRET_KEY", "THEMIS_HPARAMS"):
        env.pop(k, None)
    env.update({"THEMIS_CHECKPOINT_DIR": ckpt, "THEMIS_JOB_ID": job})
    args = [binary, "--model", "mlp", "--hidden", str(hidden), "--batch-size", "32", "--iterations", "1000000",
            "--threads", "1"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)


def read_until(proc, predicate):
    """Reads JSON lines until predicate(record) holds; returns (record, arrival time)."""
    for line in proc.stdout:
        record = json.loads(line)
        if predicate(record):
            return record, time.monotonic()
    raise RuntimeError("themis-train ended before the expected report (exit %s)" % proc.wait())


def is_iteration(r):
    return "event" not in r


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    scratch = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    hidden = int(sys.argv[4]) if len(sys.argv) > 4 else 5000
    binary = os.path.join(build, "bin", "themis-train")
    ckpt = tempfile.mkdtemp(dir=scratch, prefix="handover-")
    proc = start(binary, ckpt, hidden, "handover@0")
    read_until(proc, is_iteration)  # the first iteration record of a run is sent at once; later ones in batches
    totals = []
    print(f"{'#':>2} {'stop+ckpt':>10} {'exit':>6} {'start':>8} {'1st iter':>9} {'total':>8}   (seconds; checkpoint dir {ckpt})")
    for n in range(1, count + 1):
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        saved, t_ckpt = read_until(proc, lambda r: r.get("event") == "checkpoint")
        exit_event, _ = read_until(proc, lambda r: r.get("event") == "exit")
        if exit_event.get("status") != "preempted":
            raise RuntimeError("worker exited %s, not preempted" % exit_event)
        proc.wait()
        t_exit = time.monotonic()
        proc = start(binary, ckpt, hidden, f"handover@{n}")
        started, t_start = read_until(proc, lambda r: r.get("event") == "start")
        if int(started.get("resumed_from", "-1")) != saved["iter"]:
            raise RuntimeError("resumed from %s, expected %s" % (started.get("resumed_from"), saved["iter"]))
        _, t_first = read_until(proc, is_iteration)
        total = t_first - t0
        totals.append(total)
        print(f"{n:>2} {t_ckpt - t0:>10.3f} {t_exit - t_ckpt:>6.3f} {t_start - t_exit:>8.3f} {t_first - t_start:>9.3f} {total:>8.3f}",
              flush=True)
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    size = max(os.path.getsize(os.path.join(ckpt, f)) for f in os.listdir(ckpt) if f.endswith(".thm"))
    print(f"checkpoint file {size / 1e6:.1f} MB; handover p50 {statistics.median(totals):.3f} s, "
          f"min {min(totals):.3f} s, max {max(totals):.3f} s over {len(totals)}")
    print("phases: stop+ckpt = SIGTERM to the checkpoint event (stop agreement, serialization, write, fsync); "
          "exit = to the process's end; start = new process to its start event (LibTorch load, read, verify, "
          "deserialize); 1st iter = to its first iteration record")


if __name__ == "__main__":
    main()
