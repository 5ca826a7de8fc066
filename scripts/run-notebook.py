#!/usr/bin/env python3
"""Executes a notebook top to bottom in its own folder (nbclient, the python3 kernel of ipykernel) and
fails on the first cell that raises: CI runs docs/examples/*.ipynb this way (ctest notebook_capacity).

    scripts/run-notebook.py NOTEBOOK [--output EXECUTED.ipynb] [--timeout SECONDS]
"""

import argparse
import os
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook")
    ap.add_argument("--output", help="write the executed notebook here (outputs included)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    a = ap.parse_args()
    # The kernel runs in the notebook's folder: relative PYTHONPATH entries are the caller's.
    if os.environ.get("PYTHONPATH"):
        paths = os.environ["PYTHONPATH"].split(os.pathsep)
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else p for p in paths)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger: no start-up warning
    nb = nbformat.read(a.notebook, as_version=4)
    folder = os.path.dirname(os.path.abspath(a.notebook))
    client = NotebookClient(nb, timeout=a.timeout, kernel_name="python3", resources={"metadata": {"path": folder}})
    start = time.monotonic()
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"{a.notebook}: a cell failed\n{e}", file=sys.stderr)
        return 1
    if a.output:
        nbformat.write(nb, a.output)
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    print(f"{a.notebook}: {cells} code cells ran in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
