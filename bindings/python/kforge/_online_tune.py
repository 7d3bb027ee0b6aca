"""The process of an online tune a Lookup started (python -m kforge._online_tune JOB):
the same run as the kforge executable's, its candidates in kforge._worker processes."""
import sys

from kforge._kforge import _run_online_job

if __name__ == "__main__":
    sys.exit(_run_online_job(sys.argv[1], [sys.executable, "-m", "kforge._worker"]))
