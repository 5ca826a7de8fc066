# Conventional entry points. `make run` builds (Release) and runs llmsim on a built-in example;
# `make test` builds and runs the whole test suite through ctest; `make sanitize` does the same
# under AddressSanitizer + UBSan; `make lint` checks formatting and runs clang-tidy.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
EXAMPLE ?= scenarios/gpt3-175b-a100-1024.json
# Warnings as errors: CI sets LLMSIM_WERROR=ON in the environment.
LLMSIM_WERROR ?= OFF

.PHONY: all build run test sanitize bench lint clean

all: build

build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMSIM_WERROR=$(LLMSIM_WERROR)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/llmsim estimate --scenario $(EXAMPLE)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

sanitize:
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DLLMSIM_SANITIZE=ON -DLLMSIM_WERROR=$(LLMSIM_WERROR) \
	      -DLLMSIM_PROBE=OFF -DLLMSIM_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS)

lint:
	./scripts/lint.sh

bench: build
	./$(BUILD)/bench/llmsim_bench

clean:
	rm -rf $(BUILD) build-asan
