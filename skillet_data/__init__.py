"""The data files skillet ships in its wheel: numbered SQL migrations, the platform catalog, the
intent models trained for its skills and the current SQL functions in one readable file.

A package of its own (not `worker/migrations`, not `skills/catalog/`) because `skills.catalog`
is already a module, and because the files are read by several packages (the worker's
`migrate`, the demo, `catalog seed`, the tests and benches): one home, named for what it holds.
Wheels are installed unpacked, so a path next to this module is a real directory both in the
repository (editable install) and in site-packages.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

# `skillet migrate` applies these (SKILLET_MIGRATIONS_DIR overrides).
MIGRATIONS_DIR = _HERE / "migrations"
# `skillet catalog seed` publishes each folder here (--dir overrides).
CATALOG_DIR = _HERE / "catalog"
# Intent models trained for catalog skills (turn.matcher.intent_model reads them).
INTENT_MODELS_DIR = _HERE / "intent_models"
# Every function the migrated schema defines, for reading (tools/dump_functions.py writes it;
# the migrations above stay what `skillet migrate` applies).
FUNCTIONS_SQL = _HERE / "functions.sql"
# IANA's special-purpose address blocks (core.special_addresses reads it: the address guard).
SPECIAL_ADDRESSES_CSV = _HERE / "special_addresses.csv"
