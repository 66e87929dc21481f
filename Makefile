# The two set-up commands of the README, and their parts.
#   make demo   installs what is needed and runs the bundled default scenario
#   make test   installs what is needed and runs every test (Rust and Python)

VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: demo test install system-deps test-rust test-python bench schema fidelity

demo: install
	$(VENV)/bin/lasthop run --out results/dumbbell

test: install system-deps test-rust test-python

system-deps:
	@scripts/system-deps.sh

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Cargo.toml $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null) scenarios/dumbbell.toml
	@command -v cargo >/dev/null || { echo "lasthop needs Rust (cargo) to build its core: see https://rustup.rs"; exit 1; }
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev]'
	touch $@

test-rust:
	cargo test --workspace --exclude lasthop-py --release

test-python: install
	$(VENV)/bin/pytest -q

bench: install
	cargo run --release -p lasthop-bench -- --out BENCHMARKS.md
	$(PY) bench/sweep_scaling.py --append BENCHMARKS.md

schema: install
	$(VENV)/bin/lasthop schema --out schema/scenario.schema.json

# ns-3 cross-validation (opt-in): the `oracle` extra of pyproject.toml, then FIDELITY.md.
fidelity: install
	$(PIP) install --quiet 'ns3==3.44.post0'
	$(PY) bench/fidelity.py --out FIDELITY.md
