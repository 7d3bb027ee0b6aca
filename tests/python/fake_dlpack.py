"""A DLPack producer that says its memory is on a GPU, for checking that a
launch refuses device memory it cannot take without needing a GPU or
PyTorch: the consumer must reject it before reading any element."""
import ctypes

_CAPSULE_NAME = b"dltensor"
KDL_CUDA = 2
KDL_FLOAT = 2


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _ManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeGpuTensor:
    """A float32 tensor of `shape` that claims to live on CUDA device 0."""

    def __init__(self, shape):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._managed = _ManagedTensor()
        t = self._managed.dl_tensor
        t.data = 0x1000  # never read: the check rejects the device first
        t.device = _Device(KDL_CUDA, 0)
        t.ndim = len(shape)
        t.dtype = _DataType(KDL_FLOAT, 32, 1)
        t.shape = self._shape
        t.strides = None

    def __dlpack__(self, **kwargs):
        return _new_capsule(ctypes.addressof(self._managed), _CAPSULE_NAME, None)

    def __dlpack_device__(self):
        return (KDL_CUDA, 0)
