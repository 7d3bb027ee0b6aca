"""The torch.library custom ops (torch.ops.kforge.*) against PyTorch's own
operators, eagerly and under torch.compile on the CPU."""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import kforge  # noqa: E402
from kforge import torch_ops  # noqa: E402


@pytest.fixture(autouse=True)
def use_lookup(lookup):
    torch_ops.use(lookup)


def close(got, want, tol):
    torch.testing.assert_close(got, want.float(), rtol=tol, atol=tol)


def test_gemm():
    a, b = torch.randn(24, 40), torch.randn(40, 16)
    close(torch.ops.kforge.gemm(a, b), a.double() @ b.double(), 1e-4)


def test_rms_norm():
    x, w = torch.randn(6, 64), torch.randn(64)
    want = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
    close(torch.ops.kforge.rms_norm(x, w, 1e-6), want, 1e-4)


def test_softmax():
    x = torch.randn(5, 70)
    close(torch.ops.kforge.softmax(x), torch.softmax(x.double(), -1), 1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_attention(causal):
    q, k, v = torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16)
    want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
    close(torch.ops.kforge.attention(q, k, v, causal), want, 1e-4)


@pytest.fixture
def fresh_warnings():
    """Each test sees the ContiguousCopyWarnings as a new process would."""
    torch_ops._warned.clear()
    yield
    torch_ops._warned.clear()


@pytest.mark.parametrize("op, name, make, want", [
    ("gemm", "b", lambda: (torch.randn(24, 40), torch.randn(16, 40).t()), lambda a, b: a.double() @ b.double()),
    ("softmax", "x", lambda: (torch.randn(70, 5).t(),), lambda x: torch.softmax(x.double(), -1)),
    ("rms_norm", "weight", lambda: (torch.randn(6, 64), torch.randn(64, 2)[:, 0], 1e-6),
     lambda x, w, eps: x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps) * w.double()),
])
def test_a_non_contiguous_input_is_copied_and_said_once(fresh_warnings, op, name, make, want):
    args = make()
    assert not all(t.is_contiguous() for t in args if isinstance(t, torch.Tensor))
    with pytest.warns(torch_ops.ContiguousCopyWarning,
                      match=rf"kforge::{op}: input '{name}' of shape .* not contiguous; it is copied"):
        close(getattr(torch.ops.kforge, op)(*args), want(*args), 1e-4)
    with warnings.catch_warnings():  # copied again, silently: the warning is once per op and input
        warnings.simplefilter("error", torch_ops.ContiguousCopyWarning)
        close(getattr(torch.ops.kforge, op)(*args), want(*args), 1e-4)


def test_contiguous_inputs_are_not_copied(fresh_warnings):
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch_ops.ContiguousCopyWarning)
        a, b = torch.randn(24, 40), torch.randn(40, 16)
        close(torch.ops.kforge.gemm(a, b), a.double() @ b.double(), 1e-4)
        x = torch.randn(4, 70).unsqueeze(1).expand(4, 1, 70)  # extent 1 with stride 0: still contiguous
        close(torch.ops.kforge.softmax(x), torch.softmax(x.double(), -1), 1e-5)


@pytest.fixture
def gemm_kernel(lookup):
    return lookup.kernel(lookup.select("gemm", {"M": 8, "N": 12, "K": 16}))


def test_kernel_call_refuses_a_non_contiguous_output_and_leaves_it(gemm_kernel):
    # The rule's other half: an output is never copied, so one that is not contiguous is refused.
    a, b = torch.randn(8, 16), torch.randn(16, 12)
    c = torch.full((12, 8), 7.0).t()
    with pytest.raises(kforge.BadInputError, match=r"argument 7 'C' of gemm: the tensor of shape \(8, 12\) is not "
                                                   r"C-contiguous \(an output is written in place"):
        gemm_kernel(A=a, B=b, C=c, alpha=1.0, beta=0.0)
    assert torch.equal(c, torch.full((8, 12), 7.0))


def test_kernel_call_refuses_a_non_contiguous_input(gemm_kernel):
    c = torch.zeros(8, 12)
    with pytest.raises(kforge.BadInputError, match=r"'B' of gemm: the tensor of shape \(16, 12\) is not C-contiguous"):
        gemm_kernel(A=torch.randn(8, 16), B=torch.randn(12, 16).t(), C=c, alpha=1.0, beta=0.0)
    assert not c.any()


def test_bad_shapes_raise():
    with pytest.raises(kforge.BadInputError, match="do not multiply"):
        torch.ops.kforge.gemm(torch.randn(4, 5), torch.randn(6, 4))


def test_ops_under_torch_compile():
    def block(x, w, b):
        h = torch.ops.kforge.rms_norm(x, w, 1e-6)
        return torch.ops.kforge.softmax(torch.ops.kforge.gemm(h, b))

    x, w, b = torch.randn(8, 32), torch.randn(32), torch.randn(32, 24)
    compiled = torch.compile(block, fullgraph=True)
    close(compiled(x, w, b), block(x, w, b), 1e-5)


def test_fake_implementations_give_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out = torch.ops.kforge.gemm(torch.empty(3, 4), torch.empty(4, 5))
        assert out.shape == (3, 5) and out.dtype == torch.float32
        assert torch.ops.kforge.attention(*(torch.empty(1, 2, 3, 4),) * 3, True).shape == (1, 2, 3, 4)


_EXIT_SCRIPT = """
import sys, torch, kforge
from kforge import torch_ops
torch_ops.use(kforge.Lookup(kforge.open_device(sys.argv[1]), db=sys.argv[2]))
torch.ops.kforge.softmax(torch.randn(2, 8))
"""


def test_no_leaked_instances_at_exit(device, tmp_path):
    """A script that registers a lookup with the ops exits without nanobind's
    'leaked instances' report: the ops' module state outlives the interpreter's
    teardown (torch.library keeps its functions), so it must let go at exit."""
    import subprocess
    import sys

    script = tmp_path / "ops_then_exit.py"
    script.write_text(_EXIT_SCRIPT)
    done = subprocess.run([sys.executable, str(script), device.selector, str(tmp_path / "none.db")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr, done.stderr
