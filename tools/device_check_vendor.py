"""The device check's vendor table: per tuned GEMM problem, cuBLASLt's best
algorithm (tuned as a library candidate), cuBLAS's default (torch.matmul,
measured by the receipt), kforge's best kernel, and what the runtime selects
(`kforge lookup --json`, and with `--library force --prepare` the cuBLASLt
entry bound again from its stored algorithm). No PyTorch here, so the table
is tested on fake input (tests/tools/test_device_check_vendor.py).
"""


def _entry(name_config, ms):
    """{"name": "gemm_cublaslt ALGO3", "ms": 0.41}, or None where absent."""
    return {"name": name_config, "ms": ms} if name_config else None


def vendor_row(problem, cublas_ms, lookup, forced):
    """One problem's row from its two lookups (dicts of `kforge lookup --json`,
    or {"error": ...}) and cuBLAS's time (ms, or None)."""
    row = {"problem": problem, "cublas_ms": cublas_ms, "cublaslt_best": None, "kforge_best": None,
           "selected": None, "cublaslt_algo": None, "replayed": None}
    if "error" in lookup:
        row["error"] = lookup["error"]
        return row
    versus = lookup.get("vendor_comparison") or {}
    row["cublaslt_best"] = _entry(versus.get("library_best"), versus.get("library_best_ms"))
    row["kforge_best"] = _entry(versus.get("kernel_best"), versus.get("kernel_best_ms"))
    if not versus and lookup.get("rule") == "exact":  # one kind tuned: the selection is its best
        side = "cublaslt_best" if lookup.get("template", "").startswith("gemm_cublaslt") else "kforge_best"
        row[side] = _entry(f"{lookup['template']} {lookup['config']}", lookup.get("tuned_median_ms"))
    row["selected"] = _entry(f"{lookup.get('template')} {lookup.get('config')}", lookup.get("tuned_median_ms"))
    row["rule"] = lookup.get("rule")
    if "error" not in forced:
        call = forced.get("library_call") or {}
        row["cublaslt_algo"] = call.get("algo")
        row["replayed"] = call.get("replayed")
        row["forced_origin"] = (forced.get("kernel") or {}).get("origin")
    vendor = [x for x in (row["cublaslt_best"] and row["cublaslt_best"]["ms"], cublas_ms) if x]
    selected_ms = row["selected"]["ms"]
    # Above 1 the selection is slower than the vendor's best.
    row["selected_over_vendor"] = selected_ms / min(vendor) if vendor and selected_ms else None
    return row


def _name_ms(e):
    return "-" if not e else f"{e['name']} ({e['ms']:.4f} ms)" if e.get("ms") else e["name"]


def _algo(a):
    if not isinstance(a, dict):
        return "-" if a is None else str(a)
    return " ".join(f"{k}={a[k]}" for k in ("id", "tile", "stages", "splitk", "reduction", "swizzle", "custom")
                    if k in a)


def vendor_markdown(rows):
    md = ["", "## The selection against cuBLASLt and cuBLAS", "",
          "cuBLASLt's best: the fastest `gemm_cublaslt` configuration the tune measured (ALGO k: the heuristic's "
          "k-th algorithm; 16: cuBLASLt's own choice). Selected: what `kforge lookup` takes. Selected / vendor: "
          "its median over the faster of cuBLASLt's best and cuBLAS (torch.matmul); above 1 the selection is "
          "slower.", "",
          "| problem | cuBLASLt best | its algorithm | cuBLAS ms | kforge best kernel | selected | selected / vendor |",
          "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            md.append(f"| {r['problem']} | lookup failed: {r['error']} | | | | | |")
            continue
        ratio = r["selected_over_vendor"]
        algo = _algo(r["cublaslt_algo"]) + (" (replayed)" if r.get("replayed") else "")
        cublas = "-" if r["cublas_ms"] is None else f"{r['cublas_ms']:.4f}"
        md.append(f"| {r['problem']} | {_name_ms(r['cublaslt_best'])} | {algo} | {cublas} | "
                  f"{_name_ms(r['kforge_best'])} | {_name_ms(r['selected'])} | "
                  f"{'-' if ratio is None else f'{ratio:.3f}'} |")
    return md
