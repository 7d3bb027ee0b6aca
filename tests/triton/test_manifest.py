"""Triton template manifests: the corpus loads, and each mistake is named
by file, field and value. The expression language matches generator/expr.hpp."""

import json
import os
import shutil

import pytest

from triton_testing import CORPUS, corpus_manifests
from kforge_triton.expr import Expr, ExprError
from kforge_triton.manifest import ManifestError, load_manifest


def test_corpus_loads():
    names = [load_manifest(p)["name"] for p in corpus_manifests()]
    assert {"gemm_triton_dot", "rmsnorm_triton_row", "softmax_triton_row"} <= set(names)


@pytest.mark.parametrize("text,value", [("1 + 2 * 3", 7), ("-7 / 2", -3), ("-7 % 2", -1), ("ceil_div(7, 2)", 4),
                                        ("min(3, 1, 2) + max(1, 5)", 6), ("(3 < 4) && !0", 1), ("2 > 3 || 0", 0),
                                        ("trans_a + (1 - trans_a) * K", 9)])
def test_expressions(text, value):
    assert Expr(text).eval({"trans_a": 0, "K": 9}) == value


@pytest.mark.parametrize("text,message", [("1 +", "position 3"), ("a b", "position 2"), ("f(1)", "unknown function"),
                                          ("(1", r"expected '\)'"), ("1 / 0", "division by zero")])
def test_expression_errors(text, message):
    with pytest.raises(ExprError, match=message):
        Expr(text).eval({"a": 1})


def test_gemm_strides_for_every_layout():
    m = load_manifest(os.path.join(CORPUS, "gemm_dot", "manifest.json"))
    cfg = m.default_config("cuda:sm_80")
    problem = {"M": 3, "N": 5, "K": 7}
    nn = m.argument_values(cfg, problem, "NN")
    assert (nn["stride_am"], nn["stride_ak"], nn["stride_bk"], nn["stride_bn"]) == (7, 1, 5, 1)
    tt = m.argument_values(cfg, problem, "TT")
    assert (tt["stride_am"], tt["stride_ak"], tt["stride_bk"], tt["stride_bn"]) == (1, 3, 1, 7)
    assert m.grid(dict(cfg, BLOCK_M=2, BLOCK_N=2), dict(problem, batch=4)) == [6, 1, 4]


def test_compile_request_from_manifest():
    m = load_manifest(os.path.join(CORPUS, "gemm_dot", "manifest.json"))
    cfg = m.default_config("hip:gfx942")
    assert {"waves_per_eu", "kpack", "matrix_instr_nonkdim"} <= set(cfg)
    assert "kpack" not in m.default_config("cuda:sm_80")
    req = m.compile_request(cfg, "hip:gfx942", "bf16", "/tmp/x", problem={"M": 64, "N": 64, "K": 64})
    assert req["signature"]["A"] == "*bf16" and req["signature"]["C"] == "*fp32"
    assert req["constexprs"] == {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}
    assert req["options"]["enable_fp_fusion"] is True and req["options"]["kpack"] == 1
    assert set(req["specialization"]["divisible_by_16"]) == {"A", "B", "C", "stride_am", "stride_bk", "stride_cm"}
    odd = m.compile_request(cfg, "hip:gfx942", "f16", "/tmp/x", problem={"M": 64, "N": 63, "K": 64})
    assert set(odd["specialization"]["divisible_by_16"]) == {"A", "B", "C", "stride_am"}


def _broken(tmp_path, edit, template="softmax_row"):
    src = os.path.join(CORPUS, template)
    dst = tmp_path / template
    shutil.copytree(src, dst)
    path = dst / "manifest.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("edit,field,what", [
    (lambda d: d.pop("grid"), "grid", "missing"),
    (lambda d: d.update(kind="opencl"), "kind", "'opencl'"),
    (lambda d: d.update(operator="conv"), "operator", "'conv'"),
    (lambda d: d.update(targets=["cuda:sm_70"]), "targets[0]", "'cuda:sm_70'"),
    (lambda d: d.update(colour=1), "colour", "unknown field"),
    (lambda d: d["parameters"][0].update(name="TILE"), "parameters[0] (TILE)", "neither a compile option"),
    (lambda d: d["parameters"][0].update(default=3), "parameters[0] (BLOCK_N).default", "3 is not one of"),
    (lambda d: d["parameters"].append({"name": "kpack", "values": [1], "default": 1}), "(kpack)", "hip"),
    (lambda d: d["arguments"].reverse(), "arguments", "in order"),
    (lambda d: d["arguments"][2].update(bind="Z"), "arguments[2] (X).bind", "'Z'"),
    (lambda d: d["arguments"][4].update(value="cols +"), "arguments[4] (stride_x).value", "'cols +'"),
    (lambda d: d["arguments"][4].update(value="rowz"), "arguments[4] (stride_x).value", "unknown name rowz"),
    (lambda d: d.update(constraints=["BLOCK_N >= colz"]), "constraints[0]", "colz"),
    (lambda d: d["specialization"].append({"argument": "X", "divisible_by": 8}), "divisible_by", "8"),
    (lambda d: d.update(kernel="nope"), "kernel", "'nope'"),
])
def test_manifest_errors_name_file_field_value(tmp_path, edit, field, what):
    path = _broken(tmp_path, edit)
    with pytest.raises(ManifestError) as e:
        load_manifest(path)
    message = str(e.value)
    assert message.startswith(path + ": "), message
    assert field in message and what in message, message


def test_workspaces_from_manifest():
    m = load_manifest(os.path.join(CORPUS, "gemm_splitk_grid", "manifest.json"))
    cfg = dict(m.default_config("cuda:sm_80"), BLOCK_M=16, BLOCK_N=64, SPLIT_K=4)
    problem = {"M": 19, "N": 70, "K": 300, "batch": 3}
    assert m.workspaces(cfg, problem) == [
        {"name": "partials", "type": "*fp32", "elements": 3 * 4 * 4 * 16 * 64, "zeroed": False},
        {"name": "tickets", "type": "*i32", "elements": 3 * 4, "zeroed": True}]
    assert m.signature("bf16")["tickets"] == "*i32" and m.grid(cfg, problem) == [4, 4, 3]
    request = m.interpret_request(cfg, problem, {"A": {"npy": "a"}, "B": {"npy": "b"}, "C": {"npy": "c"},
                                                 "alpha": 1.0, "beta": 0.0})
    tickets = [a for a in request["args"] if a["name"] == "tickets"]
    assert tickets == [{"name": "tickets", "kind": "workspace", "elements": 12, "dtype": "i32", "zeroed": True}]


def _workspace_edit(index, **changes):
    def edit(d):
        d["arguments"][index].update(changes)
        for key in [k for k, v in changes.items() if v is None]:
            d["arguments"][index].pop(key)
    return edit


@pytest.mark.parametrize("edit,field,what", [
    (_workspace_edit(17, workspace=""), "arguments[17] (partials).workspace", "empty"),
    (_workspace_edit(17, workspace="   "), "arguments[17] (partials).workspace", "empty"),
    (_workspace_edit(17, workspace="M *"), "arguments[17] (partials).workspace", "'M *'"),
    (_workspace_edit(17, workspace="M * BLOCK_Q"), "arguments[17] (partials).workspace", "unknown name BLOCK_Q"),
    (_workspace_edit(17, workspace=12), "arguments[17] (partials).workspace", "expected an expression"),
    (_workspace_edit(18, type="i32"), "arguments[18] (tickets).type", "'i32': a workspace is a pointer"),
    (_workspace_edit(18, zeroed="yes"), "arguments[18] (tickets).zeroed", 'expected true or false, got "yes"'),
    (_workspace_edit(18, zeroed=1), "arguments[18] (tickets).zeroed", "expected true or false, got 1"),
    (_workspace_edit(18, bind="C"), "arguments[18] (tickets)", "exactly one of bind"),
    (_workspace_edit(18, value="M"), "arguments[18] (tickets)", "got value and workspace"),
    (_workspace_edit(7, zeroed=True), "arguments[7] (C).zeroed", "only a workspace is zeroed"),
])
def test_workspace_errors_name_file_field_value(tmp_path, edit, field, what):
    path = _broken(tmp_path, edit, "gemm_splitk_grid")
    with pytest.raises(ManifestError) as e:
        load_manifest(path)
    message = str(e.value)
    assert message.startswith(path + ": "), message
    assert field in message and what in message, message
