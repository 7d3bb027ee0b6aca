"""Read a PyTorch profiler trace: where the time goes, what kforge covers, the
most the step can gain, and a sweep plan (docs/workload.md, "Reading a trace").

    python -m kforge.workload TRACE.json [--db kforge.db] [--plan out.json] [--json]
                              [--assumed-speedup X]
    python -m kforge.workload compare BEFORE.json AFTER.json [--db kforge.db] [--json]

The second form is the receipt: two traces of one workload (before: without
kforge; after: with its selections), per operator and shape the time per step
before and after, the measured and the expected speedup, and end to end
(docs/workload.md, "The receipt").

Rotary embeddings and SwiGLU are composite in PyTorch; match_rope and
match_swiglu state the operator sequences recognised as kforge's rope and
swiglu.

The trace is the Chrome-trace JSON that torch.profiler exports
(`prof.export_chrome_trace(path)`), recorded with `record_shapes=True`, on
the CPU or with CUDA kernels. This module imports the `_kforge` extension
only to read a database (--db), so the rest works without it.

One module per concern: trace (reading the trace), problems (operators to
kforge problems), patterns (rope, SwiGLU), report (one trace's report and
plan), receipt (two traces compared), cli.

Exit status: 0 on success, 2 for bad input (one line on stderr naming the
file and what is missing).
"""
from .cli import main
from .patterns import Pattern, grouped, match_rope, match_swiglu
from .problems import Uncovered, problem_of, uncovered_reason
from .receipt import compare, format_receipt
from .report import (DEFAULT_ASSUMED_SPEEDUP, amdahl, analyse, canonical_config, device_gaps, format_report,
                     launch_regions, plan_of, speedups_from_database, speedups_from_records)
from .trace import Op, WorkloadError, load_trace

__all__ = ["DEFAULT_ASSUMED_SPEEDUP", "Op", "Pattern", "Uncovered", "WorkloadError", "amdahl", "analyse",
           "canonical_config", "compare", "device_gaps", "format_receipt", "format_report", "grouped",
           "launch_regions", "load_trace", "main", "match_rope", "match_swiglu", "plan_of", "problem_of",
           "speedups_from_database", "speedups_from_records", "uncovered_reason"]
