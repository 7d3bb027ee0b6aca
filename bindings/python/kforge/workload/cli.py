"""`python -m kforge.workload`: the report of a trace, or `compare` for a receipt."""
import argparse
import json
import sys
from pathlib import Path

from .receipt import compare, format_receipt
from .report import DEFAULT_ASSUMED_SPEEDUP, analyse, format_report, json_ready, plan_of, speedups_from_database
from .trace import WorkloadError, load_trace


def compare_parser():
    parser = argparse.ArgumentParser(prog="python -m kforge.workload compare",
                                     description="A receipt: two torch.profiler traces of one workload, before "
                                                 "and after kforge's selections, per operator and end to end.")
    parser.add_argument("before", help="trace without kforge (record_shapes=True)")
    parser.add_argument("after", help="trace with kforge's selections")
    parser.add_argument("--db", help="a kforge database: the expected speedups over default of its winners")
    parser.add_argument("--json", action="store_true", help="print the receipt as JSON")
    parser.add_argument("--top", type=int, default=25, help="rows printed (default %(default)s)")
    return parser


def report_parser():
    parser = argparse.ArgumentParser(prog="python -m kforge.workload",
                                     description="Where a torch.profiler trace's time goes, what kforge covers, "
                                                 "the Amdahl ceiling, and a sweep plan.")
    parser.add_argument("trace", help="Chrome-trace JSON from torch.profiler (record_shapes=True)")
    parser.add_argument("--db", help="a kforge database: the tuned speedups over default of its winners")
    parser.add_argument("--plan", help="write a sweep plan (docs/sweep.md) of the covered problems here")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--assumed-speedup", type=float, default=DEFAULT_ASSUMED_SPEEDUP,
                        help="the speedup of a covered problem the database does not know (default %(default)s)")
    parser.add_argument("--top", type=int, default=25, help="rows printed (default %(default)s)")
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    receipt = argv[:1] == ["compare"]
    args = (compare_parser() if receipt else report_parser()).parse_args(argv[1:] if receipt else argv)
    try:
        print(run_compare(args) if receipt else run(args))
    except WorkloadError as e:
        print(f"kforge.workload: {e}", file=sys.stderr)
        return 2
    return 0


def database_speedups(report, db):
    """The speedups over default the database knows for the report's covered problems."""
    return speedups_from_database(db, {r["problem"]["key"] for r in report["operators"] if r["problem"]})


def run(args):
    """The report's text (or JSON); writes the plan where asked."""
    if not args.assumed_speedup > 0:
        raise WorkloadError(f"--assumed-speedup: {args.assumed_speedup} is not a positive factor")
    doc = load_trace(args.trace)
    report = analyse(doc, args.trace, assumed=args.assumed_speedup)
    if args.db:
        report = analyse(doc, args.trace, database_speedups(report, args.db), args.assumed_speedup)
    if args.plan:
        write_plan(report, args.trace, args.plan)
    return json.dumps(json_ready(report), indent=1) if args.json else format_report(report, args.top)


def run_compare(args):
    """The receipt's text (or JSON)."""
    before, after = load_trace(args.before), load_trace(args.after)
    speedups = database_speedups(analyse(before, args.before), args.db) if args.db else {}
    receipt = compare(before, args.before, after, args.after, speedups)
    return json.dumps(json_ready(receipt), indent=1) if args.json else format_receipt(receipt, args.top)


def write_plan(report, trace, path):
    plan = plan_of(report["operators"], name="workload-" + Path(trace).stem)
    plan["description"] += f" ({trace})"
    if not plan["entries"]:
        names = ", ".join(sorted(report["not_covered"])[:5])
        raise WorkloadError(f"{trace}: no operator kforge covers ({names}): no plan written")
    try:
        with open(path, "w") as f:
            json.dump(plan, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise WorkloadError(f"{path}: cannot write the plan: {e.strerror}") from None
