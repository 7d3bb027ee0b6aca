"""Shared setup of the Triton helper tests (a module of its own, not a
conftest, so that it cannot be confused with another suite's): the helper
package on sys.path, the corpus, and running a helper as the C++ side will
(a fresh process, one JSON request on stdin, one JSON response on stdout)."""

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HELPERS = os.path.join(ROOT, "triton")
CORPUS = os.path.join(ROOT, "templates", "triton")
DATA = os.path.join(os.path.dirname(__file__), "data")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)


def triton_missing():
    try:
        import triton  # noqa: F401
    except ImportError as e:
        return f"Triton is not installed for {sys.executable} ({e}): pip install triton==3.9.0"
    return None


def corpus_manifests():
    return sorted(glob.glob(os.path.join(CORPUS, "*", "manifest.json")))


def run_helper(module, request, timeout=600):
    """Runs kforge_triton.<module> on one request; returns the response."""
    env = dict(os.environ, PYTHONPATH=HELPERS)
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, "-m", f"kforge_triton.{module}"], input=json.dumps(request),
                          capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"kforge_triton.{module} exited {proc.returncode}: {proc.stderr[-2000:]}"
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON line on stdout, got: {proc.stdout[-2000:]}"
    return json.loads(lines[0])

