"""`skillet skills ...` and `skillet catalog ...`: the org's skills and the platform catalog."""

from __future__ import annotations

import argparse


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add this module's commands to the `skillet` parser (each takes `common` for --json)."""
