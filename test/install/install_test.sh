#!/usr/bin/env bash
# install_test.sh BUILD_DIR SCRATCH
# Installs Kiln from BUILD_DIR into SCRATCH/prefix, then builds the
# installed example project (share/kiln/examples/cmake-consumer, copied out
# of the prefix) against that prefix alone and checks that it classifies
# its images as the model did in NumPy; then that kiln_add_model re-runs
# the compile only when the model, the options or a DEPENDS file change.
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$scratch/install.log"
for f in bin/kiln bin/kiln-opt lib/libkiln_runtime.so include/kiln/kiln.h include/kiln/kiln.hpp \
         include/kiln/kiln_model_abi.h lib/cmake/Kiln/KilnConfig.cmake \
         lib/cmake/Kiln/KilnAddModel.cmake share/kiln/examples/cmake-consumer/CMakeLists.txt; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
# Nothing installed points back at the build or the source tree.
for f in "$prefix"/bin/kiln "$prefix"/bin/kiln-opt "$prefix"/lib/libkiln_runtime.so; do
  runpath=$(readelf -d "$f" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
  case "$runpath" in *"$build"*|*"$src"*) fail "$f's run path names the build: $runpath";; esac
done
if grep -rlF "$src" "$prefix/lib/cmake" "$prefix/include"; then
  fail "the CMake package or headers name a path in the source tree or the build"
fi
echo "installed into $prefix"

# The installed kiln from another folder.
(cd / && "$prefix/bin/kiln" --version --short) || fail "the installed kiln does not run"

# The example project, copied out of the prefix, with a bare environment.
consumer=$scratch/consumer
cp -r "$prefix/share/kiln/examples/cmake-consumer" "$consumer"
bare_env=(env -i PATH=/usr/bin:/bin HOME="$scratch")
configure() {
  "${bare_env[@]}" cmake -S "$consumer" -B "$consumer/build" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" "$@" > "$scratch/configure.log" 2>&1 ||
    { cat "$scratch/configure.log"; fail "configuring the consumer failed"; }
}
build_consumer() {
  "${bare_env[@]}" cmake --build "$consumer/build" > "$scratch/build.log" 2>&1 ||
    { cat "$scratch/build.log"; fail "building the consumer failed"; }
}
configure
build_consumer
grep -q "kiln: compiling digits" "$scratch/build.log" || fail "the build did not compile the model"
# (The scratch folder may itself lie under the build: look for the
# folders a leak would name.)
for leak in "$src/runtime" "$src/packaging" "$src/cmake" "$build/lib" "$build/bin"; do
  if grep -lF "$leak" "$consumer/build/build.ninja" "$consumer/build/CMakeCache.txt"; then
    fail "the consumer's build names $leak"
  fi
done

check_predictions() {
  (cd "$consumer" && ./build/classify images/*.pgm) > "$scratch/classify.txt" ||
    fail "classify failed"
  local right=0 total=0
  while read -r image label predicted; do
    case "$image" in '#'*) continue;; esac
    got=$(sed -n "s|^$image: \([0-9]\) .*|\1|p" "$scratch/classify.txt")
    [ "$got" = "$predicted" ] || fail "$image: classify says '$got', the model in NumPy $predicted"
    total=$((total + 1))
    [ "$got" = "$label" ] && right=$((right + 1))
  done < "$consumer/expected.txt"
  echo "classify: $total images as NumPy predicted them; $right of $total correct labels"
}
check_predictions

# Nothing changed: the model is not compiled again.
build_consumer
if grep -q "kiln: compiling" "$scratch/build.log"; then fail "an unchanged build compiled the model again"; fi
# The model changes: compiled again.
touch "$consumer/digits.onnx"
build_consumer
grep -q "kiln: compiling digits" "$scratch/build.log" || fail "a changed model was not compiled again"
# The options change: compiled again, and still right.
configure -DKILN_CONSUMER_OPTIONS=--no-fuse
build_consumer
grep -q "kiln: compiling digits" "$scratch/build.log" || fail "changed options did not compile the model again"
check_predictions
# A DEPENDS file changes: compiled again; unchanged: not.
echo "external data" > "$consumer/extra.bin"
configure -DKILN_CONSUMER_OPTIONS=--no-fuse -DKILN_CONSUMER_DEPENDS="$consumer/extra.bin"
build_consumer
touch "$consumer/extra.bin"
build_consumer
grep -q "kiln: compiling digits" "$scratch/build.log" || fail "a changed DEPENDS file did not compile the model again"
build_consumer
if grep -q "kiln: compiling" "$scratch/build.log"; then fail "an unchanged DEPENDS file compiled the model again"; fi
# The model as a static library, in a fresh build folder.
rm -rf "$consumer/build"
configure -DKILN_CONSUMER_STATIC=ON
build_consumer
[ -f "$consumer/build/kiln_models/digits/digits.a" ] || fail "STATIC did not make digits.a"
if readelf -d "$consumer/build/classify" | grep -q "digits.so"; then fail "STATIC still links digits.so"; fi
check_predictions
echo "install: 1 passed, 0 failed"
