"""Tensors into and out of kforge launches: NumPy arrays (and PyTorch
tensors when PyTorch is installed) through DLPack, checked against a
float64 reference."""
import numpy as np
import pytest

from conftest import gemm_inputs, gemm_reference


def launch_gemm(lookup, a, b, c, dtype="f32"):
    m, k = a.shape
    n = b.shape[1]
    sel = lookup.select("gemm", {"M": m, "N": n, "K": k}, dtype)
    return sel, lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.0)


def test_numpy_gemm_writes_its_output_in_place(lookup):
    a, b = gemm_inputs(20, 24, 40)
    c = np.full((20, 24), np.nan, dtype=np.float32)
    sel, ms = launch_gemm(lookup, a, b, c)
    assert sel.rule == "default"
    assert ms > 0
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)


def test_numpy_f16_inputs(lookup):
    a, b = gemm_inputs(16, 16, 32, dtype=np.float16)
    c = np.zeros((16, 16), dtype=np.float32)
    launch_gemm(lookup, a, b, c, dtype="f16")
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-3, atol=1e-3)


def test_positional_arguments_in_contract_order(lookup):
    a, b = gemm_inputs(8, 8, 8)
    c = np.zeros((8, 8), dtype=np.float32)
    sel = lookup.select("gemm", {"M": 8, "N": 8, "K": 8})
    names = [arg["name"] for arg in sel.arguments]
    assert names == ["M", "N", "K", "alpha", "A", "B", "beta", "C", "bias"]
    lookup.launch(sel, 8, 8, 8, 2.0, a, b, 0.0, c, None)
    np.testing.assert_allclose(c, 2.0 * gemm_reference(a, b), rtol=1e-4, atol=1e-4)


def test_kernel_reuses_its_buffers_across_launches(lookup):
    sel = lookup.select("gemm", {"M": 8, "N": 8, "K": 8})
    kernel = lookup.kernel(sel)
    assert lookup.kernel(sel) is kernel
    for seed in (1, 2, 3):
        a, b = gemm_inputs(8, 8, 8, seed=seed)
        c = np.zeros((8, 8), dtype=np.float32)
        kernel(A=a, B=b, C=c, alpha=1.0, beta=0.0)
        np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)
    assert lookup.kernel_stats["compiles"] + lookup.kernel_stats["disk_hits"] == 1


def test_accumulate_reads_the_output(lookup):
    a, b = gemm_inputs(8, 8, 8)
    c0 = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
    c = c0.copy()
    sel = lookup.select("gemm", {"M": 8, "N": 8, "K": 8})
    lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.5)
    np.testing.assert_allclose(c, gemm_reference(a, b) + 0.5 * c0, rtol=1e-4, atol=1e-4)


def test_torch_tensors_both_ways(lookup):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    a = torch.randn(12, 20)
    b = torch.randn(20, 16, dtype=torch.float32)
    c = torch.full((12, 16), float("nan"))
    sel = lookup.select("gemm", {"M": 12, "N": 16, "K": 20})
    lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.0)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)
    # A NumPy view of the torch output is the same memory.
    assert np.shares_memory(c.numpy(), np.from_dlpack(c))


def test_host_tensors_wait_and_synchronize_is_safe_any_time(lookup):
    # Host arrays are copied in and out: the call waits and returns the kernel's time.
    sel = lookup.select("gemm", {"M": 8, "N": 8, "K": 8})
    lookup.synchronize()  # nothing launched yet: returns at once
    a, b = gemm_inputs(8, 8, 8)
    c = np.zeros((8, 8), dtype=np.float32)
    ms = lookup.kernel(sel)(A=a, B=b, C=c, alpha=1.0, beta=0.0)
    assert isinstance(ms, float) and ms >= 0
    lookup.synchronize()
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)
