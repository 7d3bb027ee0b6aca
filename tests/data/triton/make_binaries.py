"""Remakes the Triton binaries and launch records the C++ tests load
(tests/runtime/triton_launch_test.cpp) with kforge's compile helper:
    PYTHONPATH=triton python tests/data/triton/make_binaries.py
Each goes to its own folder: <target>[-ctas<N>]/scale.{cubin|hsaco,json}."""

import json
import os
import sys

from kforge_triton.compile import compile_request

HERE = os.path.dirname(os.path.abspath(__file__))
BUILDS = [("cuda:sm_90a", 1), ("cuda:sm_90a", 2), ("hip:gfx942", 1)]

for target, ctas in BUILDS:
    folder = target.replace(":", "-") + (f"-ctas{ctas}" if ctas > 1 else "")
    response = compile_request({
        "source_path": os.path.join(HERE, "scale.py"), "kernel": "scale",
        "signature": {"X": "*fp32", "Y": "*fp32", "n": "i32", "alpha": "fp32"},
        "constexprs": {"BLOCK": 256}, "specialization": {"divisible_by_16": ["X", "Y"]},
        "options": {"num_warps": 4, "num_ctas": ctas}, "target": target,
        "out_dir": os.path.join(HERE, folder), "timeout_s": 300,
    })
    if not response["ok"]:
        sys.exit(f"{target}: {response['error']}")
    os.remove(response["asm_path"])
    print(folder, response["metadata"]["shared"], json.dumps(response["parameters"]))
