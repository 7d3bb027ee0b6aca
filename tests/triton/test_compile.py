"""Every corpus template compiles for those of cuda:sm_80, cuda:sm_90a and
hip:gfx942 it targets at its default and two more configurations, and the
GEMMs' code uses the tensor cores (SASS read with the nvdisasm in Triton's
wheel; AMDGCN text), the persistent GEMM TMA as well.
The helper's protocol: one JSON request, one JSON response, handled errors
are ok false naming the kernel, exit 0."""

import os
import re
import subprocess

import pytest

from triton_testing import CORPUS, DATA, corpus_manifests, run_helper, triton_missing

pytestmark = pytest.mark.skipif(triton_missing() is not None, reason=str(triton_missing()))

TARGETS = ["cuda:sm_80", "cuda:sm_90a", "hip:gfx942"]
# Two configurations besides the default per template (parameters that do
# not apply to a target are dropped).
ALTERNATIVES = {
    "gemm_triton_dot": [
        {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 4, "num_warps": 8, "num_stages": 2,
         "waves_per_eu": 2, "matrix_instr_nonkdim": 16},
        {"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 1, "num_warps": 4, "num_stages": 4,
         "matrix_instr_nonkdim": 32},
    ],
    "rmsnorm_triton_row": [{"BLOCK_N": 4096, "ROWS": 1, "num_warps": 8}, {"BLOCK_N": 256, "ROWS": 4, "num_warps": 1}],
    "softmax_triton_row": [{"BLOCK_N": 4096, "ROWS": 1, "num_warps": 8}, {"BLOCK_N": 256, "ROWS": 4, "num_warps": 1}],
    "attention_triton_flash": [{"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_D": 64, "num_warps": 8, "num_stages": 3},
                               {"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_D": 128, "num_warps": 2, "num_stages": 1}],
    "gemm_triton_splitk": [
        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 128, "SPLIT_K": 2, "num_warps": 4, "num_stages": 2,
         "waves_per_eu": 2},
        {"BLOCK_M": 16, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 8, "num_warps": 8, "num_stages": 4},
    ],
    "gemm_triton_persistent_tma": [
        {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 1, "NUM_SMS": 114, "num_warps": 4, "num_stages": 2},
        {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "NUM_SMS": 78, "num_warps": 8, "num_stages": 4},
    ],
    "attention_triton_decode_splitkv": [
        {"SPLIT": 8, "BLOCK_N": 16, "BLOCK_D": 64, "num_warps": 8, "num_stages": 1},
        {"SPLIT": 2, "BLOCK_N": 32, "BLOCK_D": 64, "num_warps": 2, "num_stages": 2},
    ],
    "gemm_triton_splitk_grid": [
        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 128, "SPLIT_K": 16, "num_warps": 4, "num_stages": 2,
         "waves_per_eu": 2},
        {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 2, "num_warps": 8, "num_stages": 4},
    ],
    "attention_triton_decode_splitkv_grid": [
        {"SPLIT": 16, "BLOCK_N": 64, "BLOCK_D": 64, "num_warps": 4, "num_stages": 3},
        {"SPLIT": 2, "BLOCK_N": 32, "BLOCK_D": 64, "num_warps": 2, "num_stages": 1},
    ],
}
DTYPE = {"gemm_triton_dot": "bf16", "attention_triton_flash": "f16", "gemm_triton_splitk": "bf16",
         "gemm_triton_persistent_tma": "bf16", "attention_triton_decode_splitkv": "bf16",
         "gemm_triton_splitk_grid": "bf16", "attention_triton_decode_splitkv_grid": "bf16"}
# The layout of each configuration (default NN): the persistent GEMM's is a
# constexpr, so each layout is its own code.
LAYOUTS = {"gemm_triton_persistent_tma": ["NN", "TN", "NT"]}
# The problem each template is specialized for (divisibility, constexprs
# such as attention's CAUSAL).
PROBLEMS = {
    "gemm_triton_dot": {"M": 512, "N": 512, "K": 512},
    "rmsnorm_triton_row": {"rows": 64, "cols": 1000},
    "softmax_triton_row": {"rows": 64, "cols": 1000},
    "attention_triton_flash": {"B": 1, "H": 8, "S": 256, "SK": 256, "D": 64, "mask": 1},
    "gemm_triton_splitk": {"M": 16, "N": 4096, "K": 4096},
    "gemm_triton_persistent_tma": {"M": 512, "N": 512, "K": 512},
    "attention_triton_decode_splitkv": {"B": 4, "H": 8, "S": 1, "SK": 4096, "D": 64, "mask": 1},
    "gemm_triton_splitk_grid": {"M": 16, "N": 4096, "K": 4096},
    "attention_triton_decode_splitkv_grid": {"B": 4, "H": 8, "S": 1, "SK": 4096, "D": 64, "mask": 1},
}

_results = {}


def _cases():
    from kforge_triton.manifest import load_manifest
    for path in corpus_manifests():
        m = load_manifest(path)
        assert m["name"] in ALTERNATIVES and m["name"] in PROBLEMS, f"{m['name']}: add it to ALTERNATIVES, PROBLEMS"
        for target in TARGETS:
            if target not in m["targets"]:
                continue
            for i in range(3):
                yield pytest.param(path, target, i, id=f"{m['name']}-{target}-{i}")


def compiled(path, target, index, tmp_root):
    """The compile response of one case (compiled once per session)."""
    from kforge_triton.compile import compile_request
    from kforge_triton.manifest import load_manifest
    key = (path, target, index)
    if key not in _results:
        m = load_manifest(path)
        config = m.default_config(target)
        if index:
            names = m.parameter_names(target)
            config.update({k: v for k, v in ALTERNATIVES[m["name"]][index - 1].items() if k in names})
        out = os.path.join(tmp_root, m["name"], target.replace(":", "_"), str(index))
        layout = LAYOUTS.get(m["name"], ["NN"] * 3)[index]
        request = m.compile_request(config, target, DTYPE.get(m["name"], "f16"), out, PROBLEMS[m["name"]], layout,
                                    timeout_s=300)
        _results[key] = (config, compile_request(request))
    return _results[key]


@pytest.fixture(scope="session")
def tmp_root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("triton-compile"))


@pytest.mark.parametrize("path,target,index", list(_cases()))
def test_compiles(path, target, index, tmp_root):
    config, r = compiled(path, target, index, tmp_root)
    assert r["ok"], f"{config}: {r['error']}\n{r['log'][-3000:]}"
    assert r["format"] == ("cubin" if target.startswith("cuda") else "hsaco")
    assert os.path.getsize(r["binary_path"]) > 0 and os.path.getsize(r["asm_path"]) > 0
    md = r["metadata"]
    assert md["target"] == target and md["triton_version"] == r["triton_version"]
    for name in ("num_warps", "num_stages"):
        if name in config:
            assert md[name] == config[name] and r["options_used"][name] == config[name]
    assert r["options_used"]["enable_fp_fusion"] is True
    for key in ("name", "shared", "num_ctas", "global_scratch_size", "hash"):
        assert key in md


def _gemm():
    return os.path.join(CORPUS, "gemm_dot", "manifest.json")


def _nvdisasm():
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    if not os.access(tool, os.X_OK):
        pytest.skip(f"no nvdisasm in Triton's wheel ({tool})")
    return tool


def _sass_mix(cubin):
    sass = subprocess.run([_nvdisasm(), cubin], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\b([A-Z][A-Z0-9]+)(?:\.[A-Za-z0-9_.]+)?\s", sass))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_gemm_sm80_uses_hmma_and_ldsm(index, tmp_root):
    _, r = compiled(_gemm(), "cuda:sm_80", index, tmp_root)
    mix = _sass_mix(r["binary_path"])
    assert {"HMMA", "LDSM"} <= mix, sorted(mix)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_gemm_sm90a_uses_hgmma(index, tmp_root):
    config, r = compiled(_gemm(), "cuda:sm_90a", index, tmp_root)
    mix = _sass_mix(r["binary_path"])
    if config["BLOCK_M"] >= 64:
        assert "HGMMA" in mix, sorted(mix)
    else:
        # wgmma's M is 64 per warp group: a 32-row tile falls back to mma.sync.
        assert "HMMA" in mix and "HGMMA" not in mix, sorted(mix)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_gemm_gfx942_uses_mfma(index, tmp_root):
    _, r = compiled(_gemm(), "hip:gfx942", index, tmp_root)
    with open(r["asm_path"]) as f:
        assert re.search(r"\bv_mfma_f32_\w+_bf16", f.read())


def _corpus(name):
    return os.path.join(CORPUS, name, "manifest.json")


@pytest.mark.parametrize("index", [0, 1, 2])
def test_splitk_uses_the_tensor_cores(index, tmp_root):
    # The slices of K are a batched (3-D) tl.dot: mma.sync on sm_80 and on
    # sm_90a too (Triton lowers a batched dot to wgmma only for 2-D tiles).
    for target in ("cuda:sm_80", "cuda:sm_90a"):
        _, r = compiled(_corpus("gemm_splitk"), target, index, tmp_root)
        mix = _sass_mix(r["binary_path"])
        assert {"HMMA", "LDSM"} <= mix, (target, sorted(mix))
    _, r = compiled(_corpus("gemm_splitk"), "hip:gfx942", index, tmp_root)
    with open(r["asm_path"]) as f:
        assert re.search(r"\bv_mfma_f32_\w+_bf16", f.read())


@pytest.mark.parametrize("index", [0, 1, 2])
def test_persistent_tma_uses_wgmma_and_tma(index, tmp_root):
    config, r = compiled(_corpus("gemm_persistent_tma"), "cuda:sm_90a", index, tmp_root)
    mix = _sass_mix(r["binary_path"])
    assert {"HGMMA", "UTMALDG", "UTMASTG"} <= mix, sorted(mix)
    # Device-side descriptors live in Triton's global scratch: the launch
    # must pass a buffer of global_scratch_size bytes per program.
    assert r["metadata"]["global_scratch_size"] > 0, r["metadata"]


# Where a split-across-programs template hands its partial over, per
# backend: the partial's store, the barrier, the ticket's atomic.
HANDOFF = {"cuda": (r"st\.global", r"bar\.sync", r"atom\.global\S*\.acq_rel"),
           "hip": (r"(?:buffer|global)_store_\w+", r"s_barrier", r"global_atomic_add\w*")}


def _source_lines(source_text):
    """The kernel's lines of the hand-over: the stores before the barrier,
    tl.debug_barrier(), the ticket's tl.atomic_add."""
    lines = source_text.splitlines()
    barrier = next(i for i, t in enumerate(lines, 1) if "tl.debug_barrier()" in t)
    atomic = next(i for i, t in enumerate(lines, 1) if "tl.atomic_add(" in t)
    stores = {i for i, t in enumerate(lines[:barrier], 1) if "tl.store(" in t}
    return stores, barrier, atomic


def _attributed(asm, source_name):
    """[(kernel source line, instruction)] of the assembly, each
    instruction attributed to the kernel line of the last .loc before it
    (0 where that .loc names another file: Triton's own helpers)."""
    files = {m.group(1): m.group(0) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"[^\n]*', asm, re.M)}
    kernel_files = {n for n, text in files.items() if source_name in text}
    out, line = [], 0
    for text in asm.splitlines():
        text = text.split("//")[0].split(";")[0].strip() if not text.strip().startswith(".loc") else text.strip()
        loc = re.match(r"\.loc\s+(\d+)\s+(\d+)", text)
        if loc:
            line = int(loc.group(2)) if loc.group(1) in kernel_files else 0
        elif text and not text.startswith((".", "$", "//", ";")):
            out.append((line, text))
    return out


def _handoff_problem(asm, backend, source_name, lines):
    """None when the partial's last store comes before a barrier of the
    kernel's tl.debug_barrier() line, and that barrier before the ticket's
    atomic; else what is out of order."""
    store_re, barrier_re, atomic_re = (re.compile(r"(?:^|\s|\})" + p) for p in HANDOFF[backend])
    stores_at, barrier_at, atomic_at = lines
    code = _attributed(asm, source_name)
    atomics = [i for i, (line, t) in enumerate(code) if line == atomic_at and atomic_re.search(t)]
    if not atomics:
        return f"no {HANDOFF[backend][2]} at line {atomic_at}"
    atomic = atomics[0]
    stores = [i for i, (line, t) in enumerate(code[:atomic]) if line in stores_at and store_re.search(t)]
    barriers = [i for i, (line, t) in enumerate(code[:atomic]) if line == barrier_at and barrier_re.search(t)]
    if not stores:
        return f"no partial store (lines {sorted(stores_at)}) before the atomic"
    if not barriers:
        return f"no {HANDOFF[backend][1]} of line {barrier_at} before the atomic"
    if not stores[-1] < barriers[-1]:
        return f"the partial's last store ({code[stores[-1]][1]}) comes after the barrier"
    return None


HANDOFF_TEMPLATES = ["gemm_splitk_grid", "attention_decode_splitkv_grid"]


def _handoff_asm(template, target, tmp_root, source_text=None):
    """The compiled assembly of the template's default configuration, or of
    a copy with source_text instead of its kernel."""
    from kforge_triton.compile import compile_request
    from kforge_triton.manifest import load_manifest
    m = load_manifest(_corpus(template))
    out = os.path.join(tmp_root, "handoff", template, target.replace(":", "_"), "copy" if source_text else "own")
    request = m.compile_request(m.default_config(target), target, DTYPE[m["name"]], out, PROBLEMS[m["name"]])
    if source_text is not None:
        os.makedirs(out, exist_ok=True)
        request["source_path"] = os.path.join(out, "kernel.py")
        with open(request["source_path"], "w") as f:
            f.write(source_text)
    r = compile_request(request)
    assert r["ok"], r["error"]
    with open(r["asm_path"]) as f:
        return f.read()


@pytest.mark.parametrize("template", HANDOFF_TEMPLATES)
@pytest.mark.parametrize("target", TARGETS)
def test_partial_store_barrier_atomic_in_order(template, target, tmp_root):
    """In the code, each program's partial is stored, then the barrier of
    its tl.debug_barrier(), then the ticket's acq_rel atomic: another
    program that draws the last ticket sees the whole partial. The same
    check fails on a copy whose barrier is gone (Triton's own barrier
    before a scalar atomic, of the atomic's line, does not count)."""
    with open(os.path.join(CORPUS, template, "kernel.py")) as f:
        source = f.read()
    lines = _source_lines(source)
    backend = target.split(":")[0]
    assert _handoff_problem(_handoff_asm(template, target, tmp_root), backend, "kernel.py", lines) is None
    without = source.replace("tl.debug_barrier()", "pass  # barrier removed")
    assert without != source
    problem = _handoff_problem(_handoff_asm(template, target, tmp_root, without), backend, "kernel.py", lines)
    assert problem == f"no {HANDOFF[backend][1]} of line {lines[1]} before the atomic", problem


def _request(tmp_path, **changes):
    from kforge_triton.manifest import load_manifest
    m = load_manifest(os.path.join(CORPUS, "softmax_row", "manifest.json"))
    request = m.compile_request(m.default_config("cuda:sm_80"), "cuda:sm_80", "f16", str(tmp_path))
    request.update(changes)
    return request


def test_protocol_over_stdin(tmp_path):
    r = run_helper("compile", _request(tmp_path))
    assert r["ok"] and r["error"] is None, r
    assert r["metadata"]["name"] == "softmax_row" and r["format"] == "cubin"
    assert r["asm_path"].endswith(".ptx") and ".entry softmax_row" in open(r["asm_path"]).read()
    assert r["cache_key"] and r["backend_hash"] and r["triton_version"] == "3.9.0"


def test_cache_key(tmp_path):
    from kforge_triton.compile import cache_key
    base = _request(tmp_path)
    key = cache_key(base, "3.9.0", "h")
    assert key == cache_key(dict(base, out_dir="/elsewhere", timeout_s=1), "3.9.0", "h")
    assert key != cache_key(dict(base, options=dict(base["options"], enable_fp_fusion=False)), "3.9.0", "h")
    assert key != cache_key(dict(base, constexprs=dict(base["constexprs"], BLOCK_N=2048)), "3.9.0", "h")
    assert key != cache_key(dict(base, target="cuda:sm_90a"), "3.9.0", "h")
    assert key != cache_key(base, "3.9.1", "h") and key != cache_key(base, "3.9.0", "g")
    assert key != cache_key(dict(base, specialization={"divisible_by_16": []}), "3.9.0", "h")


def test_compile_error_names_the_kernel(tmp_path):
    request = {"source_path": os.path.join(DATA, "compile_error.py"), "kernel": "bad_shapes",
               "signature": {"X": "*fp32", "n": "i32"}, "constexprs": {"BLOCK": 128},
               "options": {"num_warps": 4}, "target": "cuda:sm_80", "out_dir": str(tmp_path)}
    r = run_helper("compile", request)
    assert r["ok"] is False and r["binary_path"] is None
    assert "kernel bad_shapes" in r["error"] and "BLOCK=128" in r["error"] and "cuda:sm_80" in r["error"], r["error"]
    assert "compile_error.py: bad_shapes line 4:4: Cannot make_shape_compatible" in r["error"], r["error"]
    assert r["log"], "the compiler's message belongs in the log"


def test_syntax_error_unknown_target_and_option(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text("import triton\n@triton.jit\ndef k(X:\n    pass\n")
    r = run_helper("compile", _request(tmp_path, source_path=str(src), kernel="k"))
    assert not r["ok"] and "kernel k" in r["error"] and "syntax error" in r["error"], r["error"]
    r = run_helper("compile", _request(tmp_path, target="cuda:sm_70"))
    assert not r["ok"] and "unsupported 'cuda:sm_70'" in r["error"] and "softmax_row" in r["error"]
    r = run_helper("compile", _request(tmp_path, options={"kpack": 2}))
    assert not r["ok"] and "kpack" in r["error"]
    r = run_helper("compile", _request(tmp_path, constexprs={}))
    assert not r["ok"] and "constexpr BLOCK_N has no value" in r["error"]


def test_timeout_kills_the_compile(tmp_path):
    from kforge_triton.compile import compile_request
    r = compile_request(_request(tmp_path, timeout_s=0.01))
    assert not r["ok"] and "timed out after 0.01 s" in r["error"] and "softmax_row" in r["error"]
