"""bench/decoder_block.py at a tiny size on PoCL: the block through kforge's
selections matches float64, its receipt holds every variant and operator,
and a tolerance the block cannot meet fails the run."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "decoder_block.py")
KFORGE = os.environ.get("KFORGE_CLI", os.path.join(ROOT, "build", "kforge"))
TINY = ["--hidden", "32", "--heads", "2", "--mlp", "48", "--seq", "6", "--context", "5", "--decode-batch", "1,2",
        "--reps", "2", "--kforge", KFORGE]


def run_block(tmp_path, *extra):
    out = tmp_path / "receipts"
    cmd = [sys.executable, SCRIPT, *TINY, "--db", str(tmp_path / "block.db"), "--out", str(out), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    receipts = sorted(out.glob("decoder_block-*.json")) if out.exists() else []
    return done, json.loads(receipts[-1].read_text()) if receipts else None


@pytest.fixture(scope="module")
def tuned_run(tmp_path_factory):
    if not os.path.exists(KFORGE):
        pytest.skip(f"{KFORGE}: not built")
    tmp = tmp_path_factory.mktemp("block")
    done, receipt = run_block(tmp, "--max-evals", "2")
    return tmp, done, receipt


def test_block_matches_float64_in_every_phase(tuned_run):
    _, done, receipt = tuned_run
    assert done.returncode == 0, done.stderr
    assert [(p["phase"], p["batch"]) for p in receipt["phases"]] == [("prefill", 1), ("decode", 1), ("decode", 2)]
    for phase in receipt["phases"]:
        for name in ("tuned", "default", "numpy"):
            v = phase["variants"][name]
            assert v["valid"] and v["error"] <= receipt["tolerance"], (phase["phase"], name, v["error"])


def test_receipt_times_every_operator_and_states_the_expected_gain(tuned_run):
    _, _, receipt = tuned_run
    ops = {"rmsnorm_1", "q_proj", "k_proj", "v_proj", "rope_q", "rope_k", "attention", "o_proj_residual",
           "rmsnorm_2", "gate_up_proj", "swiglu", "down_proj_residual"}
    for phase in receipt["phases"]:
        assert set(phase["variants"]["tuned"]["per_op_ms"]) == ops
        assert phase["variants"]["tuned"]["selections"]["q_proj"]["rule"] == "exact"
        assert phase["variants"]["default"]["selections"]["q_proj"]["rule"] == "default"
        a = phase["amdahl"]
        assert a["expected_speedup"] > 0 and a["measured_speedup"] > 0
        assert 0 <= a["glue_share"] <= 1


def test_a_tolerance_the_block_cannot_meet_fails_the_run(tuned_run):
    tmp, _, _ = tuned_run
    done, receipt = run_block(tmp, "--no-tune", "--tolerance", "0")
    assert done.returncode == 1
    assert not receipt["phases"][0]["variants"]["tuned"]["valid"]
