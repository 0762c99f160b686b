#!/usr/bin/env bash
# package_test.sh BUILD_DIR SCRATCH
# Builds the Debian packages (`make package`'s CPack) into SCRATCH, checks
# what they depend on (the runtime: libc and libgomp only, oneDNN
# recommended), installs both with dpkg into a clean root and compiles and
# runs the example model with what was installed there.
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch"
(cd "$scratch" && cpack --config "$build/CPackConfig.cmake" -B "$scratch/out" > cpack.log 2>&1) ||
  { cat "$scratch/cpack.log"; fail "cpack failed"; }
runtime_deb=$(ls "$scratch"/out/kiln-runtime_*.deb)
compiler_deb=$(ls "$scratch"/out/kiln_*.deb)
echo "packages: $(basename "$runtime_deb") $(basename "$compiler_deb")"
depends=$(dpkg-deb -f "$runtime_deb" Depends)
echo "kiln-runtime Depends: $depends; Recommends: $(dpkg-deb -f "$runtime_deb" Recommends)"
for dep in $(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/ //g'); do
  case "$dep" in libc6|libgomp1) ;; *) fail "kiln-runtime depends on $dep (only libc6 and libgomp1 expected)";; esac
done
echo "kiln Depends: $(dpkg-deb -f "$compiler_deb" Depends)"

# A clean root with an empty package database: dpkg installs the two
# packages there (their dependencies are this machine's, not the root's).
root=$scratch/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-script-chrootless --log=/dev/null \
  -i "$runtime_deb" "$compiler_deb" > "$scratch/dpkg.log" 2>&1 ||
  { cat "$scratch/dpkg.log"; fail "dpkg -i failed"; }
dpkg --root="$root" -l | grep -E "^ii +kiln" || fail "dpkg does not list the installed packages"
kiln=$root/usr/bin/kiln
[ -x "$kiln" ] || fail "no usr/bin/kiln in the installed root"
(cd "$scratch" && "$kiln" compile "$src/examples/cmake-consumer/digits.onnx" -o digits.so --quiet) ||
  fail "the packaged kiln cannot compile"
/usr/bin/python3 - "$scratch" <<'PY' || fail "the packaged kiln's artifact does not run"
import numpy as np, sys
np.save(sys.argv[1] + "/image.npy", np.zeros((2, 1, 8, 8), np.float32))
PY
(cd "$scratch" && "$kiln" run digits.so --input image=image.npy > run.log) ||
  { cat "$scratch/run.log"; fail "the packaged kiln cannot run the artifact"; }
used=$(ldd "$kiln" | sed -n 's/.*libkiln_runtime.so.* => \([^ ]*\) .*/\1/p')
[ "$(realpath "$used")" = "$(realpath "$root/usr/lib/libkiln_runtime.so.0")" ] ||
  fail "the packaged kiln does not use the packaged runtime: $(ldd "$kiln" | grep kiln_runtime)"
echo "package: 1 passed, 0 failed"
