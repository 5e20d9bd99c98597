# Two commands on a fresh machine:  `make run` (serve it)  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint format check-js catalogue clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Set up, migrate and serve on http://127.0.0.1:8000 (SQLite + in-memory channel layer by default).
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	@# Today's deal is chosen by the solver (a few seconds), once: here, not on the first visit.
	$(BIN)/python manage.py prepare_daily_deals --days 1
	$(BIN)/python manage.py compilemessages --ignore=.venv >/dev/null 2>&1 || true
	$(BIN)/python manage.py runserver 127.0.0.1:8000

## Set up and run the whole test suite (Python, then the JavaScript engine under Node).
test: $(STAMP)
	$(BIN)/python manage.py compilemessages --ignore=.venv >/dev/null 2>&1 || true
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	@if [ -d tests/js ]; then node --test tests/js/; fi

## Format and lint in one go.
lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/mypy

## Regenerate the browser's reason catalogue from the Python engine's REASONS.
catalogue: $(STAMP)
	$(BIN)/python -c "from games.rules.catalogue import reasons_module; print(reasons_module(), end='')" > games/static/games/reasons.js

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
