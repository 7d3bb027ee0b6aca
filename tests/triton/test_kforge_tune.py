"""`kforge tune --device interpret:0`: a Triton template's configurations
run under Triton's interpreter in kforge's tuner (worker processes, the
operator's reference and tolerance, guard zones past every output), stored
as validated and never timed; a planted bug is caught and named with its
configuration."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from triton_testing import CORPUS, HELPERS, triton_missing

KFORGE = os.environ.get("KFORGE_BIN", "")
pytestmark = [
    pytest.mark.skipif(triton_missing() is not None, reason=str(triton_missing())),
    pytest.mark.skipif(not os.path.exists(KFORGE), reason="KFORGE_BIN does not name the built kforge"),
]
RMSNORM = os.path.join(CORPUS, "rmsnorm_row")
# Tails: 100 columns in rows of 128 lanes, 9 rows in programs of 2 or 4.
SHAPE = ["--op", "rmsnorm", "--shape", "rows=9,cols=100"]


def tune(template, db, *extra):
    env = dict(os.environ, KFORGE_TRITON_HELPERS=HELPERS, KFORGE_PYTHON=sys.executable)
    proc = subprocess.run([KFORGE, "tune", "--device", "interpret:0", "--template", template, *SHAPE,
                           "--db", str(db), "--json", "--quiet", *extra],
                          capture_output=True, text=True, env=env, timeout=900)
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return proc, report


def stored(db):
    with sqlite3.connect(str(db)) as c:
        return c.execute("SELECT config, status, median_ms, reason FROM results ORDER BY config").fetchall()


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_the_corpus_rmsnorm_is_validated_under_the_interpreter_and_never_timed(tmp_path, dtype):
    db = tmp_path / "tune.db"
    proc, report = tune(RMSNORM, db, "--dtype", dtype, "--max-evals", "3", "--strategy", "random")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report["validated"] == 3 and report["failed"] == 0, report
    assert report.get("winner") is None
    rows = stored(db)
    assert len(rows) == 3
    for config, status, median_ms, _ in rows:
        assert status == "validated", config
        assert median_ms is None or median_ms == 0


def planted(tmp_path, old, new):
    """The corpus rmsnorm with one line changed."""
    target = tmp_path / "rmsnorm_planted"
    shutil.copytree(RMSNORM, target)
    kernel = target / "kernel.py"
    text = kernel.read_text()
    assert old in text
    kernel.write_text(text.replace(old, new))
    return str(target)


CONFIG = "BLOCK_N128_ROWS2_num_warps4"


def test_a_dropped_store_mask_is_caught_by_the_guards_and_named(tmp_path):
    template = planted(tmp_path, "x * inv * w, mask=mask)", "x * inv * w)")
    proc, report = tune(template, tmp_path / "t.db", "--dtype", "f32", "--config", CONFIG)
    assert proc.returncode != 0
    [(config, status, _, reason)] = stored(tmp_path / "t.db")
    assert config == CONFIG
    assert status in ("wrong_result", "launch_error"), reason
    assert "Y" in reason, reason


def test_a_wrong_reduction_is_caught_by_the_reference_and_named(tmp_path):
    template = planted(tmp_path, "tl.sum(x * x, axis=0) / cols", "tl.sum(x * x, axis=0) / BLOCK_N")
    proc, report = tune(template, tmp_path / "t.db", "--dtype", "f32", "--config", CONFIG)
    assert proc.returncode != 0
    [(config, status, _, reason)] = stored(tmp_path / "t.db")
    assert (config, status) == (CONFIG, "wrong_result"), reason
    assert CONFIG in reason, reason
    assert "--device interpret:0" in reason, reason  # the rerun line reruns it here
