"""kforge: a kernel autotuner's library for Python (docs/python.md).

Devices, templates, tuning runs and sweeps, the tuning database, its
exports and HTML report, and the runtime lookup (select, explain, launch)
with NumPy and PyTorch tensors through DLPack.
PyTorch custom ops (torch.ops.kforge.*) are registered by importing
kforge.torch_ops.
"""
from kforge import _kforge
from kforge._kforge import (BadInputError, Device, Kernel, KforgeError, Lookup, Selection, UnavailableError,
                            open_device)
from kforge._records import Record
from kforge._reports import export, report
from kforge._tuning import sweep, tune

__version__ = _kforge.__version__

__all__ = ["BadInputError", "Database", "Device", "Kernel", "KforgeError", "Lookup", "Record", "Selection",
           "UnavailableError", "devices", "export", "open_device", "report", "sweep", "templates", "tune"]


def devices():
    """Every device every enabled backend sees, as Records (fingerprints)."""
    return [Record(d) for d in _kforge.devices()]


def templates(op="", template_dirs=()):
    """The built-in templates (and those in template_dirs), optionally of one operator."""
    return [Record(t) for t in _kforge.templates(op, [str(d) for d in template_dirs])]


class Database(_kforge.Database):
    """A tuning database; its rows come back as Records."""

    def winners(self, op=None, problem_key=None, device_key=None):
        return [Record(r) for r in super().winners(op, problem_key, device_key)]

    def results(self, problem_key=None, template_name=None, device_key=None):
        return [Record(r) for r in super().results(problem_key, template_name, device_key)]

    def devices(self):
        return [Record(r) for r in super().devices()]

    def problems(self):
        return [Record(r) for r in super().problems()]

    def verify(self):
        return Record(super().verify())
