"""Compile one @triton.jit kernel for one target: `python3 -m kforge_triton.compile`.

Request (one JSON object on stdin):
  source_path  the kernel's .py file
  kernel       the @triton.jit function's name in it
  signature    {argument: Triton type}, every argument that is not a constexpr
               ("*fp16", "*bf16", "*fp32", "i32", "i64", "fp32", ...)
  constexprs   {argument: value} for every tl.constexpr argument
  specialization  {"divisible_by_16": [argument, ...]} (optional): the
               arguments the caller promises are multiples of 16 (pointers:
               16-byte aligned); nothing is assumed otherwise
  options      {num_warps, num_stages, num_ctas, enable_fp_fusion; CUDA:
               maxnreg; HIP: waves_per_eu, matrix_instr_nonkdim, kpack}
  target       "cuda:sm_80" | "cuda:sm_86" | "cuda:sm_89" | "cuda:sm_90a" |
               "hip:gfx90a" | "hip:gfx942" | "hip:gfx950"
  out_dir      where the binary and the assembly are written
  timeout_s    (optional, default 300) the compile is killed after this long

Response (one JSON object on stdout; exit 0 whenever it could be written):
  ok, error (null or a sentence naming the kernel and the configuration),
  binary_path, format ("cubin" | "hsaco"), asm_path (PTX | AMDGCN),
  metadata {name, shared, num_warps, num_stages, num_ctas,
  global_scratch_size, global_scratch_align, profile_scratch_size, ...,
  target, hash, triton_version}, triton_version, backend_hash,
  options_used (every option passed, defaults included), cache_key,
  log (what the compiler printed), seconds.

Launch ABI of the binary (Triton 3.9): the non-constexpr arguments in order,
then two pointers (global scratch, profile scratch), each null when the
metadata's size is 0.
"""

import hashlib
import importlib.util
import json
import os
import re
import signal
import sys
import tempfile
import time

from .protocol import (BACKEND_OPTIONS, DEFAULT_OPTIONS, TARGETS, RequestError, read_request, require,
                       write_response)

LOG_LIMIT = 64 * 1024


def _sha256(text):
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def triton_identity(target):
    """(triton_version, backend_hash) for a kforge target name: the backend
    hash covers the backend's own tools (ptxas's version, for CUDA)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    backend, arch, warp = TARGETS[target]
    return triton.__version__, _sha256(make_backend(GPUTarget(backend, arch, warp)).hash())[:32]


def cache_key(request, triton_version=None, backend_hash=None):
    """A key for the compiled binary: Triton's version, the backend's hash,
    the source's hash and everything of the request that shapes the code
    (kernel, signature, constexprs, specialization, options with defaults
    applied, target). out_dir and timeout_s are not part of it. Pass the
    version and backend hash a response reported to avoid importing Triton."""
    target = request["target"]
    if triton_version is None or backend_hash is None:
        triton_version, backend_hash = triton_identity(target)
    with open(request["source_path"], "rb") as f:
        source_hash = _sha256(f.read())
    backend = TARGETS[target][0]
    options = dict(DEFAULT_OPTIONS[backend], **request.get("options", {}))
    spec = request.get("specialization", {}) or {}
    key = {
        "triton_version": triton_version,
        "backend_hash": backend_hash,
        "source": source_hash,
        "kernel": request["kernel"],
        "signature": request.get("signature", {}),
        "constexprs": request.get("constexprs", {}),
        "divisible_by_16": sorted(spec.get("divisible_by_16", [])),
        "options": options,
        "target": target,
    }
    return _sha256(json.dumps(key, sort_keys=True))


def _describe(request):
    """The kernel and configuration, for error messages."""
    parts = [f"{k}={v}" for k, v in sorted((request.get("constexprs") or {}).items())]
    parts += [f"{k}={v}" for k, v in sorted((request.get("options") or {}).items())]
    return f"kernel {request.get('kernel')} ({', '.join(parts) or 'no parameters'}) for {request.get('target')}"


def load_kernel(source_path, kernel):
    """Imports source_path as a fresh module and returns its JITFunction `kernel`."""
    if not os.path.isfile(source_path):
        raise RequestError(f"source_path: {source_path}: no such file")
    name = "kforge_triton_src_" + _sha256(os.path.abspath(source_path))[:16]
    spec = importlib.util.spec_from_file_location(name, source_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise RequestError(f"kernel {kernel}: {source_path}:{e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - anything the module raises is the template's fault
        raise RequestError(f"kernel {kernel}: importing {source_path} failed: {type(e).__name__}: {e}") from None
    fn = getattr(module, kernel, None)
    if fn is None:
        raise RequestError(f"kernel {kernel}: {source_path} defines no '{kernel}'")
    if not hasattr(fn, "arg_names") or not hasattr(fn, "fn"):
        raise RequestError(f"kernel {kernel}: {source_path}: '{kernel}' is not a @triton.jit function")
    return fn


def _check(request):
    for key, kind in (("source_path", str), ("kernel", str), ("target", str), ("out_dir", str)):
        require(request, key, kind, "a string")
    signature = require(request, "signature", dict, "an object {argument: type}")
    constexprs = request.get("constexprs", {}) or {}
    options = request.get("options", {}) or {}
    if not isinstance(constexprs, dict) or not isinstance(options, dict):
        raise RequestError("request: constexprs and options: expected objects")
    target = request["target"]
    if target not in TARGETS:
        raise RequestError(f"{_describe(request)}: target: unsupported '{target}' (known: {', '.join(TARGETS)})")
    backend = TARGETS[target][0]
    unknown = sorted(set(options) - set(BACKEND_OPTIONS[backend]))
    if unknown:
        raise RequestError(f"{_describe(request)}: options: {', '.join(unknown)} not taken by the {backend} backend "
                           f"(takes {', '.join(BACKEND_OPTIONS[backend])})")
    spec = request.get("specialization", {}) or {}
    if not isinstance(spec, dict) or set(spec) - {"divisible_by_16"}:
        raise RequestError("request: specialization: expected {\"divisible_by_16\": [argument, ...]}")
    return signature, constexprs, options, spec.get("divisible_by_16", [])


def _build(request):
    """Compiles (in the calling process) and returns the response."""
    signature, constexprs, options, divisible = _check(request)
    kernel = request["kernel"]
    fn = load_kernel(request["source_path"], kernel)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    const_names = {p.name for p in fn.params if p.is_constexpr}
    problems = []
    for name in names:
        if name in const_names and name not in constexprs:
            problems.append(f"constexpr {name} has no value in constexprs")
        if name not in const_names and name not in signature:
            problems.append(f"argument {name} has no type in signature")
    for name in list(signature) + list(constexprs) + list(divisible):
        if name not in names:
            problems.append(f"'{name}' is not an argument of {kernel} ({', '.join(names)})")
    for name in constexprs:
        if name in names and name not in const_names:
            problems.append(f"'{name}' is given in constexprs but is not a tl.constexpr argument")
    if problems:
        raise RequestError(f"{_describe(request)}: " + "; ".join(problems))
    full_signature = {n: ("constexpr" if n in const_names else signature[n]) for n in names}
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in divisible}
    backend, arch, warp = TARGETS[request["target"]]
    used = dict(DEFAULT_OPTIONS[backend], **options)
    src = ASTSource(fn, full_signature, dict(constexprs), attrs)
    compiled = triton.compile(src, target=GPUTarget(backend, arch, warp), options=dict(used))

    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    fmt, asm_kind, asm_ext = ("cubin", "ptx", "ptx") if backend == "cuda" else ("hsaco", "amdgcn", "amdgcn")
    binary_path = os.path.join(out_dir, f"{kernel}.{fmt}")
    asm_path = os.path.join(out_dir, f"{kernel}.{asm_ext}")
    with open(binary_path, "wb") as f:
        f.write(compiled.asm[fmt])
    with open(asm_path, "w") as f:
        f.write(compiled.asm[asm_kind])
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    metadata = {k: v for k, v in meta.items() if k not in ("extern_libs", "target")}
    metadata["target"] = request["target"]
    metadata["triton_target"] = str(meta.get("target"))
    metadata = json.loads(json.dumps(metadata, default=str))
    version, backend_hash = triton_identity(request["target"])
    parameters = [{"name": n, "type": signature[n]} for n in names if n not in const_names]
    # The launch record a C++ program loads the binary with, no Python needed
    # (runtime/kinds/triton_binary.hpp).
    record = {"kernel": kernel, "format": fmt, "binary": os.path.basename(binary_path), "parameters": parameters,
              "metadata": metadata, "target": request["target"], "triton_version": version}
    record_path = os.path.join(out_dir, f"{kernel}.json")
    with open(record_path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    return {
        "ok": True, "error": None, "binary_path": binary_path, "format": fmt, "asm_path": asm_path,
        "record_path": record_path, "parameters": parameters,
        "metadata": metadata, "triton_version": version, "backend_hash": backend_hash,
        "options_used": used, "cache_key": cache_key(request, version, backend_hash),
    }


def _failure(request, error, log="", seconds=0.0):
    return {"ok": False, "error": error, "binary_path": None, "format": None, "asm_path": None, "record_path": None,
            "parameters": None, "metadata": None,
            "triton_version": None, "backend_hash": None, "options_used": request.get("options"),
            "cache_key": None, "log": log, "seconds": seconds}


def compile_request(request):
    """Compiles in a forked child (its own process group, killed with its
    ptxas when timeout_s passes) and returns the response object. What the
    compiler prints goes to the response's log, never to stdout."""
    start = time.monotonic()
    try:
        _check(request)
        timeout = float(request.get("timeout_s", 300))
    except RequestError as e:
        return _failure(request, str(e))
    except (TypeError, ValueError):
        return _failure(request, "request: timeout_s: expected a number")
    with tempfile.TemporaryDirectory(prefix="kforge-triton-") as tmp:
        log_path, result_path = os.path.join(tmp, "log"), os.path.join(tmp, "result.json")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: compile, write the result, never return
            code = 0
            try:
                os.setpgid(0, 0)
                fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                try:
                    response = _build(request)
                except RequestError as e:
                    response = _failure(request, str(e))
                except Exception as e:  # noqa: BLE001 - a compile error is a result, not a crash
                    message = str(e).strip().splitlines()
                    detail = message[-1] if message else ""
                    # Triton's CompilationError starts "at L:C:" (line and column in the function).
                    where = re.match(r"at (\d+:\d+):", message[0]) if message else None
                    if where:
                        detail = f"{request['source_path']}: {request['kernel']} line {where.group(1)}: {detail}"
                    response = _failure(request, f"{_describe(request)}: {type(e).__name__}: {detail}")
                    import traceback
                    traceback.print_exc()
                with open(result_path, "w") as f:
                    json.dump(response, f, default=str)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = start + timeout
        status = None
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                status = None
                break
            time.sleep(0.02)
        log = ""
        if os.path.exists(log_path):
            with open(log_path, errors="replace") as f:
                log = f.read()
            if len(log) > LOG_LIMIT:
                log = log[:LOG_LIMIT // 2] + "\n...\n" + log[-LOG_LIMIT // 2:]
        seconds = round(time.monotonic() - start, 3)
        if status is None:
            return _failure(request, f"{_describe(request)}: compile timed out after {timeout:g} s", log, seconds)
        if not os.path.exists(result_path):
            why = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exited {os.WEXITSTATUS(status)}")
            return _failure(request, f"{_describe(request)}: the compiler process {why}", log, seconds)
        with open(result_path) as f:
            response = json.load(f)
    response["log"] = log
    response["seconds"] = seconds
    return response


def main(argv=None):
    """stdin to stdout, or `REQUEST RESPONSE` files (how kforge's C++ runs it)."""
    argv = sys.argv[1:] if argv is None else argv
    source = open(argv[0]) if len(argv) == 2 else None
    try:
        request = read_request(source)
    except RequestError as e:
        request, response = {}, _failure({}, str(e))
    else:
        response = compile_request(request)
    finally:
        if source:
            source.close()
    if len(argv) == 2:
        with open(argv[1], "w") as out:
            write_response(response, out)
    else:
        write_response(response)
    return 0


if __name__ == "__main__":
    sys.exit(main())
