#!/bin/sh
# bach.dist on Dask (docs/scale.md): a LocalCluster of 2 worker processes
# against one of 1 (one thread each), on a capture of DIST_RECORDS records
# (default 200 M, made once by the fake driver and kept in
# $BENCH_DIR/dist-N), wall times measured in this one run:
#   - bach.dist.mrc, the exact curve: 2 workers at least 1.7x faster;
#   - bach.dist.sim, a 16-configuration sweep: at least 1.7x faster;
#   - the merge at most 5% of the 2-worker mrc's time (from the end of the
#     last chunk's task to the end of the root bach merge: what the merge
#     adds to the run, from Dask's task stream; no less than the merge
#     tasks' own compute time, since Dask corrects each worker's clock by
#     an estimate that a loaded machine makes rough).
# Each worker process is pinned to a CPU of its own (CPU 0 for 1 worker,
# CPUs 0 and 1 for 2, of those this script may use), every thread of it,
# so the bach runs it starts (which inherit the affinity) use one core per
# worker even when a reader uses a helper thread: 1 worker is one core.
# Both clusters must give the same answers. Also printed: the capture's
# compression ratio, the 1-worker mrc rate (docs/scale.md uses them) and
# the CPU time (user + system) of the mrc's bach runs summed over the
# workers, which the load moves less than the wall times.
# Wall times: on a shared machine they move with the load; say so.
# Exits 1 when a target is missed, 0 with a note when python3-distributed
# is missing.
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BACH="$TOP/$BUILD/bin/bach"
PYTHON=${PYTHON:-/usr/bin/python3}
N=${DIST_RECORDS:-200000000}
B=${BENCH_DIR:-$TOP/$BUILD/bench-data}
. "$TOP/bench/lib.sh"
missed=0

if ! "$PYTHON" -c 'import distributed' 2>/dev/null; then
	echo "dist: python3-distributed missing (scripts/deps.sh): not measured"
	exit 0
fi
C="$B/dist-$N"
if [ ! -f "$C/done" ]; then
	echo "dist: capturing $N records of the fake driver into $C..."
	rm -rf "$C"
	mkdir -p "$C"
	"$BACH" capture --driver fake --option records="$N" --output "$C" \
		2> "$C/log" || { cat "$C/log" >&2; exit 1; }
	touch "$C/done"
fi
CAP=$(ls -d "$C"/2*Z)
D=$(mktemp -d "${TMPDIR:-/tmp}/bach-bench-dist.XXXXXX")
trap 'rm -rf "$D"' EXIT
cat "$CAP"/seg-* > /dev/null

# the driver is a file, its work under __main__: Dask's worker processes
# start by spawn, which imports the main module again
cat > "$D/dist_bench.py" << 'EOF'
import json, os, resource, sys, time
import distributed
import bach.dist

trace, tmp = sys.argv[1], sys.argv[2]
# 16 configurations: split L1s of 4 sizes by 2 associativities, with and
# without an L2
CONFIGS = ["--l1i %s:32:%d --l1d %s:32:%d%s" % (s, a, s, a, l2)
           for s in ("8k", "16k", "32k", "64k") for a in (2, 4)
           for l2 in ("", " --l2 256k:64:8")]
assert len(CONFIGS) == 16


def spans(ts, prefix):
    return [(s["start"], s["stop"]) for t in ts for s in t["startstops"]
            if t["key"].startswith(prefix) and s["action"] == "compute"]


def pin(cpu):
    # every thread of the worker process (a thread's affinity is its own;
    # new threads and processes inherit their creator's)
    for t in os.listdir("/proc/self/task"):
        os.sched_setaffinity(int(t), {cpu})
    return sorted(os.sched_getaffinity(0))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(workers):
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None,
                                  local_directory=tmp) as cl, \
            distributed.Client(cl) as c:
        c.wait_for_workers(workers, timeout=300)
        c.run(lambda: __import__("bach.dist"))
        cpus = sorted(os.sched_getaffinity(0))
        for i, w in enumerate(sorted(c.scheduler_info()["workers"])):
            got = c.run(pin, cpus[i % len(cpus)], workers=[w])[w]
            assert got == [cpus[i % len(cpus)]], got
        cpu0 = c.run(children_cpu)
        with distributed.get_task_stream(c) as ts:
            t0 = time.perf_counter()
            curve = bach.dist.mrc(c, trace)
            t_mrc = time.perf_counter() - t0
        cpu = {w: t - cpu0[w] for w, t in c.run(children_cpu).items()}
        merge = max(max(b for _, b in spans(ts.data, "_merge_task")) -
                    max(b for _, b in spans(ts.data, "_part_task")),
                    sum(b - a for a, b in spans(ts.data, "_merge_task")))
        t0 = time.perf_counter()
        sims = bach.dist.sim(c, trace, CONFIGS)
        t_sim = time.perf_counter() - t0
    return t_mrc, merge, t_sim, curve, sims, cpu


if __name__ == "__main__":
    m1, g1, s1, c1, r1, u1 = run(1)
    m2, g2, s2, c2, r2, u2 = run(2)
    assert c1 == c2, "the curves of 1 and 2 workers differ"
    assert r1 == r2, "the sweeps of 1 and 2 workers differ"
    # the CPU of the busiest worker: what the run takes on idle cores
    print(m1, m2, g2, s1, s2, sum(u1.values()), sum(u2.values()),
          max(u2.values()))
EOF
echo "dist: $CAP, $N records, $(du -sm "$CAP" | cut -f1) MB on disk" \
	"(compression $(fmt "$(calc "$N * 6 / $(cat $(ls "$CAP"/seg-*.byu* | grep -v '\.gzi$') | wc -c)")"):1)"
echo "dist: wall times; LocalCluster of 1 and of 2 worker processes, 1 thread each, one CPU each (load average $(cut -d' ' -f1-3 /proc/loadavg))"
out=$(cd "$D" && BACH="$BACH" BACH_LIBRARY="$TOP/$BUILD/libbach.so.0" \
	PYTHONPATH="$TOP/python" "$PYTHON" dist_bench.py "$CAP" "$D" 2> "$D/err") ||
	{ tail -n 20 "$D/err" >&2; exit 1; }
# shellcheck disable=SC2086
set -- $out
echo "dist:   mrc exact   1 worker $(fmt "$1") s ($(fmt "$(calc "$N / $1 / 1e6")") M records/s), 2 workers $(fmt "$2") s"
echo "dist:   mrc exact   CPU of its bach runs, all workers: 1 worker $(fmt "$6") s, 2 workers $(fmt "$7") s (the busiest worker $(fmt "$8") s: $(fmt "$(calc "$6 / $8")")x when CPU-bound)"
echo "dist:   16-config sim  1 worker $(fmt "$4") s, 2 workers $(fmt "$5") s"
check "dist mrc exact, 2 workers >= 1.7x 1 worker" "$1 / $2 >= 1.7" \
	"$(fmt "$(calc "$1 / $2")")x"
check "dist sim, 16 configurations, 2 workers >= 1.7x 1 worker" "$4 / $5 >= 1.7" \
	"$(fmt "$(calc "$4 / $5")")x"
check "dist mrc, merge <= 5% of the 2-worker time" "$3 / $2 <= 0.05" \
	"$(fmt "$3") s, $(fmt "$(calc "100 * $3 / $2")")%"
exit $missed
