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


# Each corpus template at a small shape with tails in every dimension (the
# persistent GEMM's envelope wants 16-byte row strides), in a layout and
# dtype other than the plain ones where it takes them.
CORPUS_SHAPES = {
    "gemm_dot": ["--op", "gemm", "--shape", "M=40,N=36,K=50", "--dtype", "bf16", "--layout", "TN"],
    "gemm_splitk": ["--op", "gemm", "--shape", "M=20,N=36,K=70", "--dtype", "bf16", "--layout", "NT"],
    "gemm_persistent_tma": ["--op", "gemm", "--shape", "M=40,N=48,K=64", "--dtype", "f16", "--layout", "TN"],
    "rmsnorm_row": ["--op", "rmsnorm", "--shape", "rows=9,cols=100", "--dtype", "f16"],
    "softmax_row": ["--op", "softmax", "--shape", "rows=9,cols=100", "--dtype", "bf16"],
    "attention_flash": ["--op", "attention", "--shape", "B=1,H=2,S=20,D=64", "--dtype", "f16"],
    "attention_decode_splitkv": ["--op", "attention", "--shape", "B=1,H=2,S=3,D=64", "--dtype", "bf16"],
    # Workspaces made by the interpreter device: partials and zeroed tickets.
    "gemm_splitk_grid": ["--op", "gemm", "--shape", "M=20,N=36,K=70", "--dtype", "f16", "--layout", "TT"],
    "attention_decode_splitkv_grid": ["--op", "attention", "--shape", "B=1,H=2,S=3,D=64", "--dtype", "f16"],
}


def test_every_corpus_template_is_covered():
    assert sorted(CORPUS_SHAPES) == sorted(os.listdir(CORPUS))


@pytest.mark.parametrize("name", sorted(CORPUS_SHAPES))
def test_each_corpus_template_matches_the_operators_reference_in_the_tuner(tmp_path, name):
    env = dict(os.environ, KFORGE_TRITON_HELPERS=HELPERS, KFORGE_PYTHON=sys.executable)
    db = tmp_path / "t.db"
    proc = subprocess.run([KFORGE, "tune", "--device", "interpret:0", "--template", os.path.join(CORPUS, name),
                           *CORPUS_SHAPES[name], "--db", str(db), "--json", "--quiet", "--max-evals", "2",
                           "--strategy", "random", "--seed", "7"],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["validated"] == 2 and report["failed"] == 0, report
    assert [status for _, status, _, _ in stored(db)] == ["validated", "validated"]


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


EXAMPLE = os.path.join(os.path.dirname(CORPUS), "..", "examples", "triton_swiglu")


def test_the_users_swiglu_example_is_validated_and_compiles_for_three_targets(tmp_path):
    from kforge_triton.manifest import load_manifest
    load_manifest(os.path.join(EXAMPLE, "manifest.json"))  # step 4 of docs/triton.md
    env = dict(os.environ, KFORGE_TRITON_HELPERS=HELPERS, KFORGE_PYTHON=sys.executable)
    db = tmp_path / "check.db"
    tuned = subprocess.run([KFORGE, "tune", "--device", "interpret:0", "--template", EXAMPLE, "--op", "swiglu",
                            "--shape", "rows=5,cols=300", "--dtype", "bf16", "--db", str(db), "--json", "--quiet"],
                           capture_output=True, text=True, env=env, timeout=900)
    assert tuned.returncode == 0, tuned.stdout[-3000:] + tuned.stderr[-3000:]
    report = json.loads(tuned.stdout)
    assert report["validated"] >= 3 and report["failed"] == 0, report
    for target in ("cuda:sm_80", "cuda:sm_90a", "hip:gfx942"):
        compiled = subprocess.run([KFORGE, "compile", "--target", target, "--triton", EXAMPLE, "--op", "swiglu",
                                   "--shape", "rows=4096,cols=11008", "--dtype", "bf16", "--max-configs", "2",
                                   "--json"], capture_output=True, text=True, env=env, timeout=900)
        assert compiled.returncode == 0, compiled.stderr[-3000:]
        candidates = json.loads(compiled.stdout)["candidates"]
        assert len(candidates) == 2
        for c in candidates:
            assert c["status"] == "ok", (target, c)
            assert c["spill_stores"] == 0 and c["registers"] > 0, (target, c)
