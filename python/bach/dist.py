# SPDX-License-Identifier: MIT
"""bach's analyses on a Dask cluster (distributed.Client), exactly as the
bach command prints them (docs/scale.md).

    import distributed, bach.dist
    client = distributed.Client(scheduler_file="scheduler.json")
    curve = bach.dist.mrc(client, "capture/20261121T223000Z", sizes="1k,8k,64k")
    stats = bach.dist.stat(client, ["a.byu.gz", "b.byu.gz"])
    runs = bach.dist.sim(client, "run.byu.gz",
                         ["--l1 16k:32:4", "--l1 32k:32:4 --l2 256k:64:8"])

mrc and stat return what json.loads() of `bach mrc --json` and `bach stat
--json` over the same traces returns. The trace is cut by `bach plan --json`
into a few large chunks (by default one per worker thread: each chunk
repeats some work, its cold start and its lists of lines for the merge,
so fewer are cheaper); each task
runs `bach CMD --range A:B --partial -` on a worker, and the partials are
merged as a tree of `bach merge --partial -` runs (up to `fanin` partials
each), the root printing `bach merge --json`. sim returns a list, one entry
per configuration: what json.loads() of `bach sim --json CONFIG` returns;
the configurations are split into groups (by default one), and each
group's pass over the trace into chunks of time, so that there are about
as many tasks as worker threads: each task
runs `bach sim --configs GROUP --range A:B --partial -`, merged like the
others.

Options are keyword arguments: `name=value` is `--name VALUE` with
underscores as dashes, `name=True` the flag `--name` (False or None: left
out), a list or tuple the option once per element. A comma list is one
string: sizes="1k,4k,16k", type="fetch,read".

Everything runs on the workers, through the bach program: `bach=` (a path
or a name looked up on the worker's PATH) when given, else the worker's
BACH environment variable, else `bach` on the worker's PATH. The traces
must be readable on every worker under the same path (relative paths are
made absolute here, on the client). A bach run that fails raises
CommandError with its exit status and its message.
"""
import json
import os
import shlex
import shutil
import subprocess
import tempfile

__all__ = ["mrc", "stat", "sim", "CommandError", "find_bach"]

# options dist sets itself, per task
_RESERVED = {"range", "partial", "json", "csv", "between", "time", "help",
             "configs"}


class CommandError(Exception):
    """A bach run on a worker failed: .argv, .exit_status (bach's: 1
    damaged data, 2 usage, ...) and .stderr (its message)."""

    def __init__(self, argv, exit_status, stderr):
        super().__init__(argv, exit_status, stderr)
        self.argv = list(argv)
        self.exit_status = exit_status
        self.stderr = stderr

    def __str__(self):
        return "%s: exit status %d: %s" % (
            " ".join(shlex.quote(a) for a in self.argv), self.exit_status,
            self.stderr.strip())


def find_bach(bach=None):
    """The bach program this process runs: bach= when given, else the BACH
    environment variable, else bach on PATH (called on the worker)."""
    name = bach or os.environ.get("BACH") or "bach"
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(
            "bach.dist: no bach program %r: pass bach=, set BACH or put bach "
            "on the PATH of every worker" % (name,))
    return path


def _run(argv):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise CommandError(argv, p.returncode,
                           p.stderr.decode("utf-8", "replace"))
    return p.stdout


def _options(options):
    """Keyword arguments as bach's options (see the module's text)."""
    argv = []
    for k, v in options.items():
        if k in _RESERVED:
            raise ValueError("bach.dist: %s= is set by bach.dist itself" % k)
        flag = "--" + k.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif v is False or v is None:
            pass
        elif isinstance(v, (list, tuple)):
            for x in v:
                argv += [flag, str(x)]
        else:
            argv += [flag, str(v)]
    return argv


def _traces(traces):
    if isinstance(traces, (str, bytes, os.PathLike)):
        traces = [traces]
    out = []
    for t in traces:
        t = os.fsdecode(t)
        if t == "-":
            raise ValueError("bach.dist: standard input cannot be split; "
                             "give a path every worker can read")
        out.append(os.path.abspath(t))
    if not out:
        raise ValueError("bach.dist: no trace given")
    return out


def _threads(client):
    return max(1, sum(client.nthreads().values()))


def _tmpdir():
    """A temporary directory under the worker's local directory."""
    base = None
    try:
        from distributed import get_worker
        base = get_worker().local_directory
    except (ImportError, ValueError, AttributeError):
        pass
    return tempfile.TemporaryDirectory(prefix="bach-merge-", dir=base)


# ---- the tasks (on the workers) -------------------------------------------

def _plan_task(bach, traces, chunks):
    out = _run([find_bach(bach), "plan", "--chunks", str(chunks), "--json",
                *traces])
    return [(c["start"], c["end"]) for c in json.loads(out)["chunks"]]


def _part_task(bach, cmd, argv, traces, start, end):
    return _run([find_bach(bach), cmd, *argv, "--range", "%d:%d" % (start, end),
                 "--partial", "-", *traces])


def _merge_task(bach, last, *parts):
    """bach merge of consecutive partials: one partial, or (last) the
    command's --json text."""
    with _tmpdir() as d:
        files = []
        for i, p in enumerate(parts):
            files.append(os.path.join(d, "part-%06d" % i))
            with open(files[-1], "wb") as f:
                f.write(p)
        out = ["--json"] if last else ["--partial", "-"]
        return _run([find_bach(bach), "merge", *out, *files])


def _check(name, v, least):
    if v < least:
        raise ValueError("bach.dist: %s must be at least %d, not %r"
                         % (name, least, v))


def _tree(client, bach, level, fanin):
    """The partials (futures, in range order) merged as a tree:
    consecutive groups of fanin, until the root can take them all; the
    root's future (its --json text)."""
    while len(level) > fanin:
        level = [client.submit(_merge_task, bach, False, *level[i:i + fanin],
                               pure=False)
                 for i in range(0, len(level), fanin)]
    return client.submit(_merge_task, bach, True, *level, pure=False)


def _split(client, cmd, traces, argv, bach, chunks, fanin):
    traces = _traces(traces)
    _check("fanin", fanin, 2)
    # one chunk per thread: a chunk's own cost (its first and last
    # references, kept for the merge and replayed there) grows with the
    # chunks, while more of them than threads would only even out the load
    n = chunks if chunks is not None else _threads(client)
    _check("chunks", n, 1)
    ranges = client.submit(_plan_task, bach, traces, n, pure=False).result()
    level = [client.submit(_part_task, bach, cmd, argv, traces, a, b,
                           pure=False) for a, b in ranges]
    return json.loads(_tree(client, bach, level, fanin).result())


def mrc(client, traces, line=32, *, bach=None, chunks=None, fanin=8,
        **options):
    """What json.loads(`bach mrc --json --line LINE OPTIONS TRACES`)
    returns, computed in chunks on client's workers. traces: a path or a
    list of paths read as one trace; options: the command's (sizes="1k,4k",
    assoc=4, sample=0.01, reuse=True, window=N, kind="d", type="fetch",
    ...). chunks: how many ranges to ask bach plan for (default one per
    worker thread); fanin: partials per merge."""
    return _split(client, "mrc", traces,
                  ["--line", str(line)] + _options(options), bach, chunks,
                  fanin)


def stat(client, traces, *, bach=None, chunks=None, fanin=8, **options):
    """What json.loads(`bach stat --json OPTIONS TRACES`) returns, computed
    in chunks on client's workers (options: type=, addr=, port=)."""
    return _split(client, "stat", traces, _options(options), bach, chunks,
                  fanin)


# ---- sim: configurations in groups, each split by time --------------------

_HAS = {}  # (bach program, what) -> whether its sim has it


def _sim_has(exe, what):
    """Whether this bach's sim has `--configs FILE` (many configurations
    in one pass, --json printing an array; what "configs"), and whether
    it takes --range and --partial with it ("split"): its help says so.
    Asked once per program in each worker process."""
    if (exe, what) not in _HAS:
        p = subprocess.run([exe, "sim", "--help"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _HAS[exe, "configs"] = b"--configs" in p.stdout
        _HAS[exe, "split"] = b"holding each configuration's" in p.stdout
    return _HAS[exe, what]


def _sim_configs_supported(exe):
    return _sim_has(exe, "configs")


def _one_line(configs):
    """Whether each configuration can be a line of a --configs file
    (options split at blanks)."""
    return all(a and not any(c.isspace() for c in a)
               for cfg in configs for a in cfg)


def _configs_file(d, configs):
    path = os.path.join(d, "configs")
    with open(path, "w") as f:
        f.writelines(" ".join(cfg) + "\n" for cfg in configs)
    return path


def _sim_group_task(bach, configs, common, traces):
    """The group's configurations over the trace: with --configs, one bach
    sim for all of them (one pass); else one bach sim a configuration."""
    exe = find_bach(bach)
    if _sim_configs_supported(exe) and _one_line(configs):
        with _tmpdir() as d:
            path = _configs_file(d, configs)
            # one simulating thread: the task is one of the worker's
            # threads (bach sim --configs takes every CPU by default,
            # which the other tasks on this host are using)
            out = json.loads(_run([exe, "sim", "--configs", path,
                                   "--threads", "1", "--json", *common,
                                   *traces]))
        if not isinstance(out, list) or len(out) != len(configs):
            raise CommandError([exe, "sim", "--configs", path], 0,
                               "expected an array of %d results"
                               % len(configs))
        return out
    return [json.loads(_run([exe, "sim", "--json", *cfg, *common, *traces]))
            for cfg in configs]


def _sim_plan_task(bach, traces, chunks):
    """bach plan's ranges, or None when this bach's sim --configs does not
    take --partial (the groups then run whole)."""
    if not _sim_has(find_bach(bach), "split"):
        return None
    return _plan_task(bach, traces, chunks)


def _sim_part_task(bach, configs, common, traces, start, end):
    """One partial of the group's configurations over a range: bach sim
    --configs --range --partial - (the file's name is not compared by
    the merge, so each task writes its own)."""
    exe = find_bach(bach)
    with _tmpdir() as d:
        return _run([exe, "sim", "--configs", _configs_file(d, configs),
                     "--threads", "1", *common, "--range",
                     "%d:%d" % (start, end), "--partial", "-", *traces])


def _sim_result(root, n):
    out = json.loads(root)
    if not isinstance(out, list) or len(out) != n:
        raise CommandError(["bach", "merge", "--json"], 0,
                           "expected an array of %d results" % n)
    return out


def _config(c):
    if isinstance(c, str):
        return shlex.split(c)
    if isinstance(c, (list, tuple)) and all(isinstance(a, str) for a in c):
        return list(c)
    raise TypeError("bach.dist.sim: a configuration is a string of bach sim "
                    "options or a list of them, not %r" % (c,))


def sim(client, traces, configs, *, bach=None, groups=None, chunks=None,
        fanin=8, **options):
    """For each configuration (a string of bach sim's options, "--l1
    16k:32:4 --l2 256k:64:8", or a list of them) what json.loads(`bach sim
    --json CONFIG OPTIONS TRACES`) returns, in a list in the order given.
    options are added to every configuration (seed=, type=, ...).

    The configurations go in groups (default one: every task simulates
    them all, and the trace is read once), and each group's run is cut by
    time into chunks (bach plan's; default: as many as bring the tasks,
    groups x chunks, to the workers' threads): each task runs `bach
    sim --configs GROUP --range A:B --partial -`, and a group's partials
    are merged as a tree of bach merge (fanin partials each). chunks=1
    runs each group whole, as does a bach whose sim --configs takes no
    --partial; without groups=, the configurations are then shared out
    in a group per worker thread instead."""
    if isinstance(configs, str):
        raise TypeError("bach.dist.sim: configs is a list of configurations")
    cfgs = [_config(c) for c in configs]
    common = _options(options)
    traces = _traces(traces)
    _check("fanin", fanin, 2)
    if not cfgs:
        return []
    threads = _threads(client)
    n = groups if groups is not None else 1
    _check("groups", n, 1)
    n = min(n, len(cfgs))
    k = chunks if chunks is not None else -(-threads // n)
    _check("chunks", k, 1)
    ranges = None
    if k > 1 and _one_line(cfgs):
        ranges = client.submit(_sim_plan_task, bach, traces, k,
                               pure=False).result()
    if not ranges and groups is None:
        # not split by time (a bach without sim --configs --partial):
        # the workers share the configurations instead
        n = min(threads, len(cfgs))
    cut = [len(cfgs) * i // n for i in range(n + 1)]
    parts = [cfgs[a:b] for a, b in zip(cut, cut[1:])]
    if not ranges:
        futures = [client.submit(_sim_group_task, bach, g, common, traces,
                                 pure=False) for g in parts]
        return [r for group in client.gather(futures) for r in group]
    roots = [_tree(client, bach,
                   [client.submit(_sim_part_task, bach, g, common, traces, a,
                                  b, pure=False) for a, b in ranges],
                   fanin) for g in parts]
    return [r for g, root in zip(parts, client.gather(roots))
            for r in _sim_result(root, len(g))]
