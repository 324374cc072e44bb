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
the configurations are split into a few groups (by default one per worker
thread), one task each.

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


def _split(client, cmd, traces, argv, bach, chunks, fanin):
    traces = _traces(traces)
    if fanin < 2:
        raise ValueError("bach.dist: fanin must be at least 2, not %r"
                         % (fanin,))
    # one chunk per thread: a chunk's own cost (its first and last
    # references, kept for the merge and replayed there) grows with the
    # chunks, while more of them than threads would only even out the load
    n = chunks if chunks is not None else _threads(client)
    if n < 1:
        raise ValueError("bach.dist: chunks must be at least 1, not %r"
                         % (n,))
    ranges = client.submit(_plan_task, bach, traces, n, pure=False).result()
    level = [client.submit(_part_task, bach, cmd, argv, traces, a, b,
                           pure=False) for a, b in ranges]
    # a tree: consecutive groups of fanin, until the root can take them all
    while len(level) > fanin:
        level = [client.submit(_merge_task, bach, False, *level[i:i + fanin],
                               pure=False)
                 for i in range(0, len(level), fanin)]
    root = client.submit(_merge_task, bach, True, *level, pure=False)
    return json.loads(root.result())


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


# ---- sim: configurations in groups, one task a group ----------------------

_HAS_CONFIGS = {}  # bach program -> whether it has sim --configs


def _sim_configs_supported(exe):
    """Whether this bach has `sim --configs FILE` (many configurations in
    one pass, --json printing an array): its help names the option. Asked
    once per program in each worker process."""
    if exe not in _HAS_CONFIGS:
        p = subprocess.run([exe, "sim", "--help"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _HAS_CONFIGS[exe] = b"--configs" in p.stdout
    return _HAS_CONFIGS[exe]


def _sim_group_task(bach, configs, common, traces):
    """The group's configurations over the trace: with --configs, one bach
    sim for all of them (one pass); else one bach sim a configuration."""
    exe = find_bach(bach)
    # a line of the configurations file is options split at blanks
    one_line = all(a and not any(c.isspace() for c in a)
                   for cfg in configs for a in cfg)
    if _sim_configs_supported(exe) and one_line:
        with _tmpdir() as d:
            path = os.path.join(d, "configs")
            with open(path, "w") as f:
                f.writelines(" ".join(cfg) + "\n" for cfg in configs)
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


def _config(c):
    if isinstance(c, str):
        return shlex.split(c)
    if isinstance(c, (list, tuple)) and all(isinstance(a, str) for a in c):
        return list(c)
    raise TypeError("bach.dist.sim: a configuration is a string of bach sim "
                    "options or a list of them, not %r" % (c,))


def sim(client, traces, configs, *, bach=None, groups=None, **options):
    """For each configuration (a string of bach sim's options, "--l1
    16k:32:4 --l2 256k:64:8", or a list of them) what json.loads(`bach sim
    --json CONFIG OPTIONS TRACES`) returns, in a list in the order given.
    options are added to every configuration (seed=, type=, ...). The
    configurations go in groups (default: one per worker thread), one task
    each."""
    if isinstance(configs, str):
        raise TypeError("bach.dist.sim: configs is a list of configurations")
    cfgs = [_config(c) for c in configs]
    common = _options(options)
    traces = _traces(traces)
    if not cfgs:
        return []
    n = groups if groups is not None else _threads(client)
    if n < 1:
        raise ValueError("bach.dist: groups must be at least 1, not %r"
                         % (n,))
    n = min(n, len(cfgs))
    cut = [len(cfgs) * i // n for i in range(n + 1)]
    futures = [client.submit(_sim_group_task, bach, cfgs[a:b], common, traces,
                             pure=False) for a, b in zip(cut, cut[1:])]
    return [r for group in client.gather(futures) for r in group]
