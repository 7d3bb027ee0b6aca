"""kforge.workload (docs/workload.md, "Reading a trace"): torch.profiler traces read into
operators, shares, device idle time, the Amdahl ceiling and a sweep plan, checked against hand
counts. Reads committed traces (tests/data/workload/, recorded by record_fixtures.py there) and a
hand-written CUDA trace; needs neither PyTorch nor the kforge extension."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "workload"


def load_module():
    # The package alone (its modules import one another relatively), not kforge's extension.
    package = ROOT / "bindings" / "python" / "kforge" / "workload"
    spec = importlib.util.spec_from_file_location("kforge_workload", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


wl = load_module()


def analyse_file(path, **kw):
    return wl.analyse(wl.load_trace(path), path, **kw)


def rows_of(report, name):
    return [r for r in report["operators"] if r["operator"] == name]


def write(tmp_path, doc, name="trace.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


# ---------------------------------------------------------------------------
# A hand-written CUDA trace: four operators, four kernels, hand-counted.
#
# step 0..1000 us; kernels (device busy): linear 100..300, softmax 300..350, conv2d 420..520,
# mm 700..800 (its correlation only in a flow event). Device time 450 us; idle 550 us: 100 before
# the first kernel, 200 after the last, gaps 70 (350..420) and 180 (520..700), both launch-bound
# (their launch calls began at 405 and 605, after the device went idle); the softmax kernel was
# launched at 110, long before it ran: queued, no gap. Launch calls: 10 + 5 + 5 + 5 = 25 us.


def op(name, ts, dur, dims, types, strides=None, concrete=None, tid=1):
    args = {"Input Dims": dims, "Input type": types}
    if strides is not None:
        args["Input Strides"] = strides
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def launch(ts, dur, corr):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"correlation": corr}}


def kernel(name, ts, dur, corr=None):
    args = {"correlation": corr} if corr is not None else {}
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur, "args": args}


def cuda_trace():
    f = "float"
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 100,
         "dur": 700},
        op("aten::linear", 10, 50, [[8, 64], [128, 64], [128]], [f, f, f]),
        op("aten::t", 12, 2, [[128, 64]], [f]),
        op("aten::addmm", 15, 40, [[128], [8, 64], [64, 128], [], []], [f, f, f, "Scalar", "Scalar"],
           strides=[[1], [64, 1], [1, 64], [], []]),
        launch(20, 10, 1), kernel("gemm_kernel", 100, 200, 1),
        op("aten::softmax", 100, 30, [[8, 128], [], []], [f, "Scalar", ""], concrete=["", "-1", ""]),
        op("aten::_softmax", 105, 20, [[8, 128], [], []], [f, "Scalar", "Scalar"], concrete=["", "-1", "False"]),
        launch(110, 5, 2), kernel("softmax_kernel", 300, 50, 2),
        op("aten::conv2d", 400, 20, [[2, 3, 8, 8], [8, 3, 3, 3], [8], [], [], [], []], [f, f, f, "", "", "", ""]),
        launch(405, 5, 3), kernel("conv_kernel", 420, 100, 3),
        op("aten::mm", 600, 20, [[8, 64], [64, 32]], [f, f], strides=[[64, 1], [32, 1]]),
        launch(605, 5, 4), kernel("mm_kernel", 700, 100),
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 4, "pid": 1, "tid": 1, "ts": 605},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 4, "pid": 0, "tid": 7, "ts": 700, "bp": "e"},
    ]
    return {"schemaVersion": 1, "traceEvents": events}


@pytest.fixture
def cuda_report(tmp_path):
    return analyse_file(write(tmp_path, cuda_trace()), assumed=2.0)


def test_a_cuda_trace_charges_each_operator_the_kernels_its_launches_ran(cuda_report):
    times = {r["operator"]: r["time_us"] for r in cuda_report["operators"]}
    assert times == {"aten::linear": 200, "aten::softmax": 50, "aten::conv2d": 100, "aten::mm": 100}
    assert cuda_report["device_trace"] and cuda_report["time_basis"] == "device time"
    assert cuda_report["total_us"] == 450 and cuda_report["wall_us"] == 1000


def test_shares_are_of_device_time_and_of_the_steps_wall_time(cuda_report):
    linear = rows_of(cuda_report, "aten::linear")[0]
    assert linear["share_of_time"] == pytest.approx(200 / 450)
    assert linear["share_of_wall"] == pytest.approx(0.2)
    assert sum(r["share_of_time"] for r in cuda_report["operators"]) == pytest.approx(1.0)


def test_linear_maps_to_a_gemm_with_the_weight_transposed_and_the_bias_in_the_epilogue(cuda_report):
    p = rows_of(cuda_report, "aten::linear")[0]["problem"]
    assert p["key"] == "gemm/K=64,M=8,N=128,batch=1/f32/NT/bias"


def test_mm_maps_to_a_plain_gemm_and_its_kernel_is_found_through_the_flow_event(cuda_report):
    row = rows_of(cuda_report, "aten::mm")[0]
    assert row["problem"]["key"] == "gemm/K=64,M=8,N=32,batch=1/f32/NN"
    assert row["time_us"] == 100


def test_softmax_over_the_last_axis_maps_to_rows_by_cols(cuda_report):
    assert rows_of(cuda_report, "aten::softmax")[0]["problem"]["key"] == "softmax/cols=128,rows=8/f32/NN"


def test_an_operator_kforge_lacks_is_listed_as_not_covered_with_the_reason(cuda_report):
    assert cuda_report["not_covered"] == {
        "aten::conv2d": {"time_us": 100, "reasons": ["kforge has no operator for aten::conv2d"]}}


def test_device_idle_time_splits_into_edges_and_launch_bound_gaps(cuda_report):
    d = cuda_report["device"]
    assert d["busy_us"] == 450 and d["idle_us"] == 550 and d["edges_us"] == 300
    assert [(g["idle_us"], g["kind"]) for g in d["gaps"]] == [(70, "launch-bound"), (180, "launch-bound")]
    assert d["launch_bound_us"] == 250 and d["launch_calls_us"] == 25


def test_a_gap_whose_kernel_was_launched_early_is_not_blamed_on_the_host():
    kernels = [{"name": "a", "ts": 0.0, "dur": 10.0, "correlation": 1},
               {"name": "b", "ts": 30.0, "dur": 10.0, "correlation": 2}]
    launches = {1: {"ts": 0.0}, 2: {"ts": 5.0}}
    d = wl.device_gaps(kernels, launches, 0.0, 40.0)
    assert [(g["idle_us"], g["kind"]) for g in d["gaps"]] == [(20.0, "other (dependency, synchronisation or copy)")]
    assert d["launch_bound_us"] == 0


def test_three_launch_bound_gaps_in_a_row_are_named_a_launch_bound_region():
    gaps = [{"start_us": float(i), "idle_us": 5.0, "before": "k", "kind": "launch-bound"} for i in range(3)]
    assert wl.launch_regions(gaps) == [{"start_us": 0.0, "idle_us": 15.0, "gaps": 3, "kernels": ["k"]}]
    assert wl.launch_regions(gaps[:2]) == []


def test_the_amdahl_ceiling_applies_the_assumed_speedup_to_covered_time(cuda_report):
    a = cuda_report["amdahl"]
    assert a["covered_us"] == 350
    assert a["step_after_us"] == pytest.approx(1000 - 350 / 2)
    assert a["ceiling"] == pytest.approx(1000 / 825)
    assert a["limit_if_free"] == pytest.approx(1000 / 650)


def test_the_amdahl_ceiling_takes_the_databases_speedup_where_it_knows_one(tmp_path):
    speedups = {"gemm/K=64,M=8,N=128,batch=1/f32/NT/bias": 4.0}
    a = analyse_file(write(tmp_path, cuda_trace()), speedups=speedups, assumed=2.0)["amdahl"]
    assert a["from_database"] == 1
    assert a["step_after_us"] == pytest.approx(1000 - (200 - 50) - (150 - 75))


def test_speedups_over_default_compare_the_winner_with_its_templates_default():
    winners = [{"problem_key": "p", "median_ms": 1.0}, {"problem_key": "p", "median_ms": 2.0}]
    results = [{"problem_key": "p", "template_name": "t", "config": "BLOCK64_VW1", "status": "ok", "median_ms": 3.0},
               {"problem_key": "p", "template_name": "t", "config": "BLOCK32_VW1", "status": "ok", "median_ms": 1.0},
               {"problem_key": "p", "template_name": "u", "config": "X1", "status": "crash", "median_ms": 0.5}]
    assert wl.speedups_from_records(winners, results, {"t": "BLOCK64_VW1", "u": "X1"}) == {"p": 3.0}


def test_a_templates_default_configuration_has_the_canonical_name():
    manifest = {"parameters": [{"name": "VW", "default": 1}, {"name": "BLOCK", "default": 64}]}
    assert wl.canonical_config(manifest) == "BLOCK64_VW1"


def test_the_plan_lists_covered_problems_by_share_of_time_in_the_plan_format(cuda_report):
    plan = wl.plan_of(cuda_report["operators"], "workload")
    assert plan["schema_version"] == 1 and plan["budget"]["strategy"] == "model"
    assert plan["entries"] == [
        {"op": "gemm", "shapes": ["M=8,N=128,K=64,batch=1"], "dtypes": ["f32"], "layouts": ["NT"],
         "epilogues": ["bias"]},
        {"op": "gemm", "shapes": ["M=8,N=32,K=64,batch=1"], "dtypes": ["f32"]},
        {"op": "softmax", "shapes": ["rows=8,cols=128"], "dtypes": ["f32"]},
    ]


# ---------------------------------------------------------------------------
# Problems from operators' recorded inputs


def single(name, dims, types, **kw):
    return wl.Op(op(name, 0, 1, dims, types, **kw))


def test_bmm_maps_to_a_batched_gemm():
    p = wl.problem_of(single("aten::bmm", [[4, 8, 16], [4, 16, 32]], ["c10::Half", "c10::Half"]))
    assert p["key"] == "gemm/K=16,M=8,N=32,batch=4/f16/NN"


def test_matmul_of_a_batch_by_a_matrix_folds_the_batch_into_m():
    p = wl.problem_of(single("aten::matmul", [[2, 3, 8, 16], [16, 32]], ["c10::BFloat16", "c10::BFloat16"]))
    assert p["key"] == "gemm/K=16,M=48,N=32,batch=1/bf16/NN"


def test_a_matrix_vector_product_is_not_a_gemm():
    with pytest.raises(wl.Uncovered, match="matrix-vector"):
        wl.problem_of(single("aten::mm", [[8, 16], [16]], ["float", "float"]))


def test_a_double_precision_operator_is_not_covered():
    with pytest.raises(wl.Uncovered, match="dtype double"):
        wl.problem_of(single("aten::mm", [[8, 16], [16, 4]], ["double", "double"]))


def test_causal_attention_maps_to_attention_with_the_causal_mask():
    q = [1, 4, 16, 16]
    p = wl.problem_of(single("aten::scaled_dot_product_attention", [q, q, q, [], [], [], []],
                             ["float"] * 3 + ["", "Scalar", "Scalar", ""],
                             concrete=["", "", "", "", "0.", "True", ""]))
    assert p["key"] == "attention/B=1,D=16,H=4,S=16,SK=16/f32/NN/mask=causal"


def test_grouped_query_attention_is_not_covered():
    with pytest.raises(wl.Uncovered, match="grouped-query"):
        wl.problem_of(single("aten::scaled_dot_product_attention", [[1, 8, 4, 16], [1, 2, 4, 16], [1, 2, 4, 16]],
                             ["float"] * 3))


def test_softmax_over_another_axis_is_not_covered():
    with pytest.raises(wl.Uncovered, match="over dim 1"):
        wl.problem_of(single("aten::softmax", [[2, 8, 4], [], []], ["float", "Scalar", ""],
                             concrete=["", "1", ""]))


def test_kforges_torch_ops_map_to_the_problems_they_select():
    """As torch.profiler records torch.ops.kforge.* (bench/workload_loop.py's after trace)."""
    gemm = single("kforge::gemm", [[8, 16], [16, 4]], ["float", "float"])
    norm = single("kforge::rms_norm", [[2, 8, 16], [16], []], ["float", "float", "Scalar"])
    soft = single("kforge::softmax", [[2, 8, 16]], ["float"])
    q = [1, 2, 4, 8]
    attn = single("kforge::attention", [q, q, q, []], ["float"] * 3 + ["Scalar"], concrete=["", "", "", "True"])
    assert [wl.problem_of(o)["key"] for o in (gemm, norm, soft, attn)] == [
        "gemm/K=16,M=8,N=4,batch=1/f32/NN", "rmsnorm/cols=16,rows=16/f32/NN", "softmax/cols=16,rows=16/f32/NN",
        "attention/B=1,D=8,H=2,S=4,SK=4/f32/NN/mask=causal"]


def test_kforges_gemm_op_and_the_eager_matmul_it_replaces_are_one_problem():
    eager = single("aten::matmul", [[8, 16], [16, 4]], ["float", "float"], strides=[[16, 1], [4, 1]])
    kforge_op = single("kforge::gemm", [[8, 16], [16, 4]], ["float", "float"])
    assert wl.problem_of(eager)["key"] == wl.problem_of(kforge_op)["key"]


# ---------------------------------------------------------------------------
# Bad input: one line naming the file and what is missing, exit status 2


def run_main(capsys, *argv):
    status = wl.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_bad_input(capsys, path, message, *extra):
    status, out, err = run_main(capsys, path, *extra)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kforge.workload: {path}: ")
    assert message in err


def test_a_file_that_is_not_json_is_refused(tmp_path, capsys):
    assert_bad_input(capsys, write(tmp_path, "<html>profile</html>"), "not JSON: Expecting value (line 1, column 1)")


def test_a_truncated_trace_is_refused_as_truncated(tmp_path, capsys):
    text = json.dumps(cuda_trace())
    assert_bad_input(capsys, write(tmp_path, text[: len(text) // 2]), "not JSON (truncated?)")


def test_a_missing_file_is_refused(tmp_path, capsys):
    assert_bad_input(capsys, tmp_path / "absent.json", "cannot read: No such file or directory")


def test_json_that_is_not_a_chrome_trace_is_refused(tmp_path, capsys):
    assert_bad_input(capsys, write(tmp_path, {"benchmarks": []}), "no 'traceEvents' array: not a Chrome trace")
    assert_bad_input(capsys, write(tmp_path, [1, 2]), "no 'traceEvents' array")


def test_a_chrome_trace_from_another_tool_is_refused(tmp_path, capsys):
    doc = {"traceEvents": [{"ph": "X", "cat": "blink", "name": "Paint", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}
    assert_bad_input(capsys, write(tmp_path, doc), "no 'cpu_op' events: not a torch.profiler trace")


def test_a_trace_recorded_without_shapes_is_refused(tmp_path, capsys):
    doc = cuda_trace()
    for e in doc["traceEvents"]:
        e.get("args", {}).pop("Input Dims", None)
    assert_bad_input(capsys, write(tmp_path, doc), "no args 'Input Dims': record with "
                                                   "torch.profiler.profile(record_shapes=True)")


def test_a_plan_of_a_trace_with_no_covered_operator_is_refused(tmp_path, capsys):
    doc = {"traceEvents": [op("aten::conv2d", 0, 10, [[1, 3, 8, 8], [8, 3, 3, 3]], ["float", "float"]),
                           op("aten::relu", 20, 5, [[1, 8, 8, 8]], ["float"])]}
    plan = tmp_path / "plan.json"
    assert_bad_input(capsys, write(tmp_path, doc), "no operator kforge covers (aten::conv2d, aten::relu): "
                                                   "no plan written", "--plan", plan)
    assert not plan.exists()


def test_operators_with_inputs_it_cannot_read_are_not_covered_rather_than_a_crash(tmp_path):
    doc = {"traceEvents": [op("aten::mm", 0, 10, [[8], "x"], ["float"]),
                           op("aten::softmax", 20, 5, [[]], ["float"])]}
    report = analyse_file(write(tmp_path, doc))
    assert all(r["problem"] is None and r["not_covered"] for r in report["operators"])


def test_a_non_positive_assumed_speedup_is_refused(tmp_path, capsys):
    status, _, err = run_main(capsys, write(tmp_path, cuda_trace()), "--assumed-speedup", "0")
    assert status == 2 and "--assumed-speedup: 0.0 is not a positive factor" in err


def test_the_command_prints_the_report_and_writes_the_plan(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    status, out, err = run_main(capsys, write(tmp_path, cuda_trace()), "--plan", plan, "--assumed-speedup", "2")
    assert status == 0 and err == ""
    assert "launch-bound 0.250 ms in 2 gaps" in out
    assert "Amdahl ceiling: the step 1.000 ms -> 0.825 ms, 1.21x faster" in out
    assert [e["op"] for e in json.loads(plan.read_text())["entries"]] == ["gemm", "gemm", "softmax"]


def test_the_json_report_is_json(tmp_path, capsys):
    status, out, _ = run_main(capsys, write(tmp_path, cuda_trace()), "--json")
    assert status == 0 and json.loads(out)["amdahl"]["covered_us"] == 350


# ---------------------------------------------------------------------------
# The committed CPU traces (tests/data/workload/record_fixtures.py): two profiled steps each


def raw_events(name):
    return json.loads((DATA / name).read_text())["traceEvents"]


def problems_by_calls(report):
    return {r["problem"]["key"]: r["calls"] for r in report["operators"] if r["problem"]}


def test_the_decoder_block_maps_its_projections_norms_and_attention():
    report = analyse_file(DATA / "decoder_block.json")
    assert report["steps"] == 2 and not report["device_trace"]
    # Per step: q, k, v, o (64 -> 64), gate_up (64 -> 256), down (128 -> 64), two RMSNorms, rotary on q
    # and on k, one attention, one SwiGLU gate.
    assert problems_by_calls(report) == {
        "gemm/K=64,M=16,N=64,batch=1/f32/NT": 8,
        "gemm/K=64,M=16,N=256,batch=1/f32/NT": 2,
        "gemm/K=128,M=16,N=64,batch=1/f32/NT": 2,
        "rmsnorm/cols=64,rows=16/f32/NN": 4,
        "rope/head_dim=16,heads=4,tokens=16/f32/NN/pairing=half": 4,
        "attention/B=1,D=16,H=4,S=16,SK=16/f32/NN/mask=causal": 2,
        "swiglu/cols=128,rows=16/f32/NN": 2,
    }
    assert set(report["not_covered"]) == {"aten::add", "aten::chunk", "aten::view", "aten::transpose",
                                          "aten::reshape"}


def test_the_covered_operators_inner_calls_are_not_counted_again():
    report = analyse_file(DATA / "decoder_block.json")
    names = {r["operator"] for r in report["operators"]}
    assert not names & {"aten::matmul", "aten::mm", "aten::t", "aten::_scaled_dot_product_flash_attention_for_cpu"}


def top_level_ops(name):
    """The step's outermost cpu_op events of a committed trace, in time order."""
    ops = sorted((e for e in raw_events(name) if e.get("cat") == "cpu_op"), key=lambda e: (e["ts"], -e["dur"]))
    out, end = [], -1.0
    for e in ops:
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def test_the_rotary_pattern_is_one_rope_call_timed_as_its_seven_operators():
    report = analyse_file(DATA / "decoder_block.json")
    rope = rows_of(report, "rope (rotate_half)")[0]
    assert rope["calls"] == 4 and rope["inputs"] == "x float[1, 4, 16, 16], cos float[16, 16]"
    assert rope["members"] == ["aten::slice", "aten::slice", "aten::mul", "aten::neg", "aten::cat", "aten::mul",
                               "aten::add"]
    ops = top_level_ops("decoder_block.json")
    negs = [i for i, e in enumerate(ops) if e["name"] == "aten::neg"]
    assert len(negs) == 4  # two steps (and no warm-up in the trace), q and k
    assert rope["time_us"] == pytest.approx(sum(ops[j]["dur"] for i in negs for j in range(i - 3, i + 4)))


def test_the_swiglu_gate_is_its_silu_and_mul_and_the_fused_projection_stays_a_gemm():
    report = analyse_file(DATA / "decoder_block.json")
    swiglu = rows_of(report, "swiglu (silu * mul)")[0]
    ops = top_level_ops("decoder_block.json")
    silu_mul = [e["dur"] for e in ops if e["name"] in ("aten::silu", "aten::mul")
                and e["args"]["Input Dims"][0] == [16, 128]]
    assert swiglu["calls"] == 2 and len(silu_mul) == 4
    assert swiglu["time_us"] == pytest.approx(sum(silu_mul))
    assert not rows_of(report, "aten::silu") and not rows_of(report, "aten::mul")


def test_a_swiglu_with_separate_gate_and_up_projections_keeps_the_up_projection_a_gemm():
    report = analyse_file(DATA / "decoder_block_llama.json")
    calls = problems_by_calls(report)
    assert calls["swiglu/cols=128,rows=16/f32/NN"] == 2
    assert calls["gemm/K=64,M=16,N=128,batch=1/f32/NT"] == 4  # gate and up, two steps
    assert rows_of(report, "swiglu (silu * mul)")[0]["members"] == ["aten::silu", "aten::mul"]


def seq_op(name, ts, dims, types=None, concrete=None, tid=1):
    return op(name, ts, 1, dims, types or ["float"] * len(dims), concrete=concrete, tid=tid)


def rotary_events(x, cos, t0=0, order="slices first", dtype="float"):
    d = x[-1]
    half = x[:-1] + [d // 2]
    slices = [seq_op("aten::slice", 0, [x, [], [], [], []], [dtype] + ["Scalar"] * 4, ["", "-1", "0", str(d // 2), "1"]),
              seq_op("aten::slice", 0, [x, [], [], [], []], [dtype] + ["Scalar"] * 4,
                     ["", "-1", str(d // 2), "9223372036854775807", "1"])]
    mul_cos = seq_op("aten::mul", 0, [x, cos], [dtype, dtype])
    head = slices + [mul_cos] if order == "slices first" else [mul_cos] + slices
    events = head + [seq_op("aten::neg", 0, [half], [dtype]),
                     seq_op("aten::cat", 0, [[half, half], []], ["TensorList", "Scalar"], ["", "-1"]),
                     seq_op("aten::mul", 0, [x, cos], [dtype, dtype]),
                     seq_op("aten::add", 0, [x, x, []], [dtype, dtype, "Scalar"])]
    for i, e in enumerate(events):
        e["ts"], e["dur"] = t0 + 10 * i, 5
    return events


def test_rotary_as_hugging_face_writes_it_is_rope_whatever_the_order_of_its_first_three_operators(tmp_path):
    for order in ("slices first", "mul first"):
        report = analyse_file(write(tmp_path, {"traceEvents": rotary_events([2, 8, 32, 64], [1, 1, 32, 64],
                                                                            order=order, dtype="c10::BFloat16")}))
        (row,) = report["operators"]
        assert row["problem"]["key"] == "rope/head_dim=64,heads=16,tokens=32/bf16/NN/pairing=half"
        assert row["calls"] == 1 and row["time_us"] == 35


def test_rotary_with_positions_per_batch_row_is_a_rope_pattern_left_uncovered(tmp_path):
    report = analyse_file(write(tmp_path, {"traceEvents": rotary_events([2, 8, 32, 64], [2, 1, 32, 64])}))
    (row,) = report["operators"]
    assert row["operator"] == "rope (rotate_half)" and row["problem"] is None
    assert "positions vary along 2 dims" in row["not_covered"]


def test_an_incomplete_rotary_sequence_stays_separate_operators(tmp_path):
    events = rotary_events([1, 4, 16, 16], [16, 16])
    del events[-1]  # no add
    report = analyse_file(write(tmp_path, {"traceEvents": events}))
    assert not rows_of(report, "rope (rotate_half)") and all(r["problem"] is None for r in report["operators"])


def test_a_silu_not_followed_by_a_mul_of_its_shape_is_not_a_swiglu(tmp_path):
    events = [seq_op("aten::silu", 0, [[16, 128]]), seq_op("aten::mul", 10, [[16, 128], []], ["float", "Scalar"])]
    report = analyse_file(write(tmp_path, {"traceEvents": events}))
    assert not rows_of(report, "swiglu (silu * mul)")
    assert "its swiglu is silu(gate) * up" in rows_of(report, "aten::silu")[0]["not_covered"]


def test_a_silu_and_mul_on_different_threads_are_not_a_swiglu(tmp_path):
    events = [seq_op("aten::silu", 0, [[16, 128]]), seq_op("aten::mul", 10, [[16, 128], [16, 128]], tid=2)]
    assert not rows_of(analyse_file(write(tmp_path, {"traceEvents": events})), "swiglu (silu * mul)")


def test_a_cpu_traces_times_are_its_outermost_operators_host_times():
    report = analyse_file(DATA / "mlp.json")
    up = [r for r in report["operators"] if r["problem"] and r["problem"]["dims"].get("N") == 256][0]
    linear_up = [e["dur"] for e in raw_events("mlp.json")
                 if e.get("cat") == "cpu_op" and e["name"] == "aten::linear" and e["args"]["Input Dims"][1] == [256, 64]]
    assert up["calls"] == len(linear_up) == 2
    assert up["time_us"] == pytest.approx(sum(linear_up))
    steps = [e["dur"] for e in raw_events("mlp.json") if e["name"].startswith("ProfilerStep#")]
    assert report["wall_us"] == pytest.approx(sum(steps))
    assert up["share_of_wall"] == pytest.approx(sum(linear_up) / sum(steps))


def test_the_shares_of_a_cpu_trace_are_of_cpu_operator_time_and_add_up_to_one():
    report = analyse_file(DATA / "mlp.json")
    assert report["time_basis"] == "CPU operator time"
    assert sum(r["share_of_time"] for r in report["operators"]) == pytest.approx(1.0)
    assert report["total_us"] < report["wall_us"]


def test_the_mlp_maps_its_linears_with_bias_and_its_softmax():
    report = analyse_file(DATA / "mlp.json")
    assert problems_by_calls(report) == {"gemm/K=64,M=32,N=256,batch=1/f32/NT/bias": 2,
                                         "gemm/K=256,M=32,N=64,batch=1/f32/NT/bias": 2,
                                         "softmax/cols=64,rows=32/f32/NN": 2}
    assert list(report["not_covered"]) == ["aten::gelu"]


def test_a_model_kforge_mostly_cannot_cover_names_what_and_why():
    report = analyse_file(DATA / "conv.json")
    assert problems_by_calls(report) == {"gemm/K=512,M=2,N=10,batch=1/f32/NT/bias": 2}
    assert report["not_covered"]["aten::conv2d"]["reasons"] == ["kforge has no operator for aten::conv2d"]
    assert report["not_covered"]["aten::softmax"]["reasons"] == [
        "softmax over dim 1 of [2, 8, 8, 8]: kforge's softmax is over the last axis"]
    a = report["amdahl"]
    assert a["covered_share_of_wall"] < 0.5 and a["ceiling"] < a["limit_if_free"]


def test_the_decoder_blocks_plan_orders_its_problems_by_share_of_time():
    report = analyse_file(DATA / "decoder_block.json")
    plan = wl.plan_of(report["operators"], "workload")
    times = {}
    for r in report["operators"]:
        if r["problem"]:
            times[r["problem"]["key"]] = times.get(r["problem"]["key"], 0.0) + r["time_us"]
    assert len(plan["entries"]) == 7
    ordered = sorted(times, key=lambda k: -times[k])
    assert [e["op"] for e in plan["entries"]] == [k.split("/")[0] for k in ordered]
    attention = [e for e in plan["entries"] if e["op"] == "attention"][0]
    assert attention == {"op": "attention", "shapes": ["B=1,H=4,S=16,SK=16,D=16"], "dtypes": ["f32"],
                         "attrs": ["mask=causal"]}


def test_the_committed_traces_are_small():
    for name in ("decoder_block.json", "decoder_block_llama.json", "mlp.json", "conv.json"):
        assert (DATA / name).stat().st_size < 300_000


def test_kernels_that_run_after_the_steps_host_span_still_count_and_extend_the_window(tmp_path):
    doc = cuda_trace()
    for e in doc["traceEvents"]:
        if e["name"] == "mm_kernel" or e.get("ph") == "f":
            e["ts"] = 1100
    report = analyse_file(write(tmp_path, doc))
    assert rows_of(report, "aten::mm")[0]["time_us"] == 100 and report["total_us"] == 450
    d = report["device"]
    assert d["busy_us"] == 450 and d["idle_us"] == 1200 - 450 and d["gaps"][-1]["idle_us"] == 1100 - 520


def test_a_kernel_without_a_launch_call_is_a_row_of_its_own(tmp_path):
    doc = cuda_trace()
    doc["traceEvents"].append(kernel("stray_kernel", 900, 40, corr=99))
    report = analyse_file(write(tmp_path, doc))
    stray = rows_of(report, "(device events without an operator)")[0]
    assert stray["calls"] == 1 and stray["time_us"] == 40 and report["total_us"] == 490


class FakeKforge:
    """Stands in for the kforge package in sys.modules: a database of one tuned softmax."""

    class KforgeError(RuntimeError):
        pass

    class Database:
        def __init__(self, path, read_only):
            if not Path(path).exists():
                raise FakeKforge.KforgeError(f"cannot open {path}")

        def winners(self):
            return [{"problem_key": "softmax/cols=128,rows=8/f32/NN", "op": "softmax", "median_ms": 0.01}]

        def results(self, problem_key):
            return [{"problem_key": problem_key, "template_name": "softmax_online", "config": "BLOCK64_VW1",
                     "status": "ok", "median_ms": 0.04}]

    @staticmethod
    def templates(op):
        return [{"name": "softmax_online", "manifest": {"parameters": [{"name": "BLOCK", "default": 64},
                                                                      {"name": "VW", "default": 1}]}}]


def test_the_ceiling_reads_speedups_over_default_from_the_database(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "kforge", FakeKforge)
    db = write(tmp_path, "", "kforge.db")
    status, out, _ = run_main(capsys, write(tmp_path, cuda_trace()), "--db", db, "--json", "--assumed-speedup", "2")
    report = json.loads(out)
    softmax = rows_of(report, "aten::softmax")[0]
    assert status == 0 and softmax["speedup"] == 4.0 and softmax["speedup_source"] == "database"
    assert report["amdahl"]["from_database"] == 1
    assert report["amdahl"]["step_after_us"] == pytest.approx(1000 - 300 / 2 - (50 - 50 / 4))


def test_a_database_that_cannot_be_opened_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "kforge", FakeKforge)
    db = tmp_path / "absent.db"
    status, _, err = run_main(capsys, write(tmp_path, cuda_trace()), "--db", db)
    assert status == 2 and err == f"kforge.workload: {db}: cannot open {db}\n"


# ---------------------------------------------------------------------------
# The receipt (compare): two traces of one workload, before and after.
#
# The hand-written pair: after is the CUDA trace with the linear's kernel 200 -> 100 us and the step
# 1000 -> 900 us, the conv2d gone and a relu (30 us kernel) added. Per step (one step each): linear
# 200 -> 100 (2x), softmax 50 -> 50, mm 100 -> 100; conv2d only before, relu only after.


def after_trace():
    doc = cuda_trace()
    events = [e for e in doc["traceEvents"] if e["name"] not in ("aten::conv2d", "conv_kernel")
              and (e.get("args") or {}).get("correlation") != 3]
    for e in events:
        if e["name"] == "gemm_kernel":
            e["dur"] = 100
        if e["name"] == "ProfilerStep#1" and e["cat"] == "user_annotation":
            e["dur"] = 900
    events += [op("aten::relu", 400, 20, [[8, 128]], ["float"]), launch(405, 5, 5), kernel("relu_kernel", 420, 30, 5)]
    doc["traceEvents"] = events
    doc["host_name"], doc["torch_version"] = "gpu-host", "2.5.0"
    return doc


def receipt_of(tmp_path, speedups=None):
    before, after = write(tmp_path, cuda_trace(), "before.json"), write(tmp_path, after_trace(), "after.json")
    return wl.compare(wl.load_trace(before), before, wl.load_trace(after), after, speedups)


def test_the_receipt_gives_each_operator_its_time_per_step_before_and_after(tmp_path):
    r = receipt_of(tmp_path)
    got = {x["key"]: (x["before_us"], x["after_us"], x["measured_speedup"], x["expected_speedup"])
           for x in r["operators"]}
    assert got == {"gemm/K=64,M=8,N=128,batch=1/f32/NT/bias": (200, 100, 2.0, None),
                   "softmax/cols=128,rows=8/f32/NN": (50, 50, 1.0, None),
                   "gemm/K=64,M=8,N=32,batch=1/f32/NN": (100, 100, 1.0, None)}
    assert [x["key"] for x in r["operators"]][0] == "gemm/K=64,M=8,N=128,batch=1/f32/NT/bias"


def test_the_receipt_names_what_only_one_trace_has(tmp_path):
    r = receipt_of(tmp_path)
    assert [(x["key"], x["time_us"]) for x in r["only_before"]] == [
        ("aten::conv2d (float[2, 3, 8, 8], float[8, 3, 3, 3], float[8], -, -, -, -)", 100)]
    assert [(x["key"], x["time_us"]) for x in r["only_after"]] == [("aten::relu (float[8, 128])", 30)]


def test_end_to_end_the_receipt_sets_the_measured_gain_against_the_amdahl_expectation(tmp_path):
    e = receipt_of(tmp_path)["end_to_end"]
    assert (e["step_before_us"], e["step_after_us"]) == (1000, 900)
    assert e["measured_speedup"] == pytest.approx(1000 / 900) and e["expected_speedup"] is None
    e = receipt_of(tmp_path, {"softmax/cols=128,rows=8/f32/NN": 4.0})["end_to_end"]
    assert e["expected_step_after_us"] == pytest.approx(1000 - (50 - 50 / 4))
    assert e["expected_speedup"] == pytest.approx(1000 / 962.5) and e["from_database"] == 1


def test_the_receipt_records_each_traces_environment(tmp_path):
    env = receipt_of(tmp_path)["environment"]
    assert env["before"] == {"host": None, "torch": None, "devices": ["cpu only"]}
    assert env["after"] == {"host": "gpu-host", "torch": "2.5.0", "devices": ["cpu only"]}


def test_the_receipt_command_prints_expected_speedups_from_the_database(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "kforge", FakeKforge)
    db = write(tmp_path, "", "kforge.db")
    before, after = write(tmp_path, cuda_trace(), "before.json"), write(tmp_path, after_trace(), "after.json")
    status, out, err = run_main(capsys, "compare", before, after, "--db", db)
    assert status == 0 and err == ""
    assert "softmax/cols=128,rows=8/f32/NN" in out and "1.00x     4.00x" in out
    assert "only in before: aten::conv2d" in out and "only in after: aten::relu (float[8, 128])" in out
    assert "torch: not recorded -> 2.5.0 (the traces differ)" in out
    assert "the step 1.000 ms -> 0.900 ms, measured 1.11x; expected 1.04x (-> 0.963 ms" in out
    status, out, _ = run_main(capsys, "compare", before, after, "--json")
    assert status == 0 and json.loads(out)["end_to_end"]["expected_speedup"] is None


def test_the_committed_pair_compares_the_fused_and_the_separate_swiglu_projections(capsys):
    status, out, _ = run_main(capsys, "compare", DATA / "decoder_block.json", DATA / "decoder_block_llama.json",
                              "--json")
    r = json.loads(out)
    assert status == 0 and r["environment"]["before"]["torch"] == r["environment"]["after"]["torch"]
    assert {x["key"] for x in r["only_before"]} == {"gemm/K=64,M=16,N=256,batch=1/f32/NT",
                                                    "aten::chunk (float[16, 256], Scalar, Scalar)"}
    assert [x["key"] for x in r["only_after"]] == ["gemm/K=64,M=16,N=128,batch=1/f32/NT"]
    keys = {x["key"] for x in r["operators"]}
    assert {"rope/head_dim=16,heads=4,tokens=16/f32/NN/pairing=half", "swiglu/cols=128,rows=16/f32/NN"} <= keys
    before = analyse_file(DATA / "decoder_block.json")
    swiglu = [x for x in r["operators"] if x["key"].startswith("swiglu/")][0]
    assert swiglu["before_us"] == pytest.approx(rows_of(before, "swiglu (silu * mul)")[0]["time_us"] / 2)
    assert r["end_to_end"]["step_before_us"] == pytest.approx(before["wall_us"] / 2)


@pytest.mark.parametrize("side", [0, 1])
def test_the_receipt_refuses_bad_input_on_either_side_naming_the_file(tmp_path, capsys, side):
    good = write(tmp_path, cuda_trace(), "good.json")
    text = json.dumps(cuda_trace())
    no_shapes = cuda_trace()
    for e in no_shapes["traceEvents"]:
        e.get("args", {}).pop("Input Dims", None)
    other_tool = {"traceEvents": [{"ph": "X", "cat": "blink", "name": "Paint", "ts": 0, "dur": 5}]}
    cases = [("<html/>", "not JSON: Expecting value"), (text[: len(text) // 2], "not JSON (truncated?)"),
             ({"benchmarks": []}, "no 'traceEvents' array"), (other_tool, "no 'cpu_op' events"),
             (no_shapes, "record with torch.profiler.profile(record_shapes=True)")]
    for i, (doc, message) in enumerate(cases):
        bad = write(tmp_path, doc, f"bad{i}.json")
        pair = [good, bad] if side else [bad, good]
        status, out, err = run_main(capsys, "compare", *pair)
        assert status == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"kforge.workload: {bad}: ") and message in err


def test_the_receipt_refuses_a_cpu_trace_against_a_cuda_trace(tmp_path, capsys):
    cuda = write(tmp_path, cuda_trace(), "cuda.json")
    status, _, err = run_main(capsys, "compare", DATA / "mlp.json", cuda)
    assert status == 2 and f"{DATA / 'mlp.json'}: a CPU-only trace (no kernels), and {cuda} has kernels" in err
