#!/bin/bash
# Benchmark of issue 16: explore --seeds S --steps 40 in the command's process, on --jobs 2, and on
# a local Dask cluster (a scheduler and two one-thread workers on 127.0.0.1, stopped afterwards);
# prints each run's summary and whether the three reports are equal but for seconds. Not a test.
# Needs the 'scale' extra (dask on PATH). Usage: bench/bench_cluster.sh [SEEDS]   (default 30)
set -u
S=${1:-30}
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-cluster-XXXX")
cd "$T" || exit 1
# Dask's scratch space (the scheduler's too) stays in $T, removed on exit.
export DASK_TEMPORARY_DIRECTORY="$T"
PIDS=()
cleanup() {
    # SIGKILL: a worker without a nanny, sent SIGTERM, can wait on a scheduler that has gone
    for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; done
    cd / && rm -rf "$T"
}
trap cleanup EXIT
PORT=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run() {
    name=$1; shift
    pi-continuity-harness explore --seeds "$S" --steps 40 --quiet --json "$name.json" --out "out-$name" "$@" >/dev/null
}
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
run local1
run local2 --jobs 2
setsid dask scheduler --host 127.0.0.1 --port "$PORT" --no-dashboard >sched.log 2>&1 & PIDS+=($!)
for i in 0 1; do
    setsid dask worker "tcp://127.0.0.1:$PORT" --nthreads 1 --host 127.0.0.1 --no-dashboard --no-nanny \
        --local-directory "w$i" >"w$i.log" 2>&1 & PIDS+=($!)
done
python -c "import distributed; c = distributed.Client('tcp://127.0.0.1:$PORT', timeout=60); c.wait_for_workers(2, timeout=120); c.close()"
run dask --scheduler "tcp://127.0.0.1:$PORT"
python - <<'PY'
import json
reports = {n: json.load(open(f"{n}.json")) for n in ("local1", "local2", "dask")}
untimed = {n: [{k: v for k, v in s.items() if k != "seconds"} for s in r["seeds"]] for n, r in reports.items()}
where = {"local1": "in the command's process", "local2": "--jobs 2", "dask": "Dask, 2 one-thread workers"}
for n, r in reports.items():
    s = r["summary"]
    print(f"{where[n]:<28}: {s['operations']} operations in {s['wallSeconds']:.1f} s, "
          f"{s['operationsPerSecond']} ops/s, retried seeds {s.get('retriedSeeds', [])}")
print("reports equal but for seconds:", untimed["local1"] == untimed["local2"] == untimed["dask"])
PY
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
