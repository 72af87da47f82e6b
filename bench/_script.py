"""Imported first by every bench script: run by its path (`python bench/x.py`), Python puts
bench/ first on sys.path, where a script named like a package (bench/consolidation.py beside
the `consolidation` package) would shadow that package for everything imported after it.
This takes bench/ off the path and puts the repo root on it (so `bench.*` imports work)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
