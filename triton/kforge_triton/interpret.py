"""Run one @triton.jit kernel under Triton's interpreter on NumPy arrays:
`python3 -m kforge_triton.interpret` (a fresh process: TRITON_INTERPRET is
set before Triton is imported, and must be).

Request (one JSON object on stdin, or `REQUEST RESPONSE` file paths as
arguments):
  source_path, kernel   as for kforge_triton.compile
  args        the kernel's non-constexpr arguments, in any order, by name:
                {"name", "kind": "array", "npy": path, "out": bool,
                 "dtype": "bf16" (optional: the .npy holds bf16 bit patterns
                 as uint16), "out_npy": path (optional; default: npy)}
                or {"name", "kind": "array", "raw": path, "dtype": Triton
                 element type ("fp32", "bf16", "i32", ...), "out": bool}:
                 a file of raw elements, written back raw
                 (how kforge's interpreter device passes its buffers)
                {"name", "kind": "scalar", "value": number,
                 "dtype": "i32" | "i64" | "fp32"}
                {"name", "kind": "workspace", "elements": count, "dtype":
                 Triton element type, "zeroed": bool}: memory the helper
                 allocates (zeros, else 0xFF bytes so that a read before
                 the kernel's own write shows), guarded as arrays are; a
                 zeroed one must be all zero again after the run
  constexprs  {argument: value}
  grid        [x, y, z] programs
  guard_elements  (optional, default 1024) poisoned elements before and
              after every array; the interpreter does not bounds-check, so
              a write past an array lands there (or, past the guard, in
              whatever the heap holds: keep guards wider than any overrun)

Response (one JSON object on stdout; exit 0 whenever it could be written):
  ok (ran, no guard was touched, every zeroed workspace left zero), error,
  outputs {name: path written},
  guard_violations [{argument, side: "before" | "after", elements,
  nearest}] ("nearest": the touched element's distance from the array),
  workspace_violations [{workspace, nonzero, first, value}] (zeroed
  workspaces the kernel left non-zero), programs, seconds.
"""

import os
import sys

if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
    # @triton.jit reads TRITON_INTERPRET: a process that imported Triton
    # without it compiles instead of interpreting.
    raise ImportError("kforge_triton.interpret must be imported before triton (or with TRITON_INTERPRET=1)")
os.environ["TRITON_INTERPRET"] = "1"

import time  # noqa: E402

import numpy as np  # noqa: E402

from .protocol import RequestError, read_request, require, write_response  # noqa: E402

# NumPy dtype -> the torch-style name Triton's argument mangling reads.
_TORCH_NAMES = {
    np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
    np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32", np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool",
}


class _Dtype:
    """A torch.dtype look-alike. Triton's native argument mangling caches by
    the dtype object's identity, so there is exactly one per type, kept for
    the life of the process (a fresh object per call can reuse a freed
    object's address and be taken for another type)."""
    __module__ = "torch"

    def __init__(self, name):
        self.name = name
        self.itemsize = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1,
                         "int16": 2, "int32": 4, "int64": 8, "bool": 1}[name]

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


_DTYPES = {name: _Dtype(name) for name in set(_TORCH_NAMES.values()) | {"bfloat16"}}


class HostArray:
    """The tensor surface the interpreter reads (data_ptr, dtype) over a
    NumPy array: the interpreter dereferences data_ptr() directly."""

    def __init__(self, array, dtype_name):
        self.array = array
        self.dtype = _DTYPES[dtype_name]
        self.shape = array.shape

    def data_ptr(self):
        return self.array.ctypes.data

    def element_size(self):
        return self.dtype.itemsize


def _patch_interpreter():
    """Two changes to Triton 3.9's interpreter. It copies tensors through
    torch storage before and after a launch; HostArray is host memory
    already, so it runs on it in place. Its tl.dot multiplies bf16 operands
    as their uint16 bit patterns; they are widened to f32 first (exact)."""
    import triton.language as tl
    from triton.runtime import interpreter

    interpreter.GridExecutor._init_args_hst = lambda self, args_dev, kwargs: (list(args_dev), dict(kwargs))
    interpreter.GridExecutor._restore_args_dev = lambda self, args_dev, args_hst, kwargs, kwargs_hst: None
    builder = interpreter.InterpreterBuilder
    if getattr(builder, "_kforge_bf16_dot", False):
        return
    create_dot = builder.create_dot

    def widened(handle):
        if handle.dtype.scalar == tl.bfloat16:
            data = (handle.data.astype(np.uint32) << 16).view(np.float32)
            return interpreter.TensorHandle(data, tl.float32)
        return handle

    def create_dot_bf16(self, a, b, d, input_precision, max_num_imprecise_acc):
        return create_dot(self, widened(a), widened(b), d, input_precision, max_num_imprecise_acc)

    builder.create_dot = create_dot_bf16
    builder._kforge_bf16_dot = True


# Poison for the guard zones: a byte pattern no kernel writes by accident
# (as f32 and f16 it is a NaN-free ordinary value, so that reading it does
# not trap, and writing 0 or a result over it shows).
_POISON = 0xA5


class GuardedArray:
    """An array with guard_elements poisoned elements on each side."""

    def __init__(self, name, data, guard):
        self.name, self.guard = name, guard
        n = data.size
        self.buffer = np.empty(n + 2 * guard, dtype=data.dtype)
        self.buffer.view(np.uint8)[:] = _POISON
        self.body = self.buffer[guard:guard + n]
        self.body[:] = data.reshape(-1)
        self.shape = data.shape

    def violations(self):
        out = []
        raw = self.buffer.view(np.uint8)
        size = self.buffer.itemsize
        before = raw[:self.guard * size]
        after = raw[(self.guard + self.body.size) * size:]
        for side, zone in (("before", before), ("after", after)):
            touched = np.nonzero(zone != _POISON)[0]
            if touched.size:
                elements = np.unique(touched // size)
                nearest = (self.guard - 1 - int(elements[-1])) if side == "before" else int(elements[0])
                out.append({"argument": self.name, "side": side, "elements": int(elements.size),
                            "nearest": nearest})
        return out


# A fresh non-zeroed workspace's bytes: as f32 a NaN, as an integer -1.
_UNWRITTEN = 0xFF


def _workspace(i, arg, guard):
    """A workspace argument's guarded buffer and its element type's name."""
    name, dtype_name, elements = arg["name"], arg.get("dtype"), arg.get("elements")
    if dtype_name not in _RAW_DTYPES:
        raise RequestError(f"request: args[{i}] ({name}): a workspace needs a dtype of {', '.join(_RAW_DTYPES)}, "
                           f"got {dtype_name!r}")
    if not isinstance(elements, int) or isinstance(elements, bool) or elements < 0:
        raise RequestError(f"request: args[{i}] ({name}): elements: expected a count, got {elements!r}")
    data = np.empty(max(elements, 1), dtype=_RAW_DTYPES[dtype_name])
    data.view(np.uint8)[:] = 0 if arg.get("zeroed") else _UNWRITTEN
    return GuardedArray(name, data, guard), dtype_name


def _left_non_zero(zeroed):
    """[{workspace, nonzero, first, value}] for zeroed workspaces the
    kernel did not leave all zero."""
    out = []
    for g in zeroed:
        nonzero = np.nonzero(g.body.view(np.uint8).reshape(g.body.size, -1).any(axis=1))[0]
        if nonzero.size:
            first = int(nonzero[0])
            out.append({"workspace": g.name, "nonzero": int(nonzero.size), "first": first,
                        "value": g.body[first].item()})
    return out


def _load_kernel(source_path, kernel):
    from .compile import load_kernel
    return load_kernel(source_path, kernel)


# Triton element type -> the NumPy dtype of a raw file's elements (bf16 as
# its uint16 bit patterns).
_RAW_DTYPES = {"fp16": np.float16, "bf16": np.uint16, "fp32": np.float32, "fp64": np.float64,
               "i8": np.int8, "u8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


def _load_array(i, arg):
    """An array argument's data and declared dtype: a .npy file (`npy`), or
    a file of raw elements (`raw`) whose `dtype` is a Triton element type."""
    name = arg["name"]
    if "raw" in arg:
        dtype_name = arg.get("dtype")
        if dtype_name not in _RAW_DTYPES:
            raise RequestError(f"request: args[{i}] ({name}): a raw array needs a dtype of "
                               f"{', '.join(_RAW_DTYPES)}, got {dtype_name!r}")
        raw = np.fromfile(arg["raw"], dtype=np.uint8)
        size = np.dtype(_RAW_DTYPES[dtype_name]).itemsize
        if raw.size % size:
            raise RequestError(f"request: args[{i}] ({name}): {raw.size} bytes are not whole {dtype_name} elements")
        return raw.view(_RAW_DTYPES[dtype_name]), dtype_name
    if "npy" not in arg:
        raise RequestError(f"request: args[{i}] ({name}): an array needs npy or raw")
    return np.load(arg["npy"]), arg.get("dtype")


def run_request(request):
    start = time.monotonic()
    for key in ("source_path", "kernel"):
        require(request, key, str, "a string")
    args = require(request, "args", list, "a list of arguments")
    grid = require(request, "grid", list, "[x, y, z]")
    constexprs = request.get("constexprs", {}) or {}
    guard = int(request.get("guard_elements", 1024))
    if not 1 <= len(grid) <= 3 or not all(isinstance(g, int) and g >= 0 for g in grid):
        raise RequestError(f"request: grid: expected 1 to 3 non-negative integers, got {grid}")
    grid = tuple(grid) + (1,) * (3 - len(grid))
    kernel = request["kernel"]
    fn = _load_kernel(request["source_path"], kernel)
    _patch_interpreter()

    call, guarded, outputs, zeroed = {}, [], [], []
    for i, arg in enumerate(args):
        if not isinstance(arg, dict) or "name" not in arg or arg.get("kind") not in ("array", "scalar", "workspace"):
            raise RequestError(f"request: args[{i}]: expected {{name, kind: array | scalar | workspace, ...}}")
        name = arg["name"]
        if arg["kind"] == "workspace":
            g, dtype_name = _workspace(i, arg, guard)
            guarded.append(g)
            if arg.get("zeroed"):
                zeroed.append(g)
            call[name] = HostArray(g.body, "bfloat16" if dtype_name == "bf16" else _TORCH_NAMES[g.body.dtype])
        elif arg["kind"] == "array":
            data, dtype_name = _load_array(i, arg)
            if dtype_name == "bf16":
                if data.dtype != np.uint16:
                    raise RequestError(f"request: args[{i}] ({name}): bf16 arrays are uint16 bit patterns, "
                                       f"got {data.dtype}")
                torch_name = "bfloat16"
            elif data.dtype in _TORCH_NAMES:
                torch_name = _TORCH_NAMES[data.dtype]
            else:
                raise RequestError(f"request: args[{i}] ({name}): unsupported array dtype {data.dtype}")
            g = GuardedArray(name, np.ascontiguousarray(data), guard)
            guarded.append(g)
            call[name] = HostArray(g.body, torch_name)
            if arg.get("out"):
                outputs.append((name, g, arg.get("out_npy", arg.get("raw", arg.get("npy")))))
        else:
            value, dtype = arg.get("value"), arg.get("dtype", "fp32")
            if dtype in ("i32", "i64"):
                call[name] = int(value)
            elif dtype in ("fp32", "f32"):
                call[name] = float(value)
            else:
                raise RequestError(f"request: args[{i}] ({name}): scalar dtype {dtype} (i32, i64, fp32)")
    missing = [n for n in fn.arg_names if n not in call and n not in constexprs]
    extra = [n for n in list(call) + list(constexprs) if n not in fn.arg_names]
    if missing or extra:
        raise RequestError(f"kernel {kernel}: arguments: missing {missing or 'none'}, unknown {extra or 'none'}")
    call.update(constexprs)
    try:
        fn[grid](**call)
    except Exception as e:  # noqa: BLE001 - the kernel's failure is the result
        text = str(e).strip().splitlines()
        return {"ok": False, "error": f"kernel {kernel}: interpreter: {type(e).__name__}: "
                                      f"{text[-1] if text else ''}", "outputs": {},
                "guard_violations": [v for g in guarded for v in g.violations()],
                "programs": grid[0] * grid[1] * grid[2], "seconds": round(time.monotonic() - start, 3)}
    violations = [v for g in guarded for v in g.violations()]
    left = _left_non_zero(zeroed)
    written = {}
    for name, g, path in outputs:
        if path.endswith(".npy"):
            np.save(path, g.body.reshape(g.shape))
        else:
            g.body.tofile(path)
        written[name] = path
    errors = []
    if violations:
        errors.append(f"kernel {kernel}: wrote outside " + ", ".join(
            f"{v['argument']} ({v['elements']} elements {v['side']})" for v in violations))
    for w in left:
        errors.append(f"kernel {kernel}: left workspace {w['workspace']} non-zero: {w['nonzero']} elements, the "
                      f"first at {w['first']} ({w['value']})")
    return {"ok": not errors, "error": "; ".join(errors) or None, "outputs": written,
            "guard_violations": violations, "workspace_violations": left,
            "programs": grid[0] * grid[1] * grid[2], "seconds": round(time.monotonic() - start, 3)}


def main(argv=None):
    """stdin to stdout, or `REQUEST RESPONSE` files (how kforge's C++ runs it)."""
    argv = sys.argv[1:] if argv is None else argv
    # What the kernel prints (tl.device_print) goes to stderr: stdout
    # carries the response alone.
    response_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        if len(argv) == 2:
            with open(argv[0]) as source:
                request = read_request(source)
        else:
            request = read_request()
        response = run_request(request)
    except RequestError as e:
        response = {"ok": False, "error": str(e), "outputs": {}, "guard_violations": [], "programs": 0,
                    "seconds": 0.0}
    sys.stdout.flush()
    with os.fdopen(response_fd, "w") as out:
        if len(argv) == 2:
            with open(argv[1], "w") as target:
                write_response(response, target)
        else:
            write_response(response, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
