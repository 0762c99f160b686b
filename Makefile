# Kiln's entry points. `make demo` and `make test` do all set-up on a fresh
# Debian 12 machine: install missing packages, configure, build, run.
BUILD_DIR ?= build
JOBS ?= 2
BUILD_TYPE ?= Release

export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_DIR ?= $(HOME)/.cache/kiln-ccache
export CCACHE_MAXSIZE ?= 5G

CMAKE_FLAGS = -G Ninja \
  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DLLVM_USE_LINKER=lld \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DPython3_EXECUTABLE=/usr/bin/python3

.PHONY: all deps configure build test demo bench clean import-sweep-update conformance-update \
	cuda-compile-update conformance-gpu-emulated-update asan \
  soak tsan fuzz torch-venv install package train-demo zoo zoo-cuda

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The PyTorch frontend's tests run in a venv with PyPI's torch (made once
# per machine by scripts/torch-venv.sh, ~5.5 GB; KILN_TORCH_VENV moves it).
# A failed download does not stop the other suites: the torch-frontend
# entries then print why they skip.
torch-venv:
	@./scripts/torch-venv.sh > /dev/null || \
	  echo "torch-venv: could not create the venv; ctest's torch-frontend-* entries will skip"

test: build torch-venv
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

demo: build
	@./examples/demo.sh $(BUILD_DIR)

# A small CNN trained on scikit-learn's digits by a step Kiln compiled
# (`kiln compile --train`), its loss curve, then its held-out accuracy
# (docs/Training.md).
train-demo: build
	@./scripts/with-kiln-module.sh $(BUILD_DIR)/examples/train examples/train/train_digits.py \
	  $(CURDIR)/$(BUILD_DIR)/bin/kiln $(CURDIR)/$(BUILD_DIR)/examples/train/run

# `make install PREFIX=/opt/kiln`: bin/, lib/ (the runtime and the CMake
# package), include/kiln/, share/kiln/ (docs/UserGuide.md, "Installing").
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix "$(PREFIX)"

# The Debian packages kiln-runtime and kiln (CPack) in $(BUILD_DIR)/packages.
package: build
	cd $(BUILD_DIR) && cpack -B packages

# Kiln against ONNX Runtime on the reference models, with the machine's
# limits, start-up, memory, overhead, compile time and a busy-core run:
# writes docs/Performance.md and docs/Performance.png. A benchmark, not a
# test; run it on an idle machine. BENCH_FLAGS adds run.py options.
bench: build
	"$$(./scripts/bench-venv.sh)" bench/run.py --build $(BUILD_DIR) --busy $(BENCH_FLAGS)

# Record the import status of every ONNX backend test case (after adding
# ops); the sweep in `make test` fails on any case that gets worse.
import-sweep-update: build
	cmake --build $(BUILD_DIR) --target import-sweep-update

# ASan + UBSan build of Kiln (compiler, runtime, CLI, tests) in
# build-asan, then every test but the two long ONNX-suite sweeps.
# allocator_may_return_null=1: an allocation too large fails as the C
# library's would (returns NULL), which the runtime reports as
# KILN_ERROR_OUT_OF_MEMORY (runtime-descriptor-mutations asks for a
# mutated arena of 2^40 bytes).
# intercept_tls_get_addr=0: oneDNN, loaded with dlopen, keeps per-thread
# state in dynamic TLS, which GCC 12's LeakSanitizer misreads on the OpenMP
# threads at exit ("Tracer caught signal 11"); leaks are still checked.
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
asan: deps
	cmake -S . -B build-asan $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_C_FLAGS=$(ASAN_FLAGS)" "-DCMAKE_CXX_FLAGS=$(ASAN_FLAGS)" \
	  "-DCMAKE_EXE_LINKER_FLAGS=$(ASAN_FLAGS)" "-DCMAKE_SHARED_LINKER_FLAGS=$(ASAN_FLAGS)"
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) \
	  -E "onnx-conformance|onnx-import-sweep|static-link|runtime-small-stack|runtime-soak"
	@echo "asan: skipped the ONNX suites (too slow under the sanitizers), static-link"
	@echo "      (its C program is built with plain cc and cannot load the sanitized runtime),"
	@echo "      runtime-small-stack (ASan's redzones multiply every frame's stack use) and"
	@echo "      runtime-soak (ASan's quarantine keeps freed memory: RSS is not flat by design)"

# The long soak: one session runs a model SOAK_RUNS times (squeezenet1_1 at
# batch 2: about 8 minutes for 100,000 runs); outputs unchanged, RSS and the
# pool flat after warm-up. `make test` runs a short version (runtime-soak).
SOAK_MODEL ?= squeezenet1_1
SOAK_RUNS ?= 100000
soak: build
	cd $(BUILD_DIR) && ctest -R models-compile-run --output-on-failure
	$(BUILD_DIR)/bin/stress-test soak $(BUILD_DIR)/models/$(SOAK_MODEL).so $(SOAK_RUNS)

# ThreadSanitizer over the runtime: 8 threads x 1,000 runs on one model,
# sessions created and freed concurrently (scripts/tsan.sh says what it
# covers and why the models are generated code).
tsan: build
	cd $(BUILD_DIR) && ctest -R models-compile-run --output-on-failure
	./scripts/tsan.sh $(BUILD_DIR)

# libFuzzer over the readers of untrusted files (docs/Fuzzing.md): a clang-22
# build with ASan and UBSan in build-fuzz, then each target for
# FUZZ_SECONDS with its seeds, dictionary and the regressions; the corpus
# grows in build-fuzz/corpus, findings land in build-fuzz/findings. The
# runtime links GNU OpenMP as in the main build (clang's -fopenmp=libgomp
# compiles its parallel loops serially: nothing is run in parallel here).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= onnx-import tensor-files kiln-ir descriptor checkpoint
FUZZ_FLAGS = -fsanitize=fuzzer-no-link -fno-omit-frame-pointer -gline-tables-only
fuzz: build
	cd $(BUILD_DIR) && ctest -R "models-compile-run|fuzz-seeds" --output-on-failure
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DLLVM_USE_LINKER=lld -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DPython3_EXECUTABLE=/usr/bin/python3 -DKILN_ENABLE_TESTS=OFF -DKILN_FUZZ=ON \
	  -DOpenMP_C_FLAGS=-fopenmp=libgomp -DOpenMP_C_LIB_NAMES=gomp \
	  -DOpenMP_gomp_LIBRARY=/usr/lib/x86_64-linux-gnu/libgomp.so.1 \
	  "-DLLVM_USE_SANITIZER=Address;Undefined" \
	  "-DCMAKE_C_FLAGS=$(FUZZ_FLAGS)" "-DCMAKE_CXX_FLAGS=$(FUZZ_FLAGS)"
	cmake --build build-fuzz --target fuzz-targets -j $(JOBS)
	./scripts/fuzz.sh build-fuzz $(BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Record which ONNX test cases compile and match (after a backend change).
conformance-update: build
	cmake --build $(BUILD_DIR) --target conformance-update

# Every torchvision classifier exported with a dynamic batch, checked,
# compiled and run at batch 1 and 4 against torch; regenerates
# docs/ModelZoo.md (tens of minutes, several GB of models in ZOO_DIR).
ZOO_DIR ?= $(BUILD_DIR)/zoo
zoo: build
	/usr/bin/python3 test/models/zoo.py $(BUILD_DIR)/bin/kiln $(ZOO_DIR) --run-all \
	  --report docs/ModelZoo.md

# One classifier of each torchvision family compiled for the GPU (ptxas)
# and its GPU-mapped loop nests run on the CPU (--emulate-gpu) at batch 1
# and 4 against torch; regenerates docs/ModelZooCuda.md. No GPU needed.
zoo-cuda: build
	/usr/bin/python3 test/models/zoo.py $(BUILD_DIR)/bin/kiln $(ZOO_DIR)-cuda --target=cuda \
	  --representatives --report docs/ModelZooCuda.md

cuda-compile-update: build
	cmake --build $(BUILD_DIR) --target cuda-compile-update

conformance-gpu-emulated-update: build
	cmake --build $(BUILD_DIR) --target conformance-gpu-emulated-update

clean:
	rm -rf $(BUILD_DIR)
