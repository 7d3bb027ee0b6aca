"""Fixtures of the Python package's tests: an OpenCL device (PoCL in CI) and
a database tuned once per session with a tiny GEMM."""
import numpy as np
import pytest

try:
    import kforge
except ImportError:  # test_workload.py runs without the extension
    kforge = None

TINY_GEMM = {"M": 32, "N": 48, "K": 64}


def _opencl_device():
    if kforge is None:
        pytest.skip("the kforge package is not built (PYTHONPATH=<build>/python)")
    found = [d for d in kforge.devices() if d["backend"] == "opencl"]
    if not found:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    return kforge.open_device(found[0]["selector"])


@pytest.fixture(scope="session")
def device():
    return _opencl_device()


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("binaries")


@pytest.fixture
def lookup(device, tmp_path, cache_dir):
    """A lookup over an empty database: every selection is a default."""
    return kforge.Lookup(device, db=str(tmp_path / "none.db"), cache_dir=str(cache_dir))


@pytest.fixture(scope="session")
def tuned(device, tmp_path_factory, cache_dir):
    """(database path, summary, progress events) of a 3-candidate tune of TINY_GEMM,
    kernels only (vendor-library candidates forbidden)."""
    db = tmp_path_factory.mktemp("tuned") / "kforge.db"
    events = []
    summary = kforge.tune(device, "gemm", TINY_GEMM, db=str(db), max_evals=3, seed=7, progress=events.append,
                          library="forbid", cache_dir=str(cache_dir))
    return db, summary, events


def gemm_inputs(m, n, k, dtype=np.float32, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    return a, b


def gemm_reference(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)
