"""Environment recorded in every benchmark receipt: hardware identity (the
devices kforge sees), software revisions, date and the machine's load.

Ratios measured within one run are what a receipt supports; the absolute
numbers depend on the load recorded here.
"""
import datetime
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(cmd, env=None):
    """Runs a command that prints JSON on stdout and returns it parsed."""
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout)


def git_revision():
    """Short HEAD revision of this checkout, with -dirty when tracked files differ."""
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def context(kforge, benchmark, extra=None):
    """The receipt's context block: call at the start of a run (it records the
    load average then; pass the result to finish() at the end)."""
    devices = run_json([kforge, "devices", "--json"])
    version = subprocess.run([kforge, "--version"], capture_output=True, text=True).stdout.strip()
    ctx = {
        "benchmark": benchmark,
        "date": utc_now().isoformat(timespec="seconds"),
        "kforge": version,
        "kforge_binary": os.path.abspath(kforge),
        "git_revision": git_revision(),
        "host": platform.node(),
        "os": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average_at_start": os.getloadavg(),
        "command": " ".join(sys.argv),
        "devices": devices,
    }
    if extra:
        ctx.update(extra)
    return ctx


def finish(ctx):
    """Adds the load average at the end of the run to a context block."""
    ctx["load_average_at_end"] = os.getloadavg()
    return ctx


def write_receipt(out_dir, name, receipt, md):
    """Writes OUT_DIR/NAME-<UTC stamp>.json and .md, prints the markdown and where it went."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"{name}-{utc_now().strftime('%Y%m%dT%H%M%SZ')}")
    with open(base + ".json", "w") as f:
        json.dump(receipt, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"receipt: {os.path.relpath(base, ROOT)}.json / .md")
