"""pytest set-up: the llmsim package under test (LLMSIM_PYTHONPATH, or build/python) and the CLI
binary (LLMSIM_BINARY, or build/llmsim) the results are compared with, from the repository root."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ.get("LLMSIM_PYTHONPATH") or os.path.join(ROOT, "build", "python"))
BINARY = os.environ.get("LLMSIM_BINARY") or os.path.join(ROOT, "build", "llmsim")


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    """Relative scenario paths are the repository's, as in the README."""
    monkeypatch.chdir(ROOT)


@pytest.fixture
def cli():
    """Runs the llmsim binary; returns (exit code, stdout, stderr)."""

    def run(*args):
        p = subprocess.run([BINARY, *args], capture_output=True, text=True, check=False)
        return p.returncode, p.stdout, p.stderr

    return run
