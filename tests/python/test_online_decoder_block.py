"""bench/online_decoder_block.py at a tiny size on PoCL: from an empty
database with online tuning on, every step's output matches float64, every
operator comes to answer `exact`, and the receipt holds the online run, the
offline baseline and the interference measurement. No timing thresholds."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "online_decoder_block.py")
KFORGE = os.environ.get("KFORGE_CLI", os.path.join(ROOT, "build", "kforge"))
TINY = ["--hidden", "32", "--heads", "2", "--mlp", "48", "--context", "5", "--online-max-evals", "1",
        "--steady-steps", "3", "--interference-steps", "3", "--noise-gemms", "48x48x48", "--noise-max-evals", "1",
        "--max-seconds", "600", "--max-steps", "1000000", "--kforge", KFORGE]
OPS = {"rmsnorm_1", "q_proj", "k_proj", "v_proj", "rope_q", "rope_k", "attention", "o_proj_residual",
       "rmsnorm_2", "gate_up_proj", "swiglu", "down_proj_residual"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not os.path.exists(KFORGE):
        pytest.skip(f"{KFORGE}: not built")
    tmp = tmp_path_factory.mktemp("online_block")
    out = tmp / "receipts"
    cmd = [sys.executable, SCRIPT, *TINY, "--work", str(tmp / "work"), "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    receipts = sorted(out.glob("online_decoder_block-*.json")) if out.exists() else []
    log = (tmp / "work" / "online.db.online.log")
    assert receipts, done.stderr + (log.read_text() if log.exists() else "")
    return done, json.loads(receipts[-1].read_text())


def test_every_step_matches_float64_and_every_operator_becomes_exact(run):
    done, r = run
    assert done.returncode == 0, done.stderr + r["online_log_tail"]
    assert r["valid"] and r["online"]["invalid_steps"] == []
    assert r["online"]["max_error"] <= r["tolerance"]
    on = r["online"]
    assert on["all_exact_step"] is not None and on["all_exact_s"] > 0
    assert on["exact"][on["all_exact_step"]] == len(OPS)
    assert len(on["wall_ms"]) == len(on["exact"]) == len(on["tuner_busy"]) == on["steps_run"]
    assert on["steps_run"] == on["all_exact_step"] + 1 + 3
    assert set(on["first_rules"]) == OPS and "exact" not in on["first_rules"].values()
    assert set(r["exact_at"]) == OPS and all(e["step"] is not None for e in r["exact_at"].values())
    assert on["changes"][0]["step"] == 0 and all(set(c["rules"]) == OPS for c in on["changes"])


def test_receipt_holds_the_offline_baseline_and_the_interference(run):
    _, r = run
    s = r["steady"]
    assert len(s["online_ms"]) == len(s["offline_ms"]) == 3 and s["ratio"] > 0
    assert all(sel.endswith("(exact)") for k in ("online", "offline") for sel in r["selections"][k].values())
    assert {t["problem"].split(":")[0] for t in r["offline"]["tuning"]} <= OPS and len(r["offline"]["tuning"]) == 7
    it = r["interference"]
    assert it["noise_finished"] and it["noise_rules_after"] == ["exact"]
    assert len(it["alone_ms"]) == 6 and it["alone_median_ms"] > 0
    assert it["slowdown"] is None or it["slowdown"] > 0
    assert r["context"]["benchmark"] == "online_decoder_block" and "load_average_at_end" in r["context"]
