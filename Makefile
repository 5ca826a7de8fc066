# Conventional entry points. `make run` builds the binary (Release) and runs it on a built-in example;
# `make python` builds the Python module (build/python); `make test` builds and runs the whole test
# suite through ctest; `make sanitize` does the same under AddressSanitizer + UBSan (with clang, where
# installed, whose build also holds the libFuzzer harnesses); `make fuzz` runs each harness for
# FUZZ_SECONDS (needs clang: scripts/deps.sh --dev); `make lint` checks formatting and runs clang-tidy.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
EXAMPLE ?= scenarios/gpt3-175b-a100-1024.json
# Warnings as errors: CI sets LLMSIM_WERROR=ON in the environment.
LLMSIM_WERROR ?= OFF
FUZZ_SECONDS ?= 60
CLANGXX ?= $(shell command -v clang++ 2>/dev/null)
CLANGCC ?= $(shell command -v clang 2>/dev/null)
SANITIZE_RUN = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all configure build run python test sanitize sanitize-build fuzz bench lint clean

all: build

configure:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMSIM_WERROR=$(LLMSIM_WERROR)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only the binary it runs (the tests and benchmarks are built by `make test`).
run: configure
	cmake --build $(BUILD) -j $(JOBS) --target llmsim
	./$(BUILD)/llmsim estimate --scenario $(EXAMPLE)

# Only the Python module (build/python is then an importable llmsim package; docs/python.md).
python: configure
	cmake --build $(BUILD) -j $(JOBS) --target llmsim_python

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# One sanitizer build: clang with the fuzz harnesses when clang is installed, GCC otherwise. A build
# folder configured with the other compiler is recreated.
sanitize-build:
ifeq ($(CLANGXX),)
	@if grep -qs 'CMAKE_CXX_COMPILER:.*clang' $(ASAN_BUILD)/CMakeCache.txt; then rm -rf $(ASAN_BUILD); fi
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DLLMSIM_SANITIZE=ON -DLLMSIM_WERROR=$(LLMSIM_WERROR) \
	      -DLLMSIM_PROBE=OFF -DLLMSIM_BUILD_BENCH=OFF
else
	@if [ -f $(ASAN_BUILD)/CMakeCache.txt ] && ! grep -qs 'CMAKE_CXX_COMPILER:.*clang' $(ASAN_BUILD)/CMakeCache.txt; \
	  then rm -rf $(ASAN_BUILD); fi
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DLLMSIM_SANITIZE=ON -DLLMSIM_FUZZ=ON -DLLMSIM_WERROR=$(LLMSIM_WERROR) \
	      -DCMAKE_C_COMPILER=$(CLANGCC) -DCMAKE_CXX_COMPILER=$(CLANGXX) -DLLMSIM_PROBE=OFF -DLLMSIM_BUILD_BENCH=OFF
endif
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The doc_* checks (every command of the docs, their shown outputs) and the serving validation (its
# 8 MLPerf capacity searches over 600 s streams, and the residuals check that reads its output) run
# in `make test`; under the sanitizers they would take most of CI's time for no code the unit, CLI,
# capacity and corpus tests miss. For the same reason the test binaries leave out their cases tagged
# [heavy] in this build (tests/CMakeLists.txt; docs/reliability.md lists them).
sanitize: sanitize-build
	$(SANITIZE_RUN) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -E '^(doc_|validate_serving$$|serving_residuals_current$$)'

fuzz:
	@test -n "$(CLANGXX)" || { echo "make fuzz needs clang and libFuzzer: scripts/deps.sh --dev"; exit 2; }
	$(MAKE) sanitize-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh $(ASAN_BUILD)

lint:
	./scripts/lint.sh

bench: build
	./$(BUILD)/bench/llmsim_bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
