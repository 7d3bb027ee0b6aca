"""bench/workload_loop.py at its tiny size on PoCL: the eager model's trace, the report's plan,
the sweep, the model rerun through torch.ops.kforge, and the receipt comparing the two traces.
No timing is asserted: these machines are noisy, and on a CPU the kforge run is usually slower."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "workload_loop.py")
KFORGE = os.environ.get("KFORGE_CLI", os.path.join(ROOT, "build", "kforge"))
LAUNCHED = {"gemm", "rmsnorm", "softmax", "attention"}


def run_loop(tmp_path, *extra):
    out = tmp_path / "receipts"
    cmd = [sys.executable, SCRIPT, "--tiny", "--kforge", KFORGE, "--work", str(tmp_path / "work"),
           "--out", str(out), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    receipts = sorted(out.glob("workload_loop-*.json")) if out.exists() else []
    return done, json.loads(receipts[-1].read_text()) if receipts else None


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    if not os.path.exists(KFORGE):
        pytest.skip(f"{KFORGE}: not built")
    tmp = tmp_path_factory.mktemp("loop")
    done, receipt = run_loop(tmp)
    assert receipt is not None, done.stderr[-4000:]
    return tmp, done, receipt


def test_the_kforge_run_matches_the_eager_output(loop):
    _, done, receipt = loop
    assert done.returncode == 0, done.stderr[-4000:]
    v = receipt["validation"]
    assert v["valid"] and 0 <= v["error"] <= v["tolerance"], v


def test_the_receipt_records_the_environment_and_the_commands(loop):
    _, _, receipt = loop
    ctx = receipt["context"]
    for key in ("date", "kforge", "git_revision", "host", "cpu", "devices", "load_average_at_start",
                "load_average_at_end", "torch", "torch_threads"):
        assert key in ctx, key
    assert receipt["shape"]["hidden"] == 32 and receipt["steps"] == 2
    assert " sweep " in receipt["sweep"]["command"] and "--db" in receipt["sweep"]["command"]
    assert receipt["compare"]["command"].startswith("python -m kforge.workload compare")


def test_the_plan_holds_what_the_torch_ops_launch_and_the_sweep_tuned_each(loop):
    _, _, receipt = loop
    ops = {e["op"] for e in receipt["plan"]["entries"]}
    assert ops == LAUNCHED
    assert [d["op"] for d in receipt["plan"]["not_launched"]] == ["swiglu"]
    tasks = receipt["sweep"]["tasks"]
    assert len(tasks) == len(receipt["plan"]["entries"])
    assert all(t["state"] in ("ran", "skipped") and t["winner"] for t in tasks), tasks


def test_the_kforge_run_selects_the_sweeps_winners(loop):
    _, _, receipt = loop
    tuned = {t["key"] for t in receipt["sweep"]["tasks"]}
    assert set(receipt["selections"]) == tuned
    assert {s["rule"] for s in receipt["selections"].values()} == {"exact"}


def test_the_receipt_pairs_every_launched_problem_across_the_traces(loop):
    _, _, receipt = loop
    r = receipt["compare"]["receipt"]
    rows = {row["key"]: row for row in r["operators"]}
    for key in receipt["selections"]:
        assert key in rows, key
        assert rows[key]["calls_before"] == rows[key]["calls_after"] > 0
        assert rows[key]["expected_speedup"] is not None
    only = [o["key"] for o in r["only_before"] + r["only_after"]]
    assert not [k for k in only if k.split("/")[0] in LAUNCHED], only
    e = r["end_to_end"]
    assert e["from_database"] == len(receipt["selections"]) and e["measured_speedup"] > 0


def test_a_tolerance_the_run_cannot_meet_fails_it(loop):
    tmp, _, _ = loop
    done, receipt = run_loop(tmp, "--tolerance", "0")
    assert done.returncode == 1
    assert not receipt["validation"]["valid"] and receipt["validation"]["error"] > 0
