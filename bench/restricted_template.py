"""A copy of a built-in template with fewer values per parameter, written as a
user template (`kforge tune --template DIR --only-template NAME`), and the
valid configurations of that space computed from the manifest's constraints.

The benchmarks use it to bound a space that is too large to run exhaustively
on a loaded CPU; the kernel source is the built-in one, unchanged.
"""
import itertools
import json
import os
import re
import shutil

from bench_env import ROOT


def write(builtin_dir, name, values, out_dir):
    """Copies templates/<builtin_dir> to out_dir/<name> with the manifest's
    parameter values replaced by `values` (name -> list; parameters not named
    keep theirs) and returns (template directory, manifest)."""
    src_dir = os.path.join(ROOT, "templates", builtin_dir)
    with open(os.path.join(src_dir, "manifest.json")) as f:
        manifest = json.load(f)
    manifest["name"] = name
    for p in manifest["parameters"]:
        if p["name"] in values:
            p["values"] = list(values[p["name"]])
            if p["default"] not in p["values"]:
                p["default"] = p["values"][0]
    dst = os.path.join(out_dir, name)
    os.makedirs(dst, exist_ok=True)
    shutil.copy(os.path.join(src_dir, manifest["source"]), dst)
    with open(os.path.join(dst, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return dst, manifest


def python_expression(constraint, limits):
    """A manifest constraint (C-like integer expression) as a Python
    expression: && and || as and/or, / as integer division, device limits
    (max_block_threads, local_mem_bytes) substituted."""
    e = constraint.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"(?<![/])/(?![/])", "//", e)
    for k, v in limits.items():
        e = re.sub(r"\b%s\b" % k, str(v), e)
    return e


def valid_configs(manifest, limits):
    """Every configuration of the manifest's parameter space that satisfies
    its constraints, as dicts, in a fixed order."""
    names = [p["name"] for p in manifest["parameters"]]
    exprs = [python_expression(c, limits) for c in manifest["constraints"]]
    out = []
    for combo in itertools.product(*[p["values"] for p in manifest["parameters"]]):
        cfg = dict(zip(names, combo))
        if all(eval(e, {}, dict(cfg)) for e in exprs):  # noqa: S307 (the repository's own manifest)
            out.append(cfg)
    return out


def canonical_name(cfg):
    """kforge's canonical configuration name: NAME<value> sorted by name, joined by _."""
    return "_".join(f"{k}{cfg[k]}" for k in sorted(cfg))


def device_limits(devices_json, selector):
    """max_block_threads and local_mem_bytes of the device `selector` from `kforge devices --json`."""
    devs = devices_json["devices"] if isinstance(devices_json, dict) and "devices" in devices_json else devices_json
    for d in devs:
        info = d.get("info", d)
        if selector in (info.get("selector"), d.get("selector"), "auto"):
            return {"max_block_threads": info["max_block_threads"], "local_mem_bytes": info["local_mem_bytes"]}
    raise SystemExit(f"kforge devices --json: no device {selector}")
