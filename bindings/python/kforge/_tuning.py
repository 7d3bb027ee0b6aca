"""kforge.tune: one tuning run from Python, its summary as a Record."""
import sys

from kforge import _kforge
from kforge._records import Record


def tune(device, op, dims, *, dtype="f32", layout="NN", epilogue="none", attrs=None, db="kforge.db",
         strategy="random", max_evals=0, time_budget_s=0.0, no_improvement=0, seed=1, warm_start=0,
         template=None, config=None, library=None, template_dirs=(), progress=None, isolated=True, binary_cache=True,
         cache_dir=None):
    """Tunes one problem on ``device`` into the database ``db`` and returns the
    summary ``kforge tune --json`` prints (docs/cli.md) as a Record.

    ``progress``, when given, is called with a Record per event (kind
    "start", "phase", "candidate", "leader_changed" or "done"). With
    ``isolated`` (the default) candidates run in a supervised worker
    process (``python -m kforge._worker``), so one that crashes or hangs is
    recorded as such; ``isolated=False`` runs them in this process.
    ``library`` ("compare", "forbid", "force") admits vendor-library
    candidates as ``kforge tune --library`` does; None follows
    $KFORGE_LIBRARY_<OP> (docs/vendor-libraries.md).
    """
    problem = _kforge._ProblemFields()
    problem.op = op
    problem.dims = dict(dims)
    problem.dtype = dtype
    problem.layout = layout
    problem.epilogue = epilogue
    problem.attrs = dict(attrs or {})
    fields = _kforge._TuneFields()
    fields.db = str(db)
    fields.strategy = strategy
    fields.max_evals = max_evals
    fields.time_budget_s = time_budget_s
    fields.no_improvement = no_improvement
    fields.seed = seed
    fields.warm_start = warm_start
    fields.template_name = template
    fields.config = config
    fields.library = library or ""
    fields.template_dirs = [str(d) for d in template_dirs]
    fields.worker = [sys.executable, "-m", "kforge._worker"] if isolated else []
    fields.binary_cache = binary_cache
    fields.cache_dir = str(cache_dir or "")
    on_event = None if progress is None else (lambda event: progress(Record(event)))
    return Record(_kforge._tune(device, problem, fields, on_event))


def sweep(device, plan, *, db="kforge.db", shard="1/1", template_dirs=(), progress=None, isolated=True,
          binary_cache=True, cache_dir=None):
    """Tunes every task of a sweep plan (docs/sweep.md), or of one ``shard``
    ("I/N") of it, on ``device`` into ``db``, resumably: a task an earlier
    sweep finished is skipped. Returns what ``kforge sweep --json`` prints,
    as a Record; a task that fails is reported in ``tasks`` with state
    "error" and the others still run.

    ``progress``, when given, is called with a Record per event: the
    tuner's (as for tune), "task" before each task (``done`` of ``total``,
    ``note`` the problem) and "note" for each remark.
    """
    fields = _kforge._SweepFields()
    fields.plan = str(plan)
    fields.db = str(db)
    fields.shard = shard
    fields.template_dirs = [str(d) for d in template_dirs]
    fields.worker = [sys.executable, "-m", "kforge._worker"] if isolated else []
    fields.binary_cache = binary_cache
    fields.cache_dir = str(cache_dir or "")
    on_event = None if progress is None else (lambda event: progress(Record(event)))
    return Record(_kforge._sweep(device, fields, on_event))
