"""kforge's Triton helpers: compile a @triton.jit kernel for a named target,
run one under Triton's interpreter on NumPy arrays, read a triton template's
manifest. Standalone (it never imports the kforge extension); each helper is
a module run as `python3 -m kforge_triton.<name>` with PYTHONPATH naming the
directory above this package, one JSON request on stdin, one JSON response
on stdout (docs/triton-helpers.md).

Importing this package imports no Triton: kforge_triton.interpret must set
TRITON_INTERPRET before Triton is first imported in its process.
"""

__all__ = ["compile", "interpret", "manifest", "expr", "protocol"]
