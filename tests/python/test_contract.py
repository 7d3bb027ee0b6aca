"""Every argument of a launch is checked against the operator's contract
before anything runs: a wrong one is an exception that names it."""
import numpy as np
import pytest

import kforge
from conftest import gemm_inputs
from fake_dlpack import FakeGpuTensor


@pytest.fixture
def gemm(lookup):
    sel = lookup.select("gemm", {"M": 8, "N": 12, "K": 16})
    a, b = gemm_inputs(8, 12, 16)
    c = np.zeros((8, 12), dtype=np.float32)
    return lookup.kernel(sel), dict(A=a, B=b, C=c, alpha=1.0, beta=0.0)


def rejects(kernel, args, pattern, error=kforge.BadInputError):
    with pytest.raises(error, match=pattern):
        kernel(**args)


def test_wrong_shape_names_the_argument(gemm):
    kernel, args = gemm
    args["B"] = np.zeros((16, 13), dtype=np.float32)
    rejects(kernel, args, r"argument 5 'B' of gemm: shape \(16, 13\) holds 208 elements, expected 192")


def test_transposed_operand_of_the_right_count_is_refused(gemm):
    # Issue 56: A of shape (8, 16) given as (16, 8) was read as if it were (8, 16).
    kernel, args = gemm
    args["A"] = np.ascontiguousarray(args["A"].T)
    rejects(kernel, args, r"argument 4 'A' of gemm: shape \(16, 8\), expected \(8, 16\)")
    args["A"] = np.zeros((2, 64), dtype=np.float32)
    rejects(kernel, args, r"'A' of gemm: shape \(2, 64\), expected \(8, 16\)")


def test_same_layout_shapes_are_accepted(gemm):
    # A flat buffer, and a leading batch of one, hold the same elements in the same order.
    kernel, args = gemm
    kernel(**dict(args, A=args["A"].reshape(-1)))
    kernel(**dict(args, A=args["A"].reshape(1, 8, 16), C=args["C"].reshape(1, 8, 12)))


def test_wrong_dtype_names_the_argument(gemm):
    kernel, args = gemm
    args["A"] = args["A"].astype(np.float64)
    rejects(kernel, args, r"argument 4 'A' of gemm: dtype float64, expected f32")
    args["A"] = args["A"].astype(np.float16)
    rejects(kernel, args, r"'A' of gemm: dtype f16, expected f32")


def test_non_contiguous_names_the_argument(gemm):
    kernel, args = gemm
    args["A"] = np.zeros((16, 8), dtype=np.float32).T
    rejects(kernel, args, r"'A' of gemm: the tensor of shape \(8, 16\) is not C-contiguous")


def test_device_memory_names_the_argument(gemm):
    kernel, args = gemm
    args["A"] = FakeGpuTensor((8, 16))
    rejects(kernel, args, r"'A' of gemm: the tensor is in cuda:0 memory, but the device is on the opencl backend")


def test_a_stream_is_refused_on_opencl(gemm):
    kernel, args = gemm
    rejects(kernel, dict(args, stream=0), r"gemm: stream: the opencl backend launches on its own queue")


def test_read_only_output_is_refused(gemm):
    kernel, args = gemm
    args["C"].setflags(write=False)
    rejects(kernel, args, r"'C' of gemm: an output, but the array is read-only")


def test_dims_and_scalars_are_checked(gemm):
    kernel, args = gemm
    rejects(kernel, dict(args, M=9), r"gemm launch: argument 0 \(M\) is 9, the selected problem has M = 8")
    rejects(kernel, dict(args, alpha="one"), r"'alpha' of gemm: expected a float, got str")
    rejects(kernel, dict(args, A=[1.0, 2.0]), r"'A' of gemm: expected a tensor, got list")


def test_names_missing_unknown_and_repeated_arguments(gemm):
    kernel, args = gemm
    rejects(kernel, {k: v for k, v in args.items() if k != "B"}, r"'B' of gemm: missing")
    rejects(kernel, dict(args, Z=1), r"gemm: no argument named 'Z'")
    with pytest.raises(kforge.BadInputError, match=r"'M' of gemm: given twice"):
        kernel(8, M=8, **{k: v for k, v in args.items()})


def test_nothing_is_written_when_a_check_fails(gemm):
    kernel, args = gemm
    args["C"][:] = 7.0
    args["B"] = args["B"].astype(np.float16)
    rejects(kernel, args, r"'B'")
    assert (args["C"] == 7.0).all()


def test_bad_problem_fields_name_the_field(lookup):
    with pytest.raises(kforge.BadInputError, match=r"op: unknown operator 'gemn'"):
        lookup.select("gemn", {"M": 8})
    with pytest.raises(kforge.BadInputError, match=r"dtype: unknown dtype 'f64'"):
        lookup.select("gemm", {"M": 8, "N": 8, "K": 8}, "f64")
    with pytest.raises(ValueError):  # BadInputError is a ValueError too
        lookup.select("gemm", {"M": 8, "N": 8, "K": 8}, layout="XY")


def test_the_package_says_its_version():
    import pathlib
    import re
    pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    declared = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M).group(1)
    assert kforge.__version__ == declared
