# Two commands on a fresh machine:  `make run` (serve it)  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
NODE_BIN   := node_modules/.bin
# The browser modules and their Node tests (reasons.js is generated: see .prettierignore).
JS_FILES := 'games/static/games/*.js' 'races/static/races/*.js' 'tests/js/*.mjs' eslint.config.js

PORT   ?= 8000
# Processes the Python tests run in (pytest-xdist): one per core, or a number.
TEST_WORKERS ?= auto

.PHONY: run test lint format check-js catalogue clean messages wheel

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The JavaScript linter and formatter, at the versions package-lock.json pins.
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: Node.js 20+ with npm is needed for the JavaScript tests and linters (apt-get install nodejs npm)" >&2; exit 1; }
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

## Set up, migrate and serve on http://127.0.0.1:$(PORT) (SQLite + in-memory channel layer by default).
run: $(STAMP) messages
	@$(BIN)/python -c "import socket; socket.create_server(('127.0.0.1', $(PORT))).close()" 2>/dev/null \
		|| { echo "make run: port $(PORT) is in use; stop what uses it or run 'make run PORT=8001'" >&2; exit 1; }
	$(BIN)/python manage.py migrate --noinput
	@# Today's deal is chosen by the solver (about ten seconds of CPU), once: here, not on the first visit.
	$(BIN)/python manage.py prepare_daily_deals --days 1
	@# The job worker runs beside the server and stops with it (deploy/devserver.py): it keeps
	@# today's and tomorrow's deals prepared (past midnight too), closes the days, settles the
	@# standings and sends the mail (queued in the database: none is lost when it stops).
	@# Links to share (cards, invites, mails) name the port it serves on, unless SITE_URL is set.
	SITE_URL=$${SITE_URL:-http://127.0.0.1:$(PORT)} DAILY_DEAL_DAYS_AHEAD=2 $(BIN)/python deploy/devserver.py 127.0.0.1:$(PORT)

## Compile the Spanish and Dutch translations (needs gettext's msgfmt).
messages: $(STAMP)
	@command -v msgfmt >/dev/null || { echo "make: gettext's msgfmt is needed for the Spanish and Dutch pages: apt-get install gettext (macOS: brew install gettext)" >&2; exit 1; }
	$(BIN)/python manage.py compilemessages --ignore=.venv --ignore=node_modules --verbosity 0

## Build the wheel into dist/, translations compiled in (docs/DEPLOY.md: install it and run `easyharp`).
wheel: $(STAMP)
	PYTHON=$(BIN)/python sh deploy/build-wheel.sh dist

## Set up and run the whole test suite (Python, then the JavaScript under Node); the browser tests inject axe-core from node_modules.
test: $(STAMP) $(NODE_STAMP) messages
	@command -v node >/dev/null || { echo "make test: Node.js 20+ is needed for the JavaScript tests (apt-get install nodejs)" >&2; exit 1; }
	@# Each test file runs whole in one process, so its module-wide server and browser start once.
	$(BIN)/python -m pytest --numprocesses=$(TEST_WORKERS) --maxprocesses=8 --dist=loadfile $(PYTEST_ARGS)
	node --test tests/js/

## Lint and type-check everything (ruff, mypy, import-linter, eslint, prettier); rewrites nothing.
lint: $(STAMP) $(NODE_STAMP) check-js
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## Rewrite the code in the house style: ruff format for the Python, prettier for the JavaScript.
format: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff format .
	$(NODE_BIN)/prettier --write $(JS_FILES)

## Check the JavaScript: eslint, and prettier's formatting.
check-js: $(NODE_STAMP)
	$(NODE_BIN)/eslint $(JS_FILES)
	$(NODE_BIN)/prettier --check $(JS_FILES)

## Regenerate the browser's reason catalogue from the Python engine's REASONS.
catalogue: $(STAMP)
	$(BIN)/python -c "from games.rules.catalogue import reasons_module; print(reasons_module(), end='')" > games/static/games/reasons.js

clean:
	rm -rf $(VENV) node_modules dist build .pytest_cache .mypy_cache .ruff_cache
