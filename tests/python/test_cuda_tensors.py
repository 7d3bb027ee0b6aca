"""PyTorch CUDA tensors launched on in place on the CUDA backend, on the
caller's stream: needs a CUDA GPU and PyTorch built with CUDA."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU for PyTorch", allow_module_level=True)

import kforge  # noqa: E402
from kforge import torch_ops  # noqa: E402


@pytest.fixture
def cuda_lookup(tmp_path):
    if not any(d["selector"] == "cuda:0" for d in kforge.devices()):
        pytest.skip("kforge sees no cuda:0")
    return kforge.Lookup(kforge.open_device("cuda:0"), db=str(tmp_path / "none.db"))


def test_a_kernel_writes_a_cuda_tensor_in_place_after_the_streams_work(cuda_lookup):
    m, n, k = 64, 32, 48
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a2 = a * 2  # queued on `stream`: the kernel must run after it
        kernel = cuda_lookup.kernel(cuda_lookup.select("gemm", {"M": m, "N": n, "K": k}))
        # Enqueued on the caller's stream, not waited for: no device time to return.
        assert kernel(A=a2, B=b, C=c, alpha=1.0, beta=0.0, stream=stream) is None
    stream.synchronize()
    torch.testing.assert_close(c, (a.double() * 2 @ b.double()).float(), rtol=1e-4, atol=1e-4)


def test_torch_ops_stay_on_the_gpu(cuda_lookup):
    torch_ops.use(cuda_lookup)
    a, b = torch.randn(40, 24, device="cuda"), torch.randn(24, 16, device="cuda")
    got = torch.ops.kforge.gemm(a, b)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got, (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)
