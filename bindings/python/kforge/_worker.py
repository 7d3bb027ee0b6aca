"""The process a tuning run's candidates run in (python -m kforge._worker FD):
the same loop as the kforge binary's worker, so a candidate that crashes or
hangs costs only itself."""
import sys

from kforge._kforge import _run_tuner_worker

if __name__ == "__main__":
    sys.exit(_run_tuner_worker(int(sys.argv[1])))
