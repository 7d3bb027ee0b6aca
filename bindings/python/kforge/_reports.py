"""Exports and the HTML report of a tuning database, as `kforge export` and
`kforge report` write them (docs/export.md, docs/report.md)."""
import os
import warnings

from kforge import _kforge


def _write(out, text):
    if out is not None:
        with open(os.fspath(out), "w", encoding="utf-8", newline="") as f:  # CSV rows end in CRLF
            f.write(text)
    return text


def export(db, format="json", *, out=None, device=None, op=None, dtype=None, layout=None, problem=None,
           all_results=False, include_stale=False, namespace="kforge_tuned", template_dirs=(), binaries=None,
           cache_dir=None):
    """A database (or JSON export) as json, csv, markdown or a C++ header; the
    text, also written to `out` when given. Winners of template versions that
    are no longer current are left out unless include_stale, with a warning,
    as are problems the lookup would refuse. With `binaries`, the exported
    winners' compiled binaries are copied into that folder from the binary
    cache (`cache_dir`, else the tuner's default), a warning naming each one
    that could not be."""
    r = _kforge.export_tuning(os.fspath(db), format, device, op, dtype, layout, problem, all_results,
                              include_stale, namespace, [os.fspath(d) for d in template_dirs],
                              None if binaries is None else os.fspath(binaries),
                              None if cache_dir is None else os.fspath(cache_dir))
    for line in r.get("binaries", {}).get("missing", []):
        warnings.warn(f"no binary of {line}", stacklevel=2)
    if r["stale_left_out"]:
        warnings.warn(f"left out {r['stale_left_out']} winner(s) of template versions that are no longer "
                      "current (include_stale=True keeps them)", stacklevel=2)
    for line in r["skipped"]:
        warnings.warn(f"skipped {line}", stacklevel=2)
    if all_results and not r["holds_all_results"]:
        warnings.warn(f"{db} holds winners only (exported without all results)", stacklevel=2)
    return _write(out, r["text"])


def report(db, *, out=None, title=None, device=None, op=None, dtype=None, layout=None, problem=None,
           ceilings=None, template_dirs=()):
    """The self-contained HTML report of a database (or JSON export with every
    result); the page, also written to `out` when given."""
    html = _kforge.report_html(os.fspath(db), device, op, dtype, layout, problem, title,
                               None if ceilings is None else os.fspath(ceilings),
                               [os.fspath(d) for d in template_dirs])
    return _write(out, html)
