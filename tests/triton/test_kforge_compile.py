"""`kforge compile --triton DIR`: Triton's compiler builds, kforge's own
readers judge (ptxas' log and the SASS for a cubin, the code object and
its disassembly for an HSACO): registers, shared memory, occupancy, the
instruction mix, and the tuner's pruning rule with its reason."""

import json
import os
import subprocess
import sys

import pytest

from triton_testing import CORPUS, HELPERS, triton_missing

KFORGE = os.environ.get("KFORGE_BIN", "")
pytestmark = [
    pytest.mark.skipif(triton_missing() is not None, reason=str(triton_missing())),
    pytest.mark.skipif(not os.path.exists(KFORGE), reason="KFORGE_BIN does not name the built kforge"),
]
GEMM = os.path.join(CORPUS, "gemm_dot")
SHAPE = ["--op", "gemm", "--shape", "M=1024,N=1024,K=1024", "--dtype", "bf16"]


def kforge_compile(target, config, *extra):
    env = dict(os.environ, KFORGE_TRITON_HELPERS=HELPERS, KFORGE_PYTHON=sys.executable)
    proc = subprocess.run([KFORGE, "compile", "--target", target, "--triton", GEMM, *SHAPE, "--config",
                           json.dumps(config), "--json", *extra], capture_output=True, text=True, env=env,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert len(report["candidates"]) == 1
    return report["candidates"][0]


def mix_count(candidate, category):
    mix = candidate["instruction_mix"]
    assert mix is not None, candidate.get("disassembly_error")
    return mix["categories"].get(category, 0)


def test_sm90a_gemm_uses_wgmma_and_its_dynamic_shared_memory_counts():
    c = kforge_compile("cuda:sm_90a", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3})
    assert c["status"] == "ok", c
    assert c["binary_format"] == "cubin"
    assert c["threads_per_block"] == 128
    assert c["registers"] > 0
    assert c["spill_stores"] == 0  # read from ptxas' log, not left unknown
    assert c["shared_bytes"] == c["triton_metadata"]["shared"] > 0
    assert mix_count(c, "mma") > 0  # HGMMA
    assert 0 < c["occupancy"] <= 1
    # The launch a CUDA device would make, checked against the cubin's own
    # parameter table: 17 arguments, then Triton's two scratch pointers.
    abi = c["launch_abi"]
    assert abi["parameters"] == 17
    assert abi["binary_parameter_bytes"][-2:] == [8, 8] and len(abi["binary_parameter_bytes"]) == 19
    assert abi["block_threads"] == 128
    assert abi["dynamic_shared_bytes"] == c["triton_metadata"]["shared"]


def test_sm80_gemm_uses_mma_sync_and_ldmatrix():
    c = kforge_compile("cuda:sm_80", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert c["status"] == "ok", c
    assert mix_count(c, "mma") > 0 and mix_count(c, "ldmatrix") > 0


def test_gfx942_gemm_uses_mfma():
    c = kforge_compile("hip:gfx942", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert c["status"] == "ok", c
    assert c["binary_format"] == "hsaco"
    assert c["threads_per_block"] == 256  # 4 waves of 64
    assert c["amdgpu"]["vgprs"] > 0
    assert mix_count(c, "mfma") > 0
    assert c["launch_abi"]["block_threads"] == 256
    assert len(c["launch_abi"]["binary_parameter_bytes"]) == 19  # checked against the kernarg metadata


def test_a_spilling_configuration_is_pruned_with_the_reason():
    c = kforge_compile("cuda:sm_80", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "maxnreg": 64})
    assert c["status"] == "resource_limit"
    assert c["pruned"] is True
    assert c["spill_stores"] > 0
    assert c["reason"].startswith("spills registers on sm_80")


def test_a_target_the_manifest_does_not_list_is_refused_naming_it():
    env = dict(os.environ, KFORGE_TRITON_HELPERS=HELPERS, KFORGE_PYTHON=sys.executable)
    proc = subprocess.run([KFORGE, "compile", "--target", "cuda:sm_75", "--triton", GEMM, *SHAPE], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode != 0
    assert "targets: 'cuda:sm_75' is not one of" in proc.stderr
