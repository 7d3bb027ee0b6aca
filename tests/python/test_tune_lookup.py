"""A tuning run from Python on PoCL (a tiny GEMM, three candidates), then
the lookup's selection and explanation over its database, and a launch of
the winner checked against a float64 reference."""
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import kforge
from conftest import TINY_GEMM, gemm_inputs, gemm_reference


def test_tune_reports_progress_and_a_winner(tuned):
    db, summary, events = tuned
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    candidates = [e for e in events if e.kind == "candidate"]
    assert 1 <= len(candidates) <= 3
    assert all(e.outcome.status == "ok" for e in candidates)
    assert summary.problem == "gemm/K=64,M=32,N=48,batch=1/f32/NN"
    assert summary.winner.status == "ok"
    assert summary.winner.median_ms > 0


def test_database_holds_the_winner(tuned):
    db, summary, _ = tuned
    winners = kforge.Database(str(db), read_only=True).winners(op="gemm")
    assert [(w.template_name, w.config) for w in winners] == [(summary.winner.template, summary.winner.config)]
    results = kforge.Database(str(db), read_only=True).results()
    assert len(results) >= 1 and all(r.status == "ok" for r in results)


def test_lookup_selects_and_explains_the_tuned_winner(device, tuned, cache_dir):
    db, summary, _ = tuned
    lookup = kforge.Lookup(device, db=str(db), cache_dir=str(cache_dir))
    sel = lookup.select("gemm", TINY_GEMM)
    assert (sel.rule, sel.config) == ("exact", summary.winner.config)
    assert "exact" in lookup.explain("gemm", TINY_GEMM)
    near = lookup.select("gemm", {"M": 40, "N": 48, "K": 64})
    assert near.rule == "nearest" and near.tuned_problem == summary.problem


def test_launch_of_the_winner_matches_the_reference(device, tuned, cache_dir):
    db, _, _ = tuned
    lookup = kforge.Lookup(device, db=str(db), cache_dir=str(cache_dir))
    sel = lookup.select("gemm", TINY_GEMM)
    a, b = gemm_inputs(TINY_GEMM["M"], TINY_GEMM["N"], TINY_GEMM["K"], seed=5)
    c = np.full((TINY_GEMM["M"], TINY_GEMM["N"]), np.nan, dtype=np.float32)
    lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.0)
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)
    # The tuner stored the winner's binary: the lookup loads it, compiling nothing.
    assert lookup.kernel_stats["compiles"] == 0


def test_an_export_carries_the_winners_binaries(device, tuned, cache_dir, tmp_path):
    """export(binaries=DIR) copies the winner's binary from the tuner's cache;
    a lookup whose cache is that folder alone launches it compiling nothing."""
    db, _, _ = tuned
    shipped = tmp_path / "binaries"
    kforge.export(db, out=str(tmp_path / "winners.json"), binaries=shipped, cache_dir=cache_dir)
    assert len(list(shipped.rglob("*.bin"))) == 1
    lookup = kforge.Lookup(device, db=str(db), cache_dir=str(shipped))
    sel = lookup.select("gemm", TINY_GEMM)
    a, b = gemm_inputs(TINY_GEMM["M"], TINY_GEMM["N"], TINY_GEMM["K"], seed=6)
    c = np.full((TINY_GEMM["M"], TINY_GEMM["N"]), np.nan, dtype=np.float32)
    lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.0)
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)
    assert lookup.kernel_stats["compiles"] == 0
    # From an empty cache nothing is copied, and the export says which winner.
    with pytest.warns(UserWarning, match="no binary of .* not in the binary cache"):
        kforge.export(db, binaries=tmp_path / "none", cache_dir=tmp_path / "empty")


def test_an_exception_in_progress_is_raised_after_the_run(device, tmp_path, cache_dir):
    def progress(event):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        kforge.tune(device, "gemm", {"M": 16, "N": 16, "K": 16}, db=str(tmp_path / "t.db"), max_evals=1,
                    progress=progress, isolated=False, cache_dir=str(cache_dir))
    # The run itself finished and stored its result.
    assert len(kforge.Database(str(tmp_path / "t.db")).results()) == 1


def test_bad_tune_input_names_the_field(device, tmp_path):
    with pytest.raises(kforge.BadInputError, match="template: no template for gemm on opencl named 'nope'"):
        kforge.tune(device, "gemm", {"M": 16, "N": 16, "K": 16}, db=str(tmp_path / "t.db"), template="nope")
    with pytest.raises(kforge.BadInputError, match="library: 'sometimes': expected compare, forbid or force"):
        kforge.tune(device, "gemm", {"M": 16, "N": 16, "K": 16}, db=str(tmp_path / "t.db"), library="sometimes")


def test_tune_with_user_templates_tunes_them_alone(device, tmp_path, cache_dir):
    """As `kforge tune --templates DIR`: a user directory that implements the
    operator replaces the built-in templates, unless one is named."""
    planted = Path(__file__).resolve().parent.parent / "data" / "templates" / "gemm_naive_planted"
    db = str(tmp_path / "u.db")
    summary = kforge.tune(device, "gemm", {"M": 20, "N": 12, "K": 5}, db=db, strategy="exhaustive",
                          template_dirs=[planted], isolated=False, cache_dir=str(cache_dir))
    results = kforge.Database(db, read_only=True).results()
    assert {r.template_name for r in results} == {"gemm_naive_planted"}
    assert len(results) == 8 and summary.winner.template == "gemm_naive_planted"
    # The planted flaw (FLAW=1) is caught in every configuration that has it.
    assert sorted(r.status for r in results) == ["ok"] * 4 + ["wrong_result"] * 4


def test_tune_follows_the_library_policy(device, tmp_path):
    """Forced: only vendor-library candidates are tuned; forbidden: only kernels."""
    dims = {"M": 16, "N": 16, "K": 16}
    forced = kforge.tune(device, "gemm", dims, db=str(tmp_path / "f.db"), max_evals=2, library="force")
    forbidden = kforge.tune(device, "gemm", dims, db=str(tmp_path / "k.db"), max_evals=2, library="forbid")
    assert forced.winner.template == "gemm_clblast"
    assert forbidden.winner.template != "gemm_clblast"


def test_a_selection_names_the_library_and_kernel_it_weighed(device, tmp_path, cache_dir):
    """Tuned with CLBlast beside the kernels: the selection says which of each was
    fastest, and a library winner carries the call it replays."""
    dims = {"M": 16, "N": 16, "K": 16}
    db = str(tmp_path / "c.db")
    summary = kforge.tune(device, "gemm", dims, db=db, max_evals=3, library="compare")
    sel = kforge.Lookup(device, db=db, cache_dir=str(cache_dir)).select("gemm", dims)
    assert sel.library_best.startswith("gemm_clblast ") and sel.library_best_ms > 0
    assert sel.kernel_best and not sel.kernel_best.startswith("gemm_clblast") and sel.kernel_best_ms > 0
    chosen = sel.template_name + " " + sel.config
    assert chosen == (sel.library_best if sel.library_best_ms < sel.kernel_best_ms else sel.kernel_best)
    assert (sel.template_name, sel.config) == (summary.winner.template, summary.winner.config)
    # CLBlast's call is fixed by its configuration: nothing is stored to replay.
    assert sel.library_call is None


def test_a_library_winner_gives_its_stored_call_as_a_dict(device, tmp_path, cache_dir):
    """What a library chose at tune time (cuBLASLt's algorithm) is stored with the
    result; the selection gives it back parsed. CLBlast stores none, so one is
    written into its result as cuBLASLt's tune would."""
    dims = {"M": 16, "N": 16, "K": 16}
    db = str(tmp_path / "f.db")
    forced = kforge.tune(device, "gemm", dims, db=db, max_evals=1, library="force")
    assert forced.winner.template == "gemm_clblast"
    assert kforge.Lookup(device, db=db, cache_dir=str(cache_dir)).select("gemm", dims).library_call is None
    with sqlite3.connect(db) as con:
        con.execute("""UPDATE results SET resources_json = json_set(coalesce(resources_json, '{}'),
                       '$.library_call', json('{"algo_index": 3, "workspace_bytes": 0}'))""")
    sel = kforge.Lookup(device, db=db, cache_dir=str(cache_dir)).select("gemm", dims)
    assert sel.template_name == "gemm_clblast"
    assert sel.library_call == {"algo_index": 3, "workspace_bytes": 0}


def test_devices_and_templates_are_records():
    assert any(d.backend == "opencl" for d in kforge.devices())
    gemm = kforge.templates("gemm")
    assert gemm and all(t.op == "gemm" for t in gemm)
    assert all("parameters" in t.manifest for t in gemm)


def test_export_from_python_holds_the_tuned_winner(tuned, tmp_path):
    import json
    db, summary, _ = tuned
    doc = json.loads(kforge.export(db))
    assert [(w["template"], w["config"]) for w in doc["winners"]] == [(summary.winner.template,
                                                                       summary.winner.config)]
    csv = kforge.export(db, "csv", out=tmp_path / "w.csv")
    assert (tmp_path / "w.csv").read_bytes() == csv.encode()
    assert summary.winner.config in csv.splitlines()[1]
    header = kforge.export(db, "header", namespace="app::tuned")
    assert "namespace app::tuned" in header and summary.winner.config in header
    assert summary.winner.config in kforge.export(db, "markdown", op="gemm")
    # A filter that matches nothing exports no winner.
    assert json.loads(kforge.export(db, op="softmax"))["winners"] == []


def test_export_refuses_an_unknown_format_and_a_bad_namespace_by_name(tuned):
    db, _, _ = tuned
    with pytest.raises(kforge.BadInputError, match="format: 'xml'"):
        kforge.export(db, "xml")
    with pytest.raises(kforge.BadInputError, match="namespace: 'class' is a C\\+\\+ keyword"):
        kforge.export(db, "header", namespace="app::class")


def test_report_from_python_is_the_html_page(tuned, tmp_path):
    db, summary, _ = tuned
    html = kforge.report(db, out=tmp_path / "r.html", title="from python")
    assert (tmp_path / "r.html").read_bytes() == html.encode()
    assert html.startswith("<!DOCTYPE html>") and "<title>from python</title>" in html
    assert "<svg" in html and summary.winner.template in html


def test_sweep_from_python_tunes_every_task_then_resumes(device, tmp_path, cache_dir):
    import json
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({
        "schema_version": 1,
        "budget": {"strategy": "random", "max_evals": 2, "seed": 11, "min_reps": 2, "max_reps": 2},
        "entries": [{"op": "gemm", "shapes": ["M=24,N=16,K=8"]}, {"op": "softmax", "shapes": ["rows=3,cols=40"]}],
    }))
    db = tmp_path / "sweep.db"
    events = []
    first = kforge.sweep(device, plan, db=db, cache_dir=cache_dir, progress=events.append)
    assert [t.state for t in first.tasks] == ["ran", "ran"]
    assert all(t.winner is not None and t.winner.median_ms > 0 for t in first.tasks)
    assert [e.note for e in events if e.kind == "task"] == [t.key for t in first.tasks]
    assert {w.problem_key for w in kforge.Database(str(db), read_only=True).winners()} == {t.key for t in first.tasks}
    # Resumable: a second run finds both tasks finished and tunes nothing.
    again = kforge.sweep(device, plan, db=db, cache_dir=cache_dir, isolated=False)
    assert [t.state for t in again.tasks] == ["skipped", "skipped"]
    assert [t.sweep_id for t in again.tasks] == [t.sweep_id for t in first.tasks]


def test_sweep_refuses_a_bad_plan_naming_its_field(device, tmp_path):
    import json
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"schema_version": 1, "entries": [
        {"op": "gemm", "shapes": ["M=24,N=16,K=8"], "dtypes": ["f64"]}]}))
    with pytest.raises(kforge.BadInputError, match=r"plan.json: entries\[0\].dtypes\[0\]: unknown dtype"):
        kforge.sweep(device, plan, db=tmp_path / "s.db")
    assert not (tmp_path / "s.db").exists()  # refused before anything was written
