# bach plan --slurm DIR -- CMD OPTION... (docs/analysis.md section 7,
# docs/scale.md): the scripts it writes run on a real Slurm, a single node
# of our own in $T: munged with a private key and socket, slurmctld and
# slurmd under a private slurm.conf on ports the kernel had free, each
# stopped by its pid on the way out. submit.sh submits the array of
# --partial runs and the merge after it (--dependency=afterok), and the
# merged result equals the unsplit run byte for byte (mrc --json, stat,
# mrc --csv --assoc 4, sim --configs FILE --json, over several chunks of a capture and a file with a
# quote and a space in its name). A failing task cancels the merge. Bad
# use is refused, exit 2, before anything is written; the scripts run by
# hand (as root or not) give the unsplit output too.
. "$TOP/tests/lib.sh"

# refusals need no Slurm
"$BACH" gen --records 120000 -o "$T/g.byu.gz" 2> "$T/err" || fail "gen: $(cat "$T/err")"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d"
expect_err "--slurm: no command after --"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" -- mrc
expect_err "a command after --: only with --slurm DIR"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- dump
expect_err "bach dump takes no --range and --partial"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- merge
expect_err "bach merge takes no --range and --partial"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- frob
expect_err "no command 'frob' after --"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- mrc --lines 32
expect_err "unrecognized option '--lines'"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- mrc --range 0:5
expect_err "--range is bach plan's to give each task"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- stat --partial x
expect_err "--partial is bach plan's to give each task"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- mrc "$T/g.byu.gz"
expect_err "the TRACEs go before --"
[ ! -e "$T/d" ] || fail "a refused plan made $T/d"
mkdir "$T/d"
touch "$T/d/notes"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" -- mrc
expect_err "is not empty (it holds notes): --force"
[ ! -e "$T/d/array.sh" ] || fail "a refused plan wrote into $T/d"
"$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d" --force -- mrc > "$T/out" 2> "$T/err" ||
	fail "plan --force: $(cat "$T/err")"
[ -x "$T/d/array.sh" ] && [ -x "$T/d/merge.sh" ] && [ -x "$T/d/submit.sh" ] ||
	fail "plan --slurm wrote: $(ls "$T/d")"
# the array's tasks as plan's ranges, run by hand (Slurm sets the id)
grep -q '^#SBATCH --array=0-2$' "$T/d/array.sh" || fail "array.sh: $(grep SBATCH "$T/d/array.sh")"
i=0
for r in $(cut -d' ' -f1 "$T/out"); do
	grep -q "^$i) range=$r ;;\$" "$T/d/array.sh" || fail "array.sh has no task $i for $r"
	i=$((i + 1))
done
expect_status 2 env SLURM_ARRAY_TASK_ID=3 sh "$T/d/array.sh"
expect_err "no chunk '3' (0 to 2)"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/a\\b" -- mrc
expect_err "a backslash in it would turn off the patterns of Slurm's --output"
# the scripts run by hand, as Slurm would, from elsewhere: the command's
# options parsed by its own table (--cs is --csv, which goes to merge)
"$BACH" plan --chunks 4 "$T/g.byu.gz" --slurm "$T/by hand" -- mrc --cs --line 64 > /dev/null 2> "$T/err" ||
	fail "plan --slurm -- mrc --cs: $(cat "$T/err")"
grep -q " merge --csv " "$T/by hand/merge.sh" || fail "merge.sh: $(cat "$T/by hand/merge.sh")"
for i in 0 1 2 3; do
	(cd / && SLURM_ARRAY_TASK_ID=$i sh "$T/by hand/array.sh") 2> "$T/err" ||
		fail "array.sh, task $i: $(cat "$T/err")"
done
(cd / && sh "$T/by hand/merge.sh") 2> "$T/err" || fail "merge.sh: $(cat "$T/err")"
"$BACH" mrc --csv --line 64 "$T/g.byu.gz" > "$T/whole" || fail "mrc --csv --line 64"
same "$T/by hand/result" "$T/whole"
[ ! -e "$T/by hand/result.tmp" ] || fail "merge.sh left result.tmp"
# sim --configs FILE: the scripts name FILE by its absolute path
printf '%s\n' "--l1 8k:32:2" "--l1 4k:16:4:fifo --l2 32k:64:8:random --tlb 16:4" > "$T/sweep.txt"
(cd "$T" && "$BACH" plan --chunks 3 g.byu.gz --slurm sweep -- sim --configs=sweep.txt) > /dev/null 2> "$T/err" ||
	fail "plan --slurm -- sim --configs: $(cat "$T/err")"
grep -qF "'--configs=$T/sweep.txt'" "$T/sweep/array.sh" || fail "array.sh: $(tail -n 1 "$T/sweep/array.sh")"
for i in 0 1 2; do
	(cd / && SLURM_ARRAY_TASK_ID=$i sh "$T/sweep/array.sh") 2> "$T/err" ||
		fail "sim --configs array.sh, task $i: $(cat "$T/err")"
done
(cd / && sh "$T/sweep/merge.sh") 2> "$T/err" || fail "sim --configs merge.sh: $(cat "$T/err")"
"$BACH" sim --configs "$T/sweep.txt" "$T/g.byu.gz" > "$T/whole" || fail "sim --configs"
same "$T/sweep/result" "$T/whole"
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d2" -- sim --configs "$T/none.txt"
expect_err "--slurm: --configs: $T/none.txt: No such file or directory"
# one FILE: the scripts are written from the rewritten argument
expect_status 2 "$BACH" plan --chunks 3 "$T/g.byu.gz" --slurm "$T/d2" -- sim --configs "$T/sweep.txt" --configs "$T/sweep.txt"
expect_err "--slurm: --configs given twice"

[ "$(id -u)" -eq 0 ] || skip "not root: a Slurm of its own runs slurmd as root"
for p in munged slurmctld slurmd sbatch scontrol; do
	command -v "$p" > /dev/null ||
		skip "no $p (Debian packages slurmctld, slurmd, slurm-client, munge; scripts/deps.sh)"
done

PIDS=""
cleanup() {
	# the jobs first (their steps are slurmd's), then the daemons
	[ ! -s "$T/slurm.conf" ] ||
		SLURM_CONF=$T/slurm.conf scancel --quiet --user=root > /dev/null 2>&1 || true
	# every job step's slurmstepd gone (each holds a socket NODE_JOB.STEP
	# in slurmd's spool while it runs)
	n=100
	while [ -n "${S:-}" ] && set -- "$S"/spool/localhost_* && [ -e "$1" ] && [ $n -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	for p in $PIDS; do
		kill -TERM "$p" 2> /dev/null || true
	done
	for p in $PIDS; do
		n=100
		while kill -0 "$p" 2> /dev/null && [ $n -gt 0 ]; do
			sleep 0.05
			n=$((n - 1))
		done
		kill -KILL "$p" 2> /dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# free PORT...: TCP ports nobody listens on, the kernel's choice
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTLD_PORT=${ports% *}
SLURMD_PORT=${ports#* }

S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/munge"
chmod 700 "$S/munge"
dd if=/dev/urandom of="$S/munge/key" bs=1024 count=1 2> /dev/null
chmod 400 "$S/munge/key"
munged -F --force --key-file="$S/munge/key" --socket="$S/munge/socket" \
	--pid-file="$S/munge/pid" --seed-file="$S/munge/seed" \
	--log-file="$S/munge/log" 2> "$S/munged.err" &
PIDS="$PIDS $!"
n=100
while [ ! -S "$S/munge/socket" ]; do
	n=$((n - 1))
	[ $n -gt 0 ] || fail "munged did not start: $(cat "$S/munged.err" "$S/munge/log")"
	sleep 0.05
done

# the controller's host must be this host's name, reached at 127.0.0.1
cat > "$T/slurm.conf" << EOF
ClusterName=bachtest
SlurmctldHost=$(uname -n | cut -d. -f1)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/socket
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
MinJobAge=300
KillWait=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=bach Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
# the cluster this test may itself run in is not ours: its SLURM_* and
# SBATCH_* (input variables of sbatch) go
for v in $(env | sed -n 's/^\(SLURM_[A-Z0-9_]*\|SBATCH_[A-Z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
SLURM_CONF=$T/slurm.conf
export SLURM_CONF

slurmctld -D -i -f "$SLURM_CONF" 2> "$S/slurmctld.err" &
PIDS="$PIDS $!"
# slurmd under a subreaper of ours: each job's slurmstepd leaves slurmd
# to live on its own, and would be init's to reap (late, or never, where
# init is not a real one); the subreaper reaps them, and on SIGTERM stops
# slurmd and kills, by pid, any of them still there
cat > "$S/reaper.py" << 'EOF'
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
child = os.fork()
if child == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
stop = []
def term(*_):
    stop.append(1)
    os.kill(child, signal.SIGTERM)
signal.signal(signal.SIGTERM, term)
def mine():
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        try:
            st = open("/proc/%s/stat" % d).read()
        except (OSError, ValueError):
            continue
        if d.isdigit() and int(st.rsplit(")", 1)[1].split()[1]) == me:
            out.append(int(d))
    return out
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
    except InterruptedError:
        continue
    if stop:
        for p in mine():
            if p != child:
                os.kill(p, signal.SIGKILL)
EOF
python3 "$S/reaper.py" slurmd -D -N localhost -f "$SLURM_CONF" 2> "$S/slurmd.err" &
PIDS="$PIDS $!"
n=300
until scontrol show node localhost 2> /dev/null | grep -q 'State=IDLE'; do
	n=$((n - 1))
	[ $n -gt 0 ] || fail "the node did not come up: $(tail -n 5 "$S/slurmctld.log" "$S/slurmd.log" "$S/slurmctld.err" "$S/slurmd.err" 2>&1)"
	sleep 0.1
done

# state JOBID: the job's state (an array's: every task's, one a line)
state() {
	scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# run_plan NAME TRACE CHUNKS CMD OPTION...: bach plan --slurm into $T/NAME,
# submitted, waited for; the merge job's final state in $MSTATE
run_plan() {
	d=$T/$1
	tr=$2
	ch=$3
	shift 3
	"$BACH" plan --chunks "$ch" "$tr" --slurm "$d" -- "$@" > "$T/plan.out" 2> "$T/err" ||
		fail "plan --slurm -- $*: $(cat "$T/err")"
	[ "$(wc -l < "$T/plan.out")" -eq "$ch" ] || fail "plan --chunks $ch: $(cat "$T/plan.out")"
	(cd / && sh "$d/submit.sh") > "$T/ids" 2> "$T/err" || fail "submit.sh: $(cat "$T/err")"
	AJOB=$(sed -n 's/^array \([0-9]*\)$/\1/p' "$T/ids")
	MJOB=$(sed -n 's/^merge \([0-9]*\)$/\1/p' "$T/ids")
	[ -n "$AJOB" ] && [ -n "$MJOB" ] || fail "submit.sh printed: $(cat "$T/ids")"
	scontrol show job "$MJOB" | grep -q "Dependency=afterok:${AJOB}_\*" ||
		fail "merge job without its dependency: $(scontrol show job "$MJOB")"
	n=400
	while :; do
		MSTATE=$(state "$MJOB")
		case $MSTATE in
		PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;;
		*) break ;;
		esac
		n=$((n - 1))
		[ $n -gt 0 ] || fail "merge job $MJOB still $MSTATE: $(scontrol show job "$AJOB" | grep -E 'JobState|Reason')"
		sleep 0.1
	done
	# and every task of the array done
	n=100
	while state "$AJOB" | grep -qE '^(PENDING|RUNNING|CONFIGURING|COMPLETING)$'; do
		n=$((n - 1))
		[ $n -gt 0 ] || fail "array job $AJOB: $(state "$AJOB")"
		sleep 0.1
	done
	ATASKS=$(state "$AJOB" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')
}

# a capture of several segments with gap markers, and a file with a quote
# and a space in its name
mkdir "$T/caps"
"$BACH" capture --driver fake --option records=300000 --option drop_every=7 \
	--option overflow_every=5:300 --policy drop --set rotate_mb=1 \
	--output "$T/caps" 2> "$T/log" || fail "capture: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)
cp "$T/g.byu.gz" "$T/it's a trace.byu.gz"

run_plan "mrc json" "$C" 5 mrc --json --line 32
[ "$MSTATE" = COMPLETED ] || fail "merge job: $MSTATE (array: $ATASKS) $(cat "$T/mrc json/merge.log" "$T/mrc json"/part-*.log 2>&1 | head -5)"
[ "$ATASKS" = "5 COMPLETED" ] || fail "array tasks: $ATASKS"
"$BACH" mrc --json --line 32 "$C" > "$T/whole" || fail "mrc --json"
same "$T/mrc json/result" "$T/whole"

run_plan "stat'd" "$T/it's a trace.byu.gz" 3 stat
[ "$MSTATE" = COMPLETED ] || fail "stat merge job: $MSTATE (array: $ATASKS)"
"$BACH" stat "$T/it's a trace.byu.gz" > "$T/whole" || fail "stat"
same "$T/stat'd/result" "$T/whole"

run_plan "100%" "$C" 4 mrc --csv --assoc 4 --line 64
[ "$MSTATE" = COMPLETED ] || fail "mrc --csv merge job: $MSTATE (array: $ATASKS)"
"$BACH" mrc --csv --assoc 4 --line 64 "$C" > "$T/whole" || fail "mrc --csv"
same "$T/100%/result" "$T/whole"
[ -f "$T/100%/part-0.log" ] || fail "no task log where --output was to put it: $(ls "$T/100%")"

# a sweep, its FILE given relative to the directory plan runs in
cd "$T"
run_plan "sweep slurm" "$C" 4 sim --json --configs sweep.txt
cd /
[ "$MSTATE" = COMPLETED ] || fail "sim --configs merge job: $MSTATE (array: $ATASKS)"
"$BACH" sim --json --configs "$T/sweep.txt" "$C" > "$T/whole" || fail "sim --configs --json"
same "$T/sweep slurm/result" "$T/whole"

# a task that fails: the merge never runs, and no result appears
run_plan bad "$T/g.byu.gz" 2 mrc --window 1000 --type fetch
case $MSTATE in
CANCELLED*) ;;
*) fail "merge after a failed task: $MSTATE (array: $ATASKS)" ;;
esac
echo "$ATASKS" | grep -q FAILED || fail "array tasks: $ATASKS"
[ ! -e "$T/bad/result" ] || fail "a result without the tasks"
grep -q -- "--partial with --window: not with --type" "$T/bad/part-0.log" ||
	fail "task log: $(cat "$T/bad/part-0.log")"

echo ok
