# The two set-up commands of the README, and their parts.
#   make demo   installs what is needed and runs the bundled default scenario
#   make test   installs what is needed and runs every test (Rust and Python)
#   make wheel  builds dist/lasthop-*.whl, which pip installs without Rust; make test-wheel tries it

VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: demo test install system-deps test-rust test-python bench schema fidelity wheel test-wheel

# What the compiled core and the Python package are built from (bundled scenarios are compiled in).
SOURCES := pyproject.toml Cargo.toml Cargo.lock scenarios/*.toml \
	$(shell find crates python -name '*.rs' -o -name '*.py' -o -name '*.js' -o -name '*.css' -o -name 'Cargo.toml' 2>/dev/null) \
	python/lasthop/report/vendor/VERSION

demo: install
	$(VENV)/bin/lasthop run --out results/dumbbell

# make test builds the core with the Rust tests' profile (release-test: release's optimisation
# without LTO, with overflow and debug assertions): a fresh machine then compiles the workspace's
# dependencies once instead of twice and links no LTO build, and the Python tests run the core
# with its assertions on. make install and make demo build release, as users get it.
test:
	@$(MAKE) --no-print-directory CORE_PROFILE=release-test install system-deps test-rust test-python

system-deps:
	@scripts/system-deps.sh

CORE_PROFILE ?= release
install: $(VENV)/.installed-$(CORE_PROFILE)

$(VENV)/.installed-$(CORE_PROFILE): $(SOURCES)
	@command -v cargo >/dev/null || { echo "lasthop needs Rust (cargo) to build its core: see https://rustup.rs"; exit 1; }
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	@echo "building lasthop (its Rust core: a few minutes the first time; cargo's progress below)"
	@MATURIN_PEP517_ARGS="--profile $(CORE_PROFILE)" $(PIP) install -v -e '.[dev]' > $(VENV)/install.log 2>&1 & pid=$$!; \
	  tail -n +1 -f $(VENV)/install.log --pid=$$pid | grep --line-buffered -E '^ *(Compiling|Finished) |^Successfully installed'; \
	  wait $$pid || { echo "the install failed; the end of $(VENV)/install.log:"; tail -n 40 $(VENV)/install.log; exit 1; }
	rm -f $(VENV)/.installed $(VENV)/.installed-*
	touch $@

# One build of the workspace's tests: release-test optimises as release does (the golden and
# timing-sensitive tests need it) and checks overflow and debug assertions as the dev profile does.
test-rust:
	cargo test --workspace --exclude lasthop-py --profile release-test

# The emulator's real-time test files first, on two workers and nothing beside them: the real
# TCP stacks they measure slow down when CPU-bound tests share the two cores (a hybrid WLAN
# download measured 0.47 of its share instead of 0.60 in two CI runs with them beside it); then
# the rest on three workers (some wait on sockets and clocks).
REALTIME_TESTS := tests/test_emu.py tests/test_emu_mechanisms.py
test-python: install
	$(VENV)/bin/pytest -q -n 2 $(REALTIME_TESTS)
	$(VENV)/bin/pytest -q -n 3 $(addprefix --ignore=,$(REALTIME_TESTS))

bench: install
	cargo run --release -p lasthop-bench -- --out BENCHMARKS.md
	$(PY) bench/sweep_scaling.py --append BENCHMARKS.md
	$(PY) bench/report_speed.py --append BENCHMARKS.md
	$(PY) bench/long_runs.py --append BENCHMARKS.md

schema: install
	$(VENV)/bin/lasthop schema --out schema/scenario.schema.json

# ns-3 cross-validation (opt-in): the `oracle` extra of pyproject.toml, then FIDELITY.md.
fidelity: install
	$(PIP) install --quiet 'ns3==3.44.post0' 'scipy>=1.10'
	$(PY) bench/fidelity.py --out FIDELITY.md

# The wheel for PyPI: abi3 (one wheel for CPython >= 3.9) and manylinux2014 (glibc >= 2.17),
# linked by zig (the ziglang package from PyPI) against glibc 2.17 symbols whatever this machine's
# glibc is; maturin refuses the build if the library needs anything newer. Its compiled parts go
# to target/x86_64-unknown-linux-gnu/, beside (not over) the editable install's target/release/.
wheel: dist/.wheel-built

dist/.wheel-built: $(SOURCES) LICENSE-MIT LICENSE-APACHE
	@command -v cargo >/dev/null || { echo "building the wheel needs Rust (cargo): see https://rustup.rs"; exit 1; }
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet 'maturin[zig]>=1.7,<2' auditwheel
	rm -f dist/lasthop-*.whl
	PATH="$(abspath $(VENV))/bin:$$PATH" maturin build --release --compatibility manylinux2014 --zig --out dist
	touch $@

# Installs that wheel into a fresh venv and runs lasthop from it with no cargo on PATH.
# The wheel goes into a venv of its own: whichever build of the core is installed here serves.
test-wheel: $(or $(wildcard $(VENV)/.installed-*),install) wheel
	$(VENV)/bin/pytest -q -m wheel tests/test_wheel.py
