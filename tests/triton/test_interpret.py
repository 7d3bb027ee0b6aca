"""The corpus under Triton's interpreter (kforge_triton.interpret, a fresh
process per run, NumPy arrays, no torch) against NumPy references at small
shapes with tails in every dimension; guard zones catch a planted write past
the output."""

import os

import numpy as np
import pytest

from triton_testing import CORPUS, DATA, run_helper, triton_missing
from kforge_triton.manifest import load_manifest

pytestmark = pytest.mark.skipif(triton_missing() is not None, reason=str(triton_missing()))


def to_bf16_bits(x):
    """f32 -> bf16 bit patterns (uint16), round to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def stored(x, dtype):
    """(array to save, its values as f64) for x stored in dtype."""
    if dtype == "bf16":
        bits = to_bf16_bits(x)
        return bits, from_bf16_bits(bits).astype(np.float64)
    a = x.astype({"f16": np.float16, "f32": np.float32}[dtype])
    return a, a.astype(np.float64)


def run(manifest, config, problem, tensors, scalars, outputs, tmp_path, layout="NN", dtype="f32",
        source_path=None):
    """Saves tensors, runs the interpreter, returns (response, {output: array})."""
    bindings = dict(scalars)
    for name, array in tensors.items():
        path = str(tmp_path / f"{name}.npy")
        np.save(path, array)
        bindings[name] = {"npy": path, "out": name in outputs, "out_npy": str(tmp_path / f"{name}.out.npy")}
    request = manifest.interpret_request(config, problem, bindings, layout, dtype)
    if source_path:
        request["source_path"] = source_path
    r = run_helper("interpret", request)
    got = {name: np.load(r["outputs"][name]) for name in outputs if name in r.get("outputs", {})}
    return r, got


GEMM = os.path.join(CORPUS, "gemm_dot", "manifest.json")


@pytest.mark.parametrize("layout,dtype,beta,overrides", [
    ("NN", "f16", 0.0, {}),
    ("NT", "f16", 0.0, {}),
    ("TN", "f16", 0.0, {}),
    ("TT", "f16", 0.0, {}),
    ("NT", "bf16", -0.5, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 64, "GROUP_M": 4}),
    ("TN", "bf16", 0.25, {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 1}),
])
def test_gemm(tmp_path, layout, dtype, beta, overrides):
    m = load_manifest(GEMM)
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    M, N, K, batch = 70, 45, 70, 2  # tails in M, N and K for every block size
    rng = np.random.default_rng(1)
    a_shape = (batch, K, M) if layout[0] == "T" else (batch, M, K)
    b_shape = (batch, N, K) if layout[1] == "T" else (batch, K, N)
    a, a64 = stored(rng.standard_normal(a_shape), dtype)
    b, b64 = stored(rng.standard_normal(b_shape), dtype)
    op_a = a64.transpose(0, 2, 1) if layout[0] == "T" else a64
    op_b = b64.transpose(0, 2, 1) if layout[1] == "T" else b64
    c0 = rng.standard_normal((batch, M, N)).astype(np.float32) if beta else np.full((batch, M, N), np.nan, np.float32)
    alpha = 1.5
    want = alpha * (op_a @ op_b) + (beta * c0.astype(np.float64) if beta else 0.0)
    r, got = run(m, config, {"M": M, "N": N, "K": K, "batch": batch}, {"A": a, "B": b, "C": c0},
                 {"alpha": alpha, "beta": beta}, ["C"], tmp_path, layout, dtype)
    assert r["ok"], r
    assert r["programs"] == -(-M // config["BLOCK_M"]) * -(-N // config["BLOCK_N"]) * batch
    scale = alpha * (np.abs(op_a) @ np.abs(op_b)) + abs(beta) * np.abs(np.nan_to_num(c0))
    err = np.abs(got["C"] - want)
    assert np.all(err <= 1e-5 * scale + 1e-6), f"max error {err.max()} ({layout}, {dtype})"


def _gemm_case(m, config, layout, dtype, beta, M, N, K, batch, tmp_path, source_path=None):
    """Runs a gemm template on random operands; returns (response, C, want, scale)."""
    rng = np.random.default_rng(11)
    a_shape = (batch, K, M) if layout[0] == "T" else (batch, M, K)
    b_shape = (batch, N, K) if layout[1] == "T" else (batch, K, N)
    a, a64 = stored(rng.standard_normal(a_shape), dtype)
    b, b64 = stored(rng.standard_normal(b_shape), dtype)
    op_a = a64.transpose(0, 2, 1) if layout[0] == "T" else a64
    op_b = b64.transpose(0, 2, 1) if layout[1] == "T" else b64
    c0 = rng.standard_normal((batch, M, N)).astype(np.float32) if beta else np.full((batch, M, N), np.nan, np.float32)
    alpha = 1.5
    want = alpha * (op_a @ op_b) + (beta * c0.astype(np.float64) if beta else 0.0)
    problem = {"M": M, "N": N, "K": K, "batch": batch}
    assert not m.unmet(config, problem, layout, dtype) and not m.unmet(config, problem, layout, dtype, field="envelope")
    r, got = run(m, config, problem, {"A": a, "B": b, "C": c0}, {"alpha": alpha, "beta": beta}, ["C"], tmp_path,
                 layout, dtype, source_path)
    scale = alpha * (np.abs(op_a) @ np.abs(op_b)) + abs(beta) * np.abs(np.nan_to_num(c0))
    return r, got.get("C"), want, scale


SPLITK = os.path.join(CORPUS, "gemm_splitk", "manifest.json")


@pytest.mark.parametrize("layout,dtype,beta,overrides", [
    ("NN", "f16", 0.0, {}),  # K = 300: 4 slices of 128, the third one short, the last one empty
    ("TN", "bf16", 0.25, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 8}),
    ("NT", "f16", -0.5, {"BLOCK_N": 128, "BLOCK_K": 128, "SPLIT_K": 2}),
    ("TT", "bf16", -0.5, {"SPLIT_K": 1}),
])
def test_gemm_splitk(tmp_path, layout, dtype, beta, overrides):
    m = load_manifest(SPLITK)
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    M, N, K, batch = 19, 70, 300, 2  # tails in M, N and K for every block size
    r, got, want, scale = _gemm_case(m, config, layout, dtype, beta, M, N, K, batch, tmp_path)
    assert r["ok"], r
    assert r["programs"] == -(-M // config["BLOCK_M"]) * -(-N // config["BLOCK_N"]) * batch
    err = np.abs(got - want)
    assert np.all(err <= 1e-5 * scale + 1e-6), f"max error {err.max()} ({layout}, {dtype})"


TMA = os.path.join(CORPUS, "gemm_persistent_tma", "manifest.json")


@pytest.mark.parametrize("layout,dtype,beta", [("NN", "f16", 0.0), ("NT", "bf16", -0.5), ("TN", "f16", 0.25),
                                               ("TT", "bf16", 1.0)])
def test_gemm_persistent_tma(tmp_path, layout, dtype, beta):
    # The interpreter runs device-side tensor descriptors (it checks their
    # 16-byte stride alignment, reads out-of-range box elements as zero and
    # drops out-of-range stores, as TMA does). 3 programs for 2 x 4 tiles:
    # each program takes more than one tile, across the batch boundary.
    m = load_manifest(TMA)
    config = dict(m.default_config("cuda:sm_90a"), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, NUM_SMS=3)
    M, N, K, batch = 72, 104, 56, 2  # tails in M, N and K; row strides 16-byte multiples (the envelope)
    r, got, want, scale = _gemm_case(m, config, layout, dtype, beta, M, N, K, batch, tmp_path)
    assert r["ok"], r
    assert r["programs"] == 3 and r["guard_violations"] == []
    err = np.abs(got - want)
    assert np.all(err <= 1e-5 * scale + 1e-6), f"max error {err.max()} ({layout}, {dtype})"


def test_gemm_tma_envelope_refuses_unaligned_rows():
    m = load_manifest(TMA)
    config = m.default_config("cuda:sm_90a")
    assert m.unmet(config, {"M": 64, "N": 44, "K": 64}, "NN", "f16", field="envelope") == ["trans_b == 1 || N % 8 == 0"]
    assert m.unmet(config, {"M": 64, "N": 64, "K": 60}, "NT", "f16", field="envelope") == [
        "trans_a == 1 || K % 8 == 0", "trans_b == 0 || K % 8 == 0"]


@pytest.mark.parametrize("family,bug", [
    ("gemm_splitk", ("ka = offs_s[:, None, None] * ks", "ka = offs_s[:, None, None] * BLOCK_K")),
    ("attention_decode_splitkv", ("l_row = tl.sum(l_i * w, 0)", "l_row = tl.sum(l_i, 0)")),
])
def test_planted_bug_is_caught(tmp_path, family, bug):
    """A copy of the kernel with one planted mistake (A's slice offset of
    split-K; the combine's rescaling of the chunks' sums) fails the same
    check the template passes."""
    src = open(os.path.join(CORPUS, family, "kernel.py")).read()
    assert src.count(bug[0]) == 1
    planted = tmp_path / "planted.py"
    planted.write_text(src.replace(bug[0], bug[1]))
    if family == "gemm_splitk":
        m = load_manifest(SPLITK)
        r, got, want, scale = _gemm_case(m, m.default_config("cuda:sm_80"), "NN", "f16", 0.0, 19, 70, 300, 1,
                                         tmp_path, str(planted))
        assert r["ok"] and not np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)
    else:
        m = load_manifest(DECODE)
        problem = {"B": 1, "H": 1, "S": 5, "SK": 150, "D": 64, "mask": 0}
        tensors, scale, want = _attention_reference(1, 1, 5, 150, 64, 0, "f16")
        r, got = run(m, m.default_config("cuda:sm_80"), problem, tensors, {"scale": scale}, ["O"], tmp_path,
                     dtype="f16", source_path=str(planted))
        assert r["ok"] and not np.allclose(got["O"], want, rtol=1e-4, atol=2e-5)


def _row_problem(rows, cols, dtype, seed):
    rng = np.random.default_rng(seed)
    return stored(rng.standard_normal((rows, cols)) * 3, dtype)


@pytest.mark.parametrize("dtype,overrides", [("f32", {}), ("f16", {"BLOCK_N": 128, "ROWS": 2, "num_warps": 1}),
                                             ("bf16", {"BLOCK_N": 256, "ROWS": 4})])
def test_rmsnorm(tmp_path, dtype, overrides):
    m = load_manifest(os.path.join(CORPUS, "rmsnorm_row", "manifest.json"))
    rows, cols = 7, 77  # the row shorter than the block; rows not a multiple of ROWS
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    assert not m.unmet(config, {"rows": rows, "cols": cols})
    x, x64 = _row_problem(rows, cols, dtype, 2)
    w, w64 = stored(np.random.default_rng(3).standard_normal(cols), dtype)
    y0 = np.full((rows, cols), np.nan, np.float32)
    eps = 1e-5
    want = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps) * w64
    r, got = run(m, config, {"rows": rows, "cols": cols}, {"X": x, "W": w, "Y": y0}, {"eps": eps}, ["Y"],
                 tmp_path, dtype=dtype)
    assert r["ok"], r
    np.testing.assert_allclose(got["Y"], want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype,overrides", [("f32", {}), ("f16", {"BLOCK_N": 128, "ROWS": 4}),
                                             ("bf16", {"BLOCK_N": 1024, "ROWS": 2, "num_warps": 8})])
def test_softmax(tmp_path, dtype, overrides):
    m = load_manifest(os.path.join(CORPUS, "softmax_row", "manifest.json"))
    rows, cols = 9, 100
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    assert not m.unmet(config, {"rows": rows, "cols": cols})
    x, x64 = _row_problem(rows, cols, dtype, 4)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    r, got = run(m, config, {"rows": rows, "cols": cols}, {"X": x, "Y": np.full((rows, cols), np.nan, np.float32)},
                 {}, ["Y"], tmp_path, dtype=dtype)
    assert r["ok"], r
    np.testing.assert_allclose(got["Y"], want, rtol=2e-5, atol=1e-7)


def _attention_reference(B, H, S, SK, D, mask, dtype, seed=7):
    rng = np.random.default_rng(seed)
    q, q64 = stored(rng.standard_normal((B, H, S, D)), dtype)
    k, k64 = stored(rng.standard_normal((B, H, SK, D)), dtype)
    v, v64 = stored(rng.standard_normal((B, H, SK, D)), dtype)
    scale = 1.0 / np.sqrt(D)
    s = scale * q64 @ k64.transpose(0, 1, 3, 2)
    if mask:
        i, j = np.arange(S)[:, None], np.arange(SK)[None, :]
        s = np.where(j <= i + (SK - S), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return {"Q": q, "K": k, "V": v, "O": np.full((B, H, S, D), np.nan, np.float32)}, scale, \
        (p / p.sum(axis=-1, keepdims=True)) @ v64


@pytest.mark.parametrize("dtype,mask,D,overrides", [
    ("f16", 0, 24, {"BLOCK_D": 32}),
    ("f16", 1, 24, {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_D": 32}),
    ("bf16", 1, 24, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_D": 32}),
    ("f32", 0, 24, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 32}),
    ("f16", 1, 64, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64}),
    ("bf16", 0, 128, {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_D": 128}),
])
def test_attention(tmp_path, dtype, mask, D, overrides):
    m = load_manifest(os.path.join(CORPUS, "attention_flash", "manifest.json"))
    B, H, S, SK = 1, 2, 37, 45  # tails in queries and keys (and the head dimension at D = 24)
    problem = {"B": B, "H": H, "S": S, "SK": SK, "D": D, "mask": mask}
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    assert not m.unmet(config, problem)
    tensors, scale, want = _attention_reference(B, H, S, SK, D, mask, dtype)
    r, got = run(m, config, problem, tensors, {"scale": scale}, ["O"], tmp_path, dtype=dtype)
    assert r["ok"], r
    assert r["programs"] == -(-S // config["BLOCK_M"]) * B * H
    np.testing.assert_allclose(got["O"], want, rtol=1e-4, atol=2e-5)


DECODE = os.path.join(CORPUS, "attention_decode_splitkv", "manifest.json")


def _decode_case(tmp_path, manifest, B, seed, dtype, mask, S, SK, D, overrides):
    """Runs a split-KV decode template on B x 2 heads and checks O against
    NumPy; returns the run's response and the configuration."""
    m = load_manifest(manifest)
    H = 2
    problem = {"B": B, "H": H, "S": S, "SK": SK, "D": D, "mask": mask}
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    assert not m.unmet(config, problem) and not m.unmet(config, problem, field="envelope")
    tensors, scale, want = _attention_reference(B, H, S, SK, D, mask, dtype, seed=seed)
    r, got = run(m, config, problem, tensors, {"scale": scale}, ["O"], tmp_path, dtype=dtype)
    assert r["ok"], r
    np.testing.assert_allclose(got["O"], want, rtol=1e-4, atol=2e-5)
    return r, config


@pytest.mark.parametrize("dtype,mask,S,SK,D,overrides", [
    ("f16", 0, 5, 150, 64, {}),  # 150 keys: 4 chunks of 48, the last one 6 short
    ("bf16", 1, 5, 150, 128, {"SPLIT": 8, "BLOCK_N": 16, "BLOCK_D": 128}),  # chunks past the causal end are empty
    ("f32", 1, 16, 37, 40, {"SPLIT": 2, "BLOCK_N": 64}),  # tail in D; one partial block per chunk
    ("f16", 0, 1, 77, 64, {"SPLIT": 1, "BLOCK_N": 32}),  # no split: the plain online softmax
])
def test_attention_decode_splitkv(tmp_path, dtype, mask, S, SK, D, overrides):
    r, _ = _decode_case(tmp_path, DECODE, 1, 8, dtype, mask, S, SK, D, overrides)
    assert r["programs"] == 1 * 2

SPLITK_GRID = os.path.join(CORPUS, "gemm_splitk_grid", "manifest.json")
DECODE_GRID = os.path.join(CORPUS, "attention_decode_splitkv_grid", "manifest.json")


@pytest.mark.parametrize("layout,dtype,beta,overrides", [
    ("NN", "f16", 0.0, {}),  # K = 300: 4 slices of 128, the third one short, the last one empty
    ("NT", "bf16", 0.25, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 16}),  # slices 10 to 15 empty
    ("TN", "f16", -0.5, {"BLOCK_N": 128, "BLOCK_K": 128, "SPLIT_K": 2}),
    ("TT", "bf16", 0.0, {"BLOCK_K": 32, "SPLIT_K": 8}),
    ("TT", "f16", 1.0, {"SPLIT_K": 1}),
])
def test_gemm_splitk_grid(tmp_path, layout, dtype, beta, overrides):
    m = load_manifest(SPLITK_GRID)
    config = dict(m.default_config("cuda:sm_80"), **overrides)
    M, N, K, batch = 19, 70, 300, 2  # tails in M, N and K for every block size
    r, got, want, scale = _gemm_case(m, config, layout, dtype, beta, M, N, K, batch, tmp_path)
    assert r["ok"], r
    tiles = -(-M // config["BLOCK_M"]) * -(-N // config["BLOCK_N"])
    assert r["programs"] == tiles * config["SPLIT_K"] * batch
    assert r["workspace_violations"] == [] and r["guard_violations"] == []
    err = np.abs(got - want)
    assert np.all(err <= 1e-5 * scale + 1e-6), f"max error {err.max()} ({layout}, {dtype})"


@pytest.mark.parametrize("dtype,mask,S,SK,D,overrides", [
    ("f16", 0, 5, 150, 64, {}),  # 4 chunks of 48 keys, the last one 6 short
    ("bf16", 1, 5, 150, 128, {"SPLIT": 16, "BLOCK_N": 16, "BLOCK_D": 128}),  # chunks 10 to 15 empty
    ("f32", 1, 16, 37, 40, {"SPLIT": 2, "BLOCK_N": 64}),  # tail in D; one partial block per chunk
    ("f16", 0, 1, 77, 64, {"SPLIT": 1, "BLOCK_N": 32}),  # one program per head: the plain online softmax
])
def test_attention_decode_splitkv_grid(tmp_path, dtype, mask, S, SK, D, overrides):
    r, config = _decode_case(tmp_path, DECODE_GRID, 2, 9, dtype, mask, S, SK, D, overrides)
    assert r["programs"] == 2 * 2 * config["SPLIT"]
    assert r["workspace_violations"] == [] and r["guard_violations"] == []


def _planted(tmp_path, family, bug):
    src = open(os.path.join(CORPUS, family, "kernel.py")).read()
    assert src.count(bug[0]) == 1, bug[0]
    planted = tmp_path / "planted.py"
    planted.write_text(src.replace(bug[0], bug[1]))
    return str(planted)


def _grid_gemm(tmp_path, source_path):
    m = load_manifest(SPLITK_GRID)
    return _gemm_case(m, m.default_config("cuda:sm_80"), "NN", "f16", 0.0, 19, 70, 300, 1, tmp_path, source_path)


def _grid_attention(tmp_path, source_path):
    m = load_manifest(DECODE_GRID)
    problem = {"B": 1, "H": 2, "S": 5, "SK": 150, "D": 64, "mask": 1}
    tensors, scale, want = _attention_reference(1, 2, 5, 150, 64, 1, "f16")
    r, got = run(m, m.default_config("cuda:sm_80"), problem, tensors, {"scale": scale}, ["O"], tmp_path,
                 dtype="f16", source_path=source_path)
    return r, got.get("O"), want


@pytest.mark.parametrize("bug", [
    ("k_lo = split * ks", "k_lo = split * BLOCK_K"),  # A's and B's slice of K
    ("tile_partials + split * tile_elems + offs_tile", "tile_partials + offs_tile"),  # where the partial goes
])
def test_grid_gemm_planted_slice_offset_is_caught(tmp_path, bug):
    r, got, want, scale = _grid_gemm(tmp_path, _planted(tmp_path, "gemm_splitk_grid", bug))
    assert r["ok"], r
    assert not np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)


def test_grid_attention_planted_slice_offset_is_caught(tmp_path):
    bug = ("mine = head_partials + split * part_elems", "mine = head_partials")
    r, got, want = _grid_attention(tmp_path, _planted(tmp_path, "attention_decode_splitkv_grid", bug))
    assert r["ok"], r
    assert not np.allclose(got, want, rtol=1e-4, atol=2e-5, equal_nan=False)


@pytest.mark.parametrize("family,reset", [
    ("gemm_splitk_grid", "tl.store(tickets + tile, 0)"),
    ("attention_decode_splitkv_grid", "tl.store(tickets + bh, 0)"),
])
def test_planted_ticket_not_reset_is_named(tmp_path, family, reset):
    """The results are right (the last program still reduces), but the
    zeroed workspace is left dirty: the next launch would see stale tickets."""
    planted = _planted(tmp_path, family, (reset, "pass"))
    if family == "gemm_splitk_grid":
        r, got, want, scale = _grid_gemm(tmp_path, planted)
        tickets = 2 * 2  # 2 x 2 tiles of one batch
    else:
        r, got, want = _grid_attention(tmp_path, planted)
        tickets = 2  # one per head
    assert r["ok"] is False
    assert f"kernel {family}: left workspace tickets non-zero: {tickets} elements" in r["error"], r["error"]
    assert r["workspace_violations"][0]["workspace"] == "tickets"
    assert r["workspace_violations"][0]["value"] == m_split(family)


def m_split(family):
    """The default split count: a ticket left at its last draw holds it."""
    m = load_manifest(SPLITK_GRID if family == "gemm_splitk_grid" else DECODE_GRID)
    return m.default_config("cuda:sm_80")["SPLIT_K" if family == "gemm_splitk_grid" else "SPLIT"]


def test_unwritten_workspace_reads_as_nan(tmp_path):
    """A non-zeroed workspace starts as 0xFF bytes (NaN as f32): a partial
    read before any program wrote it poisons the result instead of adding 0."""
    bug = ("for s in range(SPLIT_K):", "for s in range(SPLIT_K + 1):")
    r, got, _, _ = _grid_gemm(tmp_path, _planted(tmp_path, "gemm_splitk_grid", bug))
    assert r["ok"] and np.isnan(got).any()


def test_guard_zones_catch_a_dropped_mask(tmp_path):
    m = load_manifest(os.path.join(CORPUS, "softmax_row", "manifest.json"))
    rows, cols = 3, 100
    config = dict(m.default_config("cuda:sm_80"), BLOCK_N=128)
    x, _ = _row_problem(rows, cols, "f32", 5)
    r, _ = run(m, config, {"rows": rows, "cols": cols}, {"X": x, "Y": np.zeros((rows, cols), np.float32)}, {}, ["Y"],
               tmp_path, source_path=os.path.join(DATA, "planted_no_mask.py"))
    assert r["ok"] is False
    assert r["guard_violations"] == [{"argument": "Y", "side": "after", "elements": 28, "nearest": 0}], r
    assert "softmax_row" in r["error"] and "Y" in r["error"]
    # The correct kernel, same arguments: no violation.
    r, _ = run(m, config, {"rows": rows, "cols": cols}, {"X": x, "Y": np.zeros((rows, cols), np.float32)}, {}, ["Y"],
               tmp_path)
    assert r["ok"] and r["guard_violations"] == []


def test_missing_argument_is_reported(tmp_path):
    m = load_manifest(os.path.join(CORPUS, "softmax_row", "manifest.json"))
    x, _ = _row_problem(2, 10, "f32", 6)
    np.save(tmp_path / "x.npy", x)
    request = m.interpret_request(m.default_config("cuda:sm_80"), {"rows": 2, "cols": 10},
                                  {"X": {"npy": str(tmp_path / "x.npy")}, "Y": {"npy": str(tmp_path / "x.npy")}})
    request["args"] = [a for a in request["args"] if a["name"] != "Y"]
    r = run_helper("interpret", request)
    assert not r["ok"] and "kernel softmax_row" in r["error"] and "'Y'" in r["error"], r
