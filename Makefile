# Two commands on a fresh machine:  `make run` (serve it)  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

PORT   ?= 8000

.PHONY: run test lint format check-js clean messages

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Set up, migrate and serve on http://127.0.0.1:$(PORT) (SQLite + in-memory channel layer by default).
run: $(STAMP) messages
	@$(BIN)/python -c "import socket; socket.create_server(('127.0.0.1', $(PORT))).close()" 2>/dev/null \
		|| { echo "make run: port $(PORT) is in use; stop what uses it or run 'make run PORT=8001'" >&2; exit 1; }
	$(BIN)/python manage.py migrate --noinput
	@# Today's deal is chosen by the solver (a few seconds), once: here, not on the first visit.
	$(BIN)/python manage.py prepare_daily_deals --days 1
	@# The server keeps today's and tomorrow's deals prepared while it runs (past midnight too).
	DAILY_DEAL_PREPARE_IN_PROCESS=true $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

## Compile the Spanish and Dutch translations (needs gettext's msgfmt).
messages: $(STAMP)
	@command -v msgfmt >/dev/null || { echo "make: gettext's msgfmt is needed for the Spanish and Dutch pages: apt-get install gettext (macOS: brew install gettext)" >&2; exit 1; }
	$(BIN)/python manage.py compilemessages --ignore=.venv --ignore=node_modules --verbosity 0

## Set up and run the whole test suite (Python, then the JavaScript engine under Node).
test: $(STAMP) messages
	@command -v node >/dev/null || { echo "make test: Node.js 20+ is needed for the JavaScript tests (apt-get install nodejs)" >&2; exit 1; }
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	node --test tests/js/

## Format and lint in one go.
lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
