#!/usr/bin/env python3
"""The runtime's own declarations of the CUDA driver, cuBLASLt and cuDNN
(runtime/src/devices/cuda_api.h, cublaslt_api.h, cudnn_api.h: the runtime
loads the libraries with dlopen and never includes their headers) checked
against the headers of the installed toolkit, which the runtime cannot
see. A wrong value or layout there compiles, links and passes every test
on the stand-ins, and fails only on a GPU; here it fails at once:

- every `#define KILN_<NAME> <integer>` equals the toolkit's constant of
  that name (KILN_ taken off, or as RENAMED below; a new constant must
  map to one);
- the structs the runtime declares (cuBLASLt's heuristic result and
  algorithm, cuDNN's algorithm performance) have the toolkit's size and
  field offsets;
- every entry point the runtime resolves has the toolkit's arity and, for
  its result and each parameter, the same size and calling-convention
  class (an integer, enum or pointer; a float; a double), so the call is
  made as the library expects; and the driver's symbol the runtime looks
  up (cuMemAlloc_v2, not the 32-bit cuMemAlloc) is the one cuda.h binds
  the name to.

usage: vendor_abi_test.py CXX DEVICES_DIR WORK
(DEVICES_DIR: runtime/src/devices; the toolkit: $CUDA_HOME, else
/usr/local/cuda.) Skipped, saying so, when the headers are not installed.
Ends with `N passed, N failed`.
"""
import os
import re
import subprocess
import sys

cxx, devices, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
include = os.path.join(home, "include")
HEADERS = ["cuda.h", "cublasLt.h", "cudnn.h"]
OURS = ["cuda_api.h", "cublaslt_api.h", "cudnn_api.h"]
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}" + (f": {detail}" if detail else ""))


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


missing = [h for h in HEADERS if not os.path.exists(os.path.join(include, h))]
if missing:
    print(f"SKIPPED: the CUDA toolkit's {', '.join(missing)} not in {include} "
          "(set CUDA_HOME)")
    finish()

# The runtime's names that are not the toolkit's with KILN_ taken off.
RENAMED = [
    (r"^CU_ATTRIBUTE_CC_(MAJOR|MINOR)$", r"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_\1"),
    (r"^CU_CAPTURE_(.*)$", r"CU_STREAM_CAPTURE_MODE_\1"),
    (r"^CUBLAS_SUCCESS$", "CUBLAS_STATUS_SUCCESS"),
    (r"^CUBLASLT_DESC_(.*)$", r"CUBLASLT_MATMUL_DESC_\1"),
    (r"^CUBLASLT_LAYOUT_(.*)$", r"CUBLASLT_MATRIX_LAYOUT_\1"),
    (r"^CUBLASLT_PREF_(.*)$", r"CUBLASLT_MATMUL_PREF_\1"),
    (r"^CUDNN_SUCCESS$", "CUDNN_STATUS_SUCCESS"),
    (r"^CUDNN_ALGO_(.*)$", r"CUDNN_CONVOLUTION_FWD_ALGO_\1"),
    (r"^CUDNN_BACKEND_(.*)$", r"CUDNN_BACKEND_\1_DESCRIPTOR"),
    (r"^CUDNN_ATTR_CONVOLUTION_FORWARD_(.*)$", r"CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_\1"),
    (r"^CUDNN_NUMERICAL_NOTE_COUNT$", "CUDNN_NUMERICAL_NOTE_TYPE_COUNT"),
]


def toolkit_name(ours):
    name = ours[len("KILN_"):]
    for pattern, replacement in RENAMED:
        if re.match(pattern, name):
            return re.sub(pattern, replacement, name)
    return name


constants = []  # (header, KILN_ name, value)
for header in OURS:
    for line in open(os.path.join(devices, header)):
        m = re.match(r"#define (KILN_[A-Z0-9_]+) (-?\d+)\b", line)
        if m:
            constants.append((header, m.group(1), int(m.group(2))))
check(len(constants) > 50, f"{len(constants)} constants read from the runtime's declarations")

# The structs: the runtime's declaration and the toolkit's, field by field.
STRUCTS = {
    "cublasLtMatmulAlgo_t": ["data"],
    "cublasLtMatmulHeuristicResult_t": ["algo", "workspaceSize", "state", "wavesCount",
                                        "reserved"],
    "cudnnConvolutionFwdAlgoPerf_t": ["algo", "status", "time", "memory", "determinism",
                                      "mathType", "reserved"],
}

# A C++ program that prints, for each entry point of a list, its arity
# and the size and class of its result and parameters; and each struct's
# size and offsets. Compiled once with the runtime's declarations and
# once with the toolkit's.
PRELUDE = r"""
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
template <class T> std::string describe() {
  const char *kind = std::is_same<T, void>::value             ? "void"
                     : std::is_same<T, double>::value         ? "double"
                     : std::is_floating_point<T>::value       ? "float"
                     : std::is_pointer<T>::value ||
                             std::is_integral<T>::value ||
                             std::is_enum<T>::value ||
                             std::is_null_pointer<T>::value
                         ? "int"
                         : "other";
  return std::string(kind) + std::to_string(sizeof(typename std::conditional<
      std::is_same<T, void>::value, char, T>::type));
}
template <class R, class... A> std::string signature(R (*)(A...)) {
  std::string s = describe<R>() + "(";
  const char *sep = "";
  for (const std::string &p : {std::string(), describe<A>()...}) {
    if (p.empty())
      continue;
    s += sep + p;
    sep = ",";
  }
  return s + ")";
}
#define STR2(x) #x
#define STR(x) STR2(x)
"""


def program(path, source, directory):
    """Compiles and runs `source` with `directory` on the include path
    (one side's headers only: the runtime's devices/cudnn.h is not the
    toolkit's cudnn.h)."""
    with open(path, "w") as f:
        f.write(source)
    exe = path[:-4]
    p = subprocess.run([cxx, "-std=c++17", "-w", f"-I{directory}", path, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr[-3000:]
    p = subprocess.run([exe], capture_output=True, text=True)
    return dict(line.split(" ", 1) for line in p.stdout.splitlines()), p.stderr


def struct_lines():
    out = []
    for struct, fields in STRUCTS.items():
        out.append(f'std::printf("struct:{struct} %zu\\n", sizeof({struct}));')
        for f in fields:
            out.append(f'std::printf("field:{struct}.{f} %zu\\n", offsetof({struct}, {f}));')
    return "\n".join(out)


# The runtime's side: its X-macros list the entry points.
entry_macros = {"cuda_api.h": ("KILN_CUDA_ENTRY_POINTS", True),
                "cublaslt_api.h": ("KILN_CUBLASLT_ENTRY_POINTS", False),
                "cudnn_api.h": ("KILN_CUDNN_ENTRY_POINTS", False)}
ours_src = PRELUDE + "".join(f'#include "{h}"\n' for h in OURS) + "int main() {\n"
for header, (macro, has_symbol) in entry_macros.items():
    result = {"cuda_api.h": "CUresult", "cublaslt_api.h": "cublasStatus_t",
              "cudnn_api.h": "cudnnStatus_t"}[header]
    if has_symbol:
        ours_src += (f"#define X(name, symbol, params) {{ {result} (*f) params = nullptr; "
                     f'std::printf("entry:%s %s %s\\n", #name, symbol, signature(f).c_str()); }}\n')
    else:
        ours_src += (f"#define X(name, params) {{ {result} (*f) params = nullptr; "
                     f'std::printf("entry:%s - %s\\n", #name, signature(f).c_str()); }}\n')
    ours_src += f"{macro}(X)\n#undef X\n"
ours_src += struct_lines() + "\n}\n"
ours, err = program(os.path.join(work, "ours.cpp"), ours_src, devices)
check(ours is not None, "the runtime's declarations compile as C++", err)
if ours is None:
    finish()
entries = {k[len("entry:"):]: v.split(" ") for k, v in ours.items() if k.startswith("entry:")}
check(len(entries) > 40, f"{len(entries)} entry points read from the runtime's declarations")

# The toolkit's side: the same names, as its headers declare them.
real_src = PRELUDE + "".join(f"#include <{h}>\n" for h in HEADERS) + "int main() {\n"
for header, name, value in constants:
    real_src += f'std::printf("const:{name} %lld\\n", (long long)({toolkit_name(name)}));\n'
for name in entries:
    real_src += (f'std::printf("entry:{name} %s %s\\n", STR({name}), '
                 f"signature(static_cast<decltype(&{name})>(nullptr)).c_str());\n")
real_src += struct_lines() + "\n}\n"
real, err = program(os.path.join(work, "toolkit.cpp"), real_src, include)
if real is None:
    # Name the constants or entry points the toolkit lacks.
    unknown = sorted(set(re.findall(r"'(\w+)' was not declared", err)))
    check(False, "every constant and entry point the runtime names is in the toolkit's headers",
          ", ".join(unknown) or err)
    finish()

wrong = [f"{name} ({header}) = {value}, the toolkit's {toolkit_name(name)} = "
         f"{real['const:' + name]}"
         for header, name, value in constants if int(real["const:" + name]) != value]
check(not wrong, f"{len(constants)} constants equal the toolkit's", "; ".join(wrong))

wrong = []
for name, (symbol, sig) in entries.items():
    real_symbol, real_sig = real["entry:" + name].split(" ")
    if sig != real_sig:
        wrong.append(f"{name}: the runtime's {sig}, the toolkit's {real_sig}")
    if symbol != "-" and symbol.strip('"') != real_symbol:
        wrong.append(f"{name}: the runtime looks up {symbol}, cuda.h binds {real_symbol}")
check(not wrong, f"{len(entries)} entry points called as the toolkit declares them "
      "(arity, each parameter's size and class; the driver's symbol versions)", "; ".join(wrong))

wrong = [f"{k[len('struct:'):] if k.startswith('struct:') else k[len('field:'):]}: "
         f"the runtime's {v}, the toolkit's {real[k]}"
         for k, v in ours.items() if k.startswith(("struct:", "field:")) and real[k] != v]
check(not wrong, f"{len(STRUCTS)} structs laid out as the toolkit's (size, field offsets)",
      "; ".join(wrong))
finish()
