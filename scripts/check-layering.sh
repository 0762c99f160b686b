#!/usr/bin/env bash
# Kiln's layering rule (docs/Architecture.md): dependencies point one way,
#   tools -> driver -> {frontends, compiler, backends} -> dialects; runtime alone.
# Fails when the core (compiler/, dialects/) includes or links a backend,
# frontend or tool; when the runtime includes MLIR, LLVM or compiler code;
# when a frontend reaches a backend or a tool; or when one backend includes
# another (backends/common is shared by all). Prints each breach with its
# file and line, then a summary line.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
passed=0
failed=0

# report NAME HITS: a breach for each line of HITS (file:line:text).
report() {
  if [ -n "$2" ]; then
    echo "FAIL: $1"
    echo "$2" | sed 's/^/  /'
    failed=$((failed + 1))
  else
    echo "ok:   $1"
    passed=$((passed + 1))
  fi
}

# check NAME PATTERN DIRS...: PATTERN in any source below DIRS is a breach.
check() {
  local name=$1 pattern=$2
  shift 2
  report "$name" "$(grep -rnE --include='*.cpp' --include='*.h' --include='*.c' \
    --include='*.hpp' --include='*.td' --include='*.inc' "$pattern" "$@" 2>/dev/null)"
}

# check_links NAME PATTERN CMAKEFILES...: a CMake file links what it must not.
check_links() {
  local name=$1 pattern=$2
  shift 2
  report "$name" "$(grep -nE "$pattern" "$@" 2>/dev/null)"
}

include='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
check "compiler/ and dialects/ include no backend, frontend or tool" \
  "${include}(backends|frontends|tools)/" compiler dialects
check "compiler/ and dialects/ do not name backends/ at all" 'backends/' compiler dialects
check_links "compiler/ and dialects/ link no backend, frontend or tool" \
  'Kiln(Cpu|Cuda|Backend|Backends|BackendCommon|Onnx|Commands)|kiln_runtime' \
  $(find compiler dialects -name CMakeLists.txt)
check "runtime/ includes no MLIR, LLVM or compiler code" \
  "${include}(mlir|llvm|compiler|dialects|frontends|backends|tools)/" runtime
check "frontends/ include no backend or tool" "${include}(backends|tools)/" frontends
for dir in backends/*/; do
  name=$(basename "$dir")
  [ "$name" = common ] && continue
  others=$(ls -d backends/*/ | xargs -n1 basename | grep -vxE "$name|common" | paste -sd'|')
  [ -z "$others" ] && others='^$'
  check "backends/$name includes no other backend" "${include}backends/($others)/" "$dir"
done
backends=$(ls -d backends/*/ | xargs -n1 basename | grep -vx common | paste -sd'|')
check "backends/common includes no backend" "${include}backends/(${backends:-^$})/" backends/common
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
