"""Compile-only sweep of one Triton template for one target:
`python3 -m kforge_triton.sweep`, what `kforge compile --triton DIR` runs.

    python3 -m kforge_triton.sweep --manifest DIR/manifest.json --target cuda:sm_90a
        --dtype bf16 --layout NN --problem '{"M": 4096, "N": 4096, "K": 4096}'
        [--limits '{"max_shared_bytes": 232448, ...}'] [--config '{"BLOCK_M": 128, ...}']
        [--max-configs N] [--timeout-s 300] --out DIR --json FILE

The configurations whose parameters apply to the target, those breaking a
constraint (evaluated with --limits) left out, spread evenly down to
--max-configs; each compiled by the compile helper (a forked child with a
timeout). Writes one JSON object to --json: {template, target, dtype,
layout, unmet_envelope, nvdisasm (the one in Triton's wheel, or null),
candidates: [{name (kforge's canonical form:
parameters in sorted order, NAME then value, joined by '_'), config,
status ("ok" | "compile_error"), reason, binary_path, format, metadata,
options_used, cache_key, seconds, log (ptxas' -v output among it when
TRITON_DUMP_PTXAS_LOG=1)}]}. Exit 0 when the JSON was written;
2 with a message for a bad manifest or argument.
"""

import argparse
import json
import os
import sys

from .compile import compile_request
from .manifest import ManifestError, load_manifest


def wheel_nvdisasm():
    """The nvdisasm Triton's wheel carries, for readers of its cubins; None where absent."""
    try:
        import triton
    except ImportError:
        return None
    if not getattr(triton, "__file__", None):  # a folder named triton, not the package
        return None
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    return path if os.access(path, os.X_OK) else None


def canonical_name(config):
    return "_".join(f"{name}{value}" for name, value in sorted(config.items()))


def spread(items, n):
    """n items spread evenly over `items` (all of them when n <= 0 or n >= len)."""
    if n <= 0 or n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def candidates(manifest, args, problem, limits):
    if args.config:
        chosen = [dict(manifest.default_config(args.target), **json.loads(args.config))]
    else:
        valid = [c for c in manifest.configurations(args.target)
                 if not manifest.unmet(c, problem, args.layout, args.dtype, limits)]
        chosen = spread(valid, args.max_configs)
    for config in chosen:
        name = canonical_name(config)
        out_dir = os.path.join(args.out, name)
        os.makedirs(out_dir, exist_ok=True)
        request = manifest.compile_request(config, args.target, args.dtype, out_dir, problem, args.layout,
                                           timeout_s=args.timeout_s)
        response = compile_request(request)
        yield {"name": name, "config": config, "status": "ok" if response["ok"] else "compile_error",
               "reason": response["error"] or "", "binary_path": response["binary_path"],
               "record_path": response["record_path"],
               "format": response["format"], "metadata": response["metadata"],
               "options_used": response["options_used"], "cache_key": response["cache_key"],
               "seconds": response["seconds"], "log": response["log"]}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m kforge_triton.sweep", description=__doc__.splitlines()[0])
    p.add_argument("--manifest", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--dtype", required=True)
    p.add_argument("--layout", default="NN")
    p.add_argument("--problem", required=True, help="the problem's dims as a JSON object")
    p.add_argument("--limits", default="{}", help="device limits as a JSON object")
    p.add_argument("--config", default="", help="one configuration as a JSON object (unset: the manifest's default)")
    p.add_argument("--max-configs", type=int, default=0)
    p.add_argument("--timeout-s", type=float, default=300)
    p.add_argument("--out", required=True)
    p.add_argument("--json", required=True)
    args = p.parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
        problem, limits = json.loads(args.problem), json.loads(args.limits)
        if args.target not in manifest.targets:
            raise ManifestError(f"{args.manifest}: targets: '{args.target}' is not one of "
                                f"{', '.join(manifest.targets)}")
        if args.dtype not in manifest["dtypes"]:
            raise ManifestError(f"{args.manifest}: dtypes: '{args.dtype}' is not one of "
                                f"{', '.join(manifest['dtypes'])}")
        unmet = manifest.unmet(manifest.default_config(args.target), problem, args.layout, args.dtype,
                               field="envelope")
        result = {"template": manifest["name"], "operator": manifest["operator"], "target": args.target,
                  "dtype": args.dtype, "layout": args.layout, "unmet_envelope": unmet,
                  "nvdisasm": wheel_nvdisasm(), "candidates": []}
        if not unmet:
            result["candidates"] = list(candidates(manifest, args, problem, limits))
    except (ManifestError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
