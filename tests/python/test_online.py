"""Online tuning from Python: a Lookup's miss tuned by a `python -m
kforge._online_tune` process (docs/python.md, "Online tuning")."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kforge
from conftest import gemm_inputs, gemm_reference

SHAPE = {"M": 40, "N": 24, "K": 16}


def test_blocking_answers_exact_on_the_first_select(device, tmp_path, cache_dir):
    lookup = kforge.Lookup(device, db=str(tmp_path / "user.db"), cache_dir=str(cache_dir), online="blocking",
                           online_max_evals=2)
    sel = lookup.select("gemm", SHAPE)
    assert sel.rule == "exact", sel.explanation
    assert sel.online == "blocking"
    assert "online: tuned here first, blocking (tuner exit 0" in sel.explanation
    a, b = gemm_inputs(SHAPE["M"], SHAPE["N"], SHAPE["K"])
    c = np.full((SHAPE["M"], SHAPE["N"]), np.nan, dtype=np.float32)
    lookup.launch(sel, A=a, B=b, C=c, alpha=1.0, beta=0.0)
    np.testing.assert_allclose(c, gemm_reference(a, b), rtol=1e-4, atol=1e-4)


def test_background_answers_at_once_then_exact(device, tmp_path, cache_dir):
    lookup = kforge.Lookup(device, db=str(tmp_path / "user.db"), cache_dir=str(cache_dir))
    lookup.set_online_tuning("background", max_evals=2, time_budget_s=120)
    first = lookup.select("gemm", SHAPE)
    assert first.rule == "default"
    assert "online: queued for tuning in the background" in first.explanation
    assert lookup.wait_online(600)
    later = lookup.select("gemm", SHAPE)
    assert later.rule == "exact", later.explanation + (tmp_path / "user.db.online.log").read_text()
    assert later.online == "background"


def test_a_bad_mode_names_the_argument(device, tmp_path):
    with pytest.raises(kforge.BadInputError, match="online: 'sometimes'"):
        kforge.Lookup(device, db=str(tmp_path / "user.db"), online="sometimes")


def test_the_torch_ops_follow_the_environment(tmp_path, cache_dir):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    script = textwrap.dedent("""
        import torch
        from kforge import torch_ops
        a, b = torch.randn(40, 16), torch.randn(16, 24)
        torch.testing.assert_close(torch.ops.kforge.gemm(a, b), a @ b, rtol=1e-4, atol=1e-4)
        print(torch_ops.current_lookup().select("gemm", {"M": 40, "N": 24, "K": 16}).rule)
    """)
    env = dict(os.environ, KFORGE_ONLINE_TUNING="blocking", KFORGE_ONLINE_MAX_EVALS="2",
               KFORGE_DB=str(tmp_path / "user.db"), KFORGE_CACHE_DIR=str(cache_dir), KFORGE_LIBRARY_GEMM="forbid")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1] == "exact"
