"""The helpers' shared plumbing: read one JSON request, write one JSON
response, and the targets the compile helper knows."""

import json
import sys

# kforge's target names -> (Triton backend, arch, warp size). Triton turns
# capability 90 into sm_90a (wgmma), so cuda:sm_90a is capability 90.
TARGETS = {
    "cuda:sm_80": ("cuda", 80, 32),
    "cuda:sm_86": ("cuda", 86, 32),
    "cuda:sm_89": ("cuda", 89, 32),
    "cuda:sm_90a": ("cuda", 90, 32),
    "hip:gfx90a": ("hip", "gfx90a", 64),
    "hip:gfx942": ("hip", "gfx942", 64),
    "hip:gfx950": ("hip", "gfx950", 64),
}

# Compile options each backend takes from a request (or a manifest's
# parameters and options); anything else is refused rather than ignored.
COMMON_OPTIONS = ("num_warps", "num_stages", "num_ctas", "enable_fp_fusion")
BACKEND_OPTIONS = {
    "cuda": COMMON_OPTIONS + ("maxnreg",),
    "hip": COMMON_OPTIONS + ("waves_per_eu", "matrix_instr_nonkdim", "kpack"),
}
ALL_OPTIONS = tuple(sorted(set(BACKEND_OPTIONS["cuda"]) | set(BACKEND_OPTIONS["hip"])))

# Defaults applied before compiling, so that the response (and the cache
# key) records every option that shapes the code. enable_fp_fusion is
# Triton's default, pinned so that a Triton release changing it shows.
DEFAULT_OPTIONS = {
    "cuda": {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "enable_fp_fusion": True},
    "hip": {"num_warps": 4, "num_stages": 2, "num_ctas": 1, "enable_fp_fusion": True,
            "waves_per_eu": 0, "matrix_instr_nonkdim": 0, "kpack": 1},
}

# kforge dtype names -> Triton signature element types.
DTYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": "fp64", "i32": "i32", "i64": "i64",
          "u8": "u8", "i8": "i8"}


class RequestError(Exception):
    """A request the helper cannot act on: reported as ok false, exit 0."""


def read_request(stream=None):
    stream = stream or sys.stdin
    text = stream.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as e:
        raise RequestError(f"request: not JSON ({e})") from None
    if not isinstance(request, dict):
        raise RequestError("request: expected a JSON object")
    return request


def require(request, key, kind, what=None):
    if key not in request:
        raise RequestError(f"request: {key}: missing (required)")
    value = request[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RequestError(f"request: {key}: expected {what or kind.__name__}, got {type(value).__name__}")
    return value


def write_response(response, stream=None):
    stream = stream or sys.stdout
    stream.write(json.dumps(response, sort_keys=True, default=str) + "\n")
    stream.flush()
