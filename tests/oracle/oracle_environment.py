"""Where both oracles run: the virtual environment scripts/setup_oracles.sh makes (transformers,
PyTorch and TransformerLens, pinned, and nothing of Debian's dist-packages on the path, whose scipy
would break transformers' import against the oracles' NumPy 2)."""
import os
import subprocess
import sys

from pypi_unavailable import unavailable

here = os.path.dirname(os.path.abspath(__file__))
setup = os.path.join(here, "..", "..", "scripts", "setup_oracles.sh")


def enter(oracle_dir):
    """Installs the oracles into oracle_dir once and runs this script again under its interpreter
    (returns when already there); skips or fails as pypi_unavailable says when they cannot be had."""
    if os.path.realpath(sys.prefix) == os.path.realpath(oracle_dir):
        return
    installed = subprocess.run(["bash", setup, oracle_dir], capture_output=True, text=True)
    if installed.returncode != 0:
        unavailable("scripts/setup_oracles.sh could not install the oracles: " +
                    ((installed.stdout + installed.stderr).strip().splitlines() or ["no output"])[-1])
    python = os.path.join(oracle_dir, "bin", "python")
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])
