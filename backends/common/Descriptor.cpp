//===- Descriptor.cpp - the artifact's descriptor, header and files -------===//

#include "backends/common/Descriptor.h"

#include "kiln/kiln_model_abi.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <set>

namespace kiln::artifact {

// kModelAbiHeader: runtime/include/kiln/kiln_model_abi.h, embedded at build
// time, so the compiler needs no include folder of its own.
#include "ModelAbiHeader.inc"

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

int32_t dtypeOf(mlir::Type t) {
  if (t.isF32()) return KILN_DTYPE_F32;
  if (t.isF64()) return KILN_DTYPE_F64;
  if (t.isF16()) return KILN_DTYPE_F16;
  if (t.isBF16()) return KILN_DTYPE_BF16;
  if (t.isInteger(1)) return KILN_DTYPE_BOOL;
  if (t.isUnsignedInteger(8)) return KILN_DTYPE_U8;
  if (t.isUnsignedInteger(16)) return KILN_DTYPE_U16;
  if (t.isUnsignedInteger(32)) return KILN_DTYPE_U32;
  if (t.isUnsignedInteger(64)) return KILN_DTYPE_U64;
  if (t.isInteger(8)) return KILN_DTYPE_I8;
  if (t.isInteger(16)) return KILN_DTYPE_I16;
  if (t.isInteger(32)) return KILN_DTYPE_I32;
  if (t.isInteger(64)) return KILN_DTYPE_I64;
  if (llvm::isa<mlir::Float8E4M3FNType>(t)) return KILN_DTYPE_F8E4M3FN;
  if (llvm::isa<mlir::Float8E4M3FNUZType>(t)) return KILN_DTYPE_F8E4M3FNUZ;
  if (llvm::isa<mlir::Float8E5M2Type>(t)) return KILN_DTYPE_F8E5M2;
  if (llvm::isa<mlir::Float8E5M2FNUZType>(t)) return KILN_DTYPE_F8E5M2FNUZ;
  if (llvm::isa<mlir::Float8E8M0FNUType>(t)) return KILN_DTYPE_F8E8M0;
  if (llvm::isa<mlir::Float4E2M1FNType>(t)) return KILN_DTYPE_F4E2M1;
  if (t.isUnsignedInteger(4)) return KILN_DTYPE_U4;
  if (t.isInteger(4)) return KILN_DTYPE_I4;
  if (t.isUnsignedInteger(2)) return KILN_DTYPE_U2;
  if (t.isInteger(2)) return KILN_DTYPE_I2;
  return 0;
}

int32_t dtypeOf(const ModelTensor &t) {
  return t.string ? KILN_DTYPE_STRING : dtypeOf(t.elementType);
}

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
#define KILN_DTYPE_SIZE(NAME, VALUE, BYTES, TEXT)                                               \
  case KILN_DTYPE_##NAME:                                                                      \
    return BYTES;
    KILN_DTYPES(KILN_DTYPE_SIZE)
#undef KILN_DTYPE_SIZE
  }
  return 0;
}

std::string quoted(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// `text` and a terminating zero as a C initializer list (any bytes).
static std::string byteList(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    out += std::to_string(static_cast<unsigned char>(c)) + ",";
  return out + "0";
}

static int32_t libraryKind(LibraryKind kind) {
  switch (kind) {
  case LibraryKind::Convolution: return KILN_LIBRARY_CONV;
  case LibraryKind::Matmul: return KILN_LIBRARY_MATMUL;
  case LibraryKind::Pool: return KILN_LIBRARY_POOL;
  case LibraryKind::Concat: return KILN_LIBRARY_CONCAT;
  case LibraryKind::Scale: return KILN_LIBRARY_SCALE;
  }
  return 0;
}

static int32_t activationOf(LibraryActivation activation) {
  switch (activation) {
  case LibraryActivation::None: return KILN_ACTIVATION_NONE;
  case LibraryActivation::Relu: return KILN_ACTIVATION_RELU;
  case LibraryActivation::Clip: return KILN_ACTIVATION_CLIP;
  case LibraryActivation::Sigmoid: return KILN_ACTIVATION_SIGMOID;
  case LibraryActivation::Tanh: return KILN_ACTIVATION_TANH;
  case LibraryActivation::GeluErf: return KILN_ACTIVATION_GELU_ERF;
  case LibraryActivation::GeluTanh: return KILN_ACTIVATION_GELU_TANH;
  case LibraryActivation::Silu: return KILN_ACTIVATION_SILU;
  case LibraryActivation::HardSigmoid: return KILN_ACTIVATION_HARDSIGMOID;
  case LibraryActivation::HardSwish: return KILN_ACTIVATION_HARDSWISH;
  }
  return KILN_ACTIVATION_NONE;
}

/// A call's parameters in its kind's layout (kiln_model_abi.h).
static std::vector<int64_t> libraryParams(const LibraryCall &call) {
  std::vector<int64_t> params;
  if (call.kind == LibraryKind::Convolution) {
    std::vector<int64_t> groups = call.param("groups");
    params.push_back(groups.empty() ? 1 : groups.front());
    for (const char *name : {"strides", "dilations", "pads", "layouts", "output_batch_stride"}) {
      std::vector<int64_t> values = call.param(name);
      params.insert(params.end(), values.begin(), values.end());
    }
  } else if (call.kind == LibraryKind::Pool) {
    for (const char *name : {"algorithm", "kernel", "strides", "pads", "layouts"}) {
      std::vector<int64_t> values = call.param(name);
      params.insert(params.end(), values.begin(), values.end());
    }
  } else if (call.kind == LibraryKind::Matmul) {
    std::vector<int64_t> values = call.param("transposes");
    params.insert(params.end(), values.begin(), values.end());
  } else if (call.kind == LibraryKind::Scale) {
    std::vector<int64_t> values = call.param("layouts");
    params.insert(params.end(), values.begin(), values.end());
  } else if (call.kind == LibraryKind::Concat) {
    for (const char *name : {"axis", "layouts"}) {
      std::vector<int64_t> values = call.param(name);
      params.insert(params.end(), values.begin(), values.end());
    }
  }
  return params;
}

LibraryCallRecord::LibraryCallRecord(const LibraryCall &call, const void *weights) {
  std::vector<const std::vector<int64_t> *> operands = call.operands();
  dims.resize(operands.size());
  dimPointers.resize(operands.size());
  ranks.resize(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) {
    dims[k] = *operands[k];
    dimPointers[k] = dims[k].data();
    ranks[k] = static_cast<int32_t>(dims[k].size());
  }
  params = libraryParams(call);
  record = {};
  record.kind = libraryKind(call.kind);
  record.num_operands = static_cast<int32_t>(operands.size());
  record.operand_ranks = ranks.data();
  record.operand_dims = dimPointers.data();
  record.num_params = static_cast<int32_t>(params.size());
  record.params = params.data();
  record.epilogue = {call.epilogue.bias, call.epilogue.residual,
                     activationOf(call.epilogue.activation), call.epilogue.alpha,
                     call.epilogue.beta};
  record.weights = weights;
}

std::string descriptorSource(const ArtifactContents &contents, const DescriptorFields &fields) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto array = [&](const std::string &name, const std::vector<int64_t> &v) {
    os << "static const int64_t " << name << "[] = {";
    for (size_t i = 0; i < v.size(); ++i)
      os << (i ? ", " : "") << v[i];
    os << (v.empty() ? "0" : "") << "};\n";
  };
  auto tensorTable = [&](const char *what, const std::vector<ModelTensor> &list) {
    for (size_t i = 0; i < list.size(); ++i)
      array(what + std::to_string(i) + "_dims", list[i].dims);
    os << "static const kiln_model_tensor " << what << "s[] = {\n";
    for (size_t i = 0; i < list.size(); ++i)
      os << "  {" << quoted(list[i].name) << ", " << dtypeOf(list[i]) << ", "
         << list[i].dims.size() << ", " << what << i << "_dims},\n";
    if (list.empty())
      os << "  {0, 0, 0, 0},\n";
    os << "};\n";
  };
  tensorTable("input", contents.inputs);
  tensorTable("output", contents.outputs);
  // Each call: its operands' ranks and dims, its parameters in the
  // kind's layout (kiln_library_kind), its epilogue.
  for (size_t i = 0; i < contents.libraryCalls.size(); ++i) {
    const LibraryCall &c = contents.libraryCalls[i];
    std::string p = "call" + std::to_string(i) + "_";
    std::vector<const std::vector<int64_t> *> operands = c.operands();
    std::string ranks, dims;
    for (size_t k = 0; k < operands.size(); ++k) {
      array(p + "operand" + std::to_string(k), *operands[k]);
      ranks += (k ? ", " : "") + std::to_string(operands[k]->size());
      dims += (k ? ", " : "") + p + "operand" + std::to_string(k);
    }
    os << "static const int32_t " << p << "ranks[] = {" << ranks << "};\n"
       << "static const int64_t *const " << p << "dims[] = {" << dims << "};\n";
    array(p + "params", libraryParams(c));
  }
  // Constant weights: the code defines them (hidden in the artifact).
  std::set<std::string> declared;
  for (const LibraryCall &c : contents.libraryCalls)
    if (!c.weightsSymbol.empty() && declared.insert(c.weightsSymbol).second)
      os << "extern const char " << c.weightsSymbol
         << "[] __attribute__((visibility(\"hidden\")));\n";
  for (size_t i = 0; i < contents.libraryCalls.size(); ++i)
    if (!contents.libraryCalls[i].weightsLayout.empty()) {
      const std::string &layout = contents.libraryCalls[i].weightsLayout;
      os << "static const unsigned char call" << i << "_layout[] = {"
         << byteList(layout) << "};\n";
    }
  os << "static const kiln_library_call library_calls[] = {\n";
  for (size_t i = 0; i < contents.libraryCalls.size(); ++i) {
    const LibraryCall &c = contents.libraryCalls[i];
    std::string p = "call" + std::to_string(i) + "_";
    os << "  {" << libraryKind(c.kind) << ", " << c.operands().size() << ", " << p << "ranks, "
       << p << "dims, "
       << libraryParams(c).size() << ", " << p << "params, {" << c.epilogue.bias << ", "
       << c.epilogue.residual << ", " << activationOf(c.epilogue.activation) << ", "
       << llvm::format("%.9ef", c.epilogue.alpha) << ", "
       << llvm::format("%.9ef", c.epilogue.beta) << "}, "
       << (c.weightsSymbol.empty() ? std::string("0") : c.weightsSymbol) << ", "
       << (c.weightsLayout.empty() ? std::string("0, 0")
                                   : p + "layout, " + std::to_string(c.weightsLayout.size()))
       << "},\n";
  }
  if (contents.libraryCalls.empty())
    os << "  {0, 0, 0, 0, 0, 0, {0, 0, 0, 0.0f, 0.0f}, 0, 0, 0},\n";
  os << "};\n\n";
  std::vector<int64_t> buckets(contents.batchBuckets.begin(), contents.batchBuckets.end());
  // Session-owned tensors: their initial bytes are constants of the
  // artifact (kiln_state_initial_<k>, written by writeArtifact).
  auto initialSymbol = [&](size_t k) {
    int64_t shared = contents.sessionTensors[k].sharedInitial;
    return "kiln_state_initial_" + std::to_string(shared >= 0 ? shared : int64_t(k));
  };
  for (size_t k = 0; k < contents.sessionTensors.size(); ++k)
    os << "extern const char " << initialSymbol(k)
       << "[] __attribute__((visibility(\"hidden\")));\n";
  os << "static const kiln_model_state session_tensors[] = {";
  for (size_t k = 0; k < contents.sessionTensors.size(); ++k)
    os << (k ? ", " : "") << "{" << contents.sessionTensors[k].input << "u, "
       << contents.sessionTensors[k].output << "u, " << initialSymbol(k) << "}";
  if (contents.sessionTensors.empty())
    os << "{0, 0, 0}";
  os << "};\n";
  os << "static const uint64_t batch_buckets[] = {";
  for (size_t i = 0; i < buckets.size(); ++i)
    os << (i ? ", " : "") << buckets[i] << "u";
  os << (buckets.empty() ? "0" : "") << "};\n"
     << "static const char report[] = {" << byteList(contents.report) << "};\n";
  if (!contents.inferenceSymbol.empty())
    os << "extern const kiln_model_v1 " << contents.inferenceSymbol
       << " __attribute__((visibility(\"hidden\")));\n";
  os << "__attribute__((visibility(\"default\"))) const kiln_model_v1 "
     << contents.descriptorSymbol << " = {\n"
     << "  KILN_MODEL_MAGIC, KILN_MODEL_ABI_VERSION, " << contents.inputs.size() << ", "
     << contents.outputs.size() << ", inputs, outputs,\n  " << quoted(contents.contentHash)
     << ", " << quoted(contents.target) << ", " << contents.libraryCalls.size()
     << ", library_calls, " << contents.arenaBytes << "u, " << contents.maxBatch
     << "u, report,\n  " << fields.device << "u, " << quoted(fields.requiredFeatures) << ", "
     << buckets.size() << "u, batch_buckets, " << contents.stackBytes << "u, "
     << contents.sessionTensors.size() << "u, session_tensors, " << fields.runFunction << ", "
     << (contents.inferenceSymbol.empty() ? std::string("0") : "&" + contents.inferenceSymbol)
     << ", " << (fields.gpuCode.empty() ? std::string("0") : fields.gpuCode) << "};\n";
  return s;
}

std::string headerSource(const ArtifactContents &contents, llvm::StringRef stem) {
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string guard = "KILN_MODEL_" + stem.upper() + "_H";
  for (char &c : guard)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  os << "/* Generated by kiln. Model content hash: " << contents.contentHash << "\n"
     << " * Link this artifact and pass &kiln_model_descriptor to kiln_model_from_abi(),\n"
     << " * or load the shared library with kiln_model_load(). */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"kiln/kiln_model_abi.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "extern const kiln_model_v1 kiln_model_descriptor;\n\n";
  auto describe = [&](const char *what, const std::vector<ModelTensor> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      os << "/* " << what << " " << i << ": " << list[i].name << " dtype "
         << dtypeOf(list[i]) << " dims [";
      for (size_t d = 0; d < list[i].dims.size(); ++d)
        os << (d ? ", " : "")
           << (list[i].dims[d] < 0 ? std::string("?") : std::to_string(list[i].dims[d]));
      os << "] */\n";
    }
  };
  describe("input", contents.inputs);
  describe("output", contents.outputs);
  os << "/* arena: " << contents.arenaBytes << " bytes */\n";
  if (contents.maxBatch)
    os << "/* batches up to " << contents.maxBatch << " (dim 0 of dynamic inputs) */\n";
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return s;
}

/// Closes `os`, the file at `path`: an error naming it if any write failed
/// (a full disk, a file-size limit), instead of LLVM's abort when a stream
/// with an error is destroyed.
static llvm::Error closeChecked(llvm::raw_fd_ostream &os, llvm::StringRef path) {
  os.close();
  if (!os.has_error())
    return llvm::Error::success();
  std::string message = os.error().message();
  os.clear_error();
  return error("cannot write '" + path + "': " + message);
}

static llvm::Error writeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  os << contents;
  return closeChecked(os, path);
}

/// Runs a program; fails with its name and arguments when it does.
static llvm::Error runTool(llvm::StringRef program, llvm::ArrayRef<std::string> args) {
  auto found = llvm::sys::findProgramByName(program);
  if (!found)
    return error("cannot find '" + program + "' to link the artifact");
  std::vector<llvm::StringRef> argv = {*found};
  for (const std::string &a : args)
    argv.push_back(a);
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*found, argv, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    std::string line = program.str();
    for (const std::string &a : args)
      line += " " + a;
    return error("'" + line + "' failed (" + std::to_string(rc) + ")" +
                 (message.empty() ? "" : ": " + message));
  }
  return llvm::Error::success();
}

/// The constants as one blob, written as it is laid out (never held whole
/// in memory: the weights may be gigabytes), and an assembler file that
/// defines each symbol over its slice (`.incbin` by the blob's absolute
/// path: the assembler looks in its working folder first, where a file of
/// the same name must not be taken), hidden, in read-only data (the large
/// ones in the large read-only section, .lrodata).
static llvm::Error writeConstants(llvm::ArrayRef<ConstantBlob> constants, llvm::StringRef work,
                                  std::string &object) {
  llvm::SmallString<128> absolute(work);
  if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
    return error("cannot resolve '" + work + "': " + ec.message());
  std::string blobPath = (absolute + "/constants.bin").str();
  std::error_code ec;
  llvm::raw_fd_ostream blob(blobPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return error("cannot write '" + blobPath + "': " + ec.message());
  std::string blobName = quoted(blobPath); // C's escapes are the assembler's
  std::string assembly;
  llvm::raw_string_ostream as(assembly);
  uint64_t offset = 0;
  for (bool large : {false, true}) {
    bool opened = false;
    for (const ConstantBlob &c : constants) {
      if (c.large != large)
        continue;
      if (!opened)
        as << (large ? "\t.section .lrodata.kiln_constants,\"al\",@progbits\n"
                     : "\t.section .rodata.kiln_constants,\"a\",@progbits\n");
      opened = true;
      uint64_t align = std::max<uint64_t>(c.alignment, 64);
      uint64_t aligned = (offset + align - 1) / align * align;
      blob.write_zeros(aligned - offset);
      offset = aligned;
      as << "\t.balign " << align << "\n\t.globl " << c.symbol << "\n\t.hidden " << c.symbol
         << "\n\t.type " << c.symbol << ",@object\n\t.size " << c.symbol << ", "
         << c.bytes.size() << "\n"
         << c.symbol << ":\n\t.incbin " << blobName << ", " << offset << ", " << c.bytes.size()
         << "\n";
      blob.write(c.bytes.data(), c.bytes.size());
      offset += c.bytes.size();
    }
  }
  as << "\t.section .note.GNU-stack,\"\",@progbits\n";
  if (llvm::Error e = closeChecked(blob, blobPath))
    return e;
  std::string source = (work + "/constants.s").str();
  object = (work + "/constants.o").str();
  if (llvm::Error e = writeFile(source, assembly))
    return e;
  return runTool("cc", {"-c", source, "-o", object});
}

llvm::Error writeArtifact(llvm::StringRef object, llvm::StringRef entrySource,
                          const ArtifactContents &contents,
                          llvm::ArrayRef<ConstantBlob> constants) {
  llvm::StringRef outputPath = contents.outputPath;
  llvm::StringRef ext = llvm::sys::path::extension(outputPath);
  if (ext != ".so" && ext != ".a" && ext != ".o")
    return error("the output must end in .so, .a or .o, got '" + outputPath + "'");
  // What the runtime would refuse to load is refused here, by name.
  for (const auto &[what, list] : {std::pair{"input", &contents.inputs},
                                   std::pair{"output", &contents.outputs}})
    for (const ModelTensor &t : *list)
      if (t.dims.size() > KILN_MAX_RANK)
        return error(std::string(what) + " '" + t.name + "' has rank " +
                     std::to_string(t.dims.size()) + "; Kiln's runtime takes tensors of rank " +
                     "at most " + std::to_string(KILN_MAX_RANK));
  llvm::SmallString<128> work;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-artifact", work))
    return error("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(work); });
  std::string modelObject = (work + "/model.o").str();
  std::string entryFile = (work + "/entry.c").str();
  std::string entryObject = (work + "/entry.o").str();
  if (llvm::Error e = writeFile(modelObject, object))
    return e;
  if (llvm::Error e = writeFile(entryFile, entrySource))
    return e;
  // The entry file's one Kiln header, from the compiler's own copy.
  llvm::SmallString<128> includeDir(work);
  llvm::sys::path::append(includeDir, "include", "kiln");
  if (std::error_code ec = llvm::sys::fs::create_directories(includeDir))
    return error("cannot create '" + includeDir + "': " + ec.message());
  if (llvm::Error e = writeFile((includeDir + "/kiln_model_abi.h").str(), kModelAbiHeader))
    return e;
  // -ffile-prefix-map keeps the temporary path out of the output, so the
  // same model compiles to the same bytes. POSIX 2008 for the string
  // functions (strnlen, regcomp); a function called undeclared is an error,
  // not a guess at its type.
  if (llvm::Error e = runTool("cc", {"-c", "-O2", "-fPIC", "-std=c11", "-D_POSIX_C_SOURCE=200809L",
                                     "-Werror=implicit-function-declaration",
                                     "-ffile-prefix-map=" + work.str().str() + "=.",
                                     "-I", (work + "/include").str(), entryFile, "-o",
                                     entryObject}))
    return e;
  std::vector<std::string> objects = {modelObject, entryObject};
  std::vector<ConstantBlob> allConstants(constants.begin(), constants.end());
  if (!contents.inferenceObject.empty())
    objects.push_back(contents.inferenceObject);
  for (size_t k = 0; k < contents.sessionTensors.size(); ++k) {
    if (contents.sessionTensors[k].sharedInitial >= 0)
      continue;
    ConstantBlob blob;
    blob.symbol = "kiln_state_initial_" + std::to_string(k);
    blob.bytes = contents.sessionTensors[k].initial;
    allConstants.push_back(std::move(blob));
  }
  if (!allConstants.empty()) {
    std::string constantsObject;
    if (llvm::Error e = writeConstants(allConstants, work, constantsObject))
      return e;
    objects.push_back(constantsObject);
  }
  // Linked to a temporary name beside the output, renamed at the end: a
  // compile that fails (or is killed) half way leaves no partial artifact
  // at the output path.
  llvm::SmallString<128> partial(outputPath);
  partial += ".partial";
  llvm::SmallString<128> header(outputPath);
  llvm::sys::path::replace_extension(header, ".h");
  llvm::SmallString<128> partialHeader(header);
  partialHeader += ".partial";
  llvm::scope_exit removePartial([&] {
    llvm::sys::fs::remove(partial);
    llvm::sys::fs::remove(partialHeader);
  });
  auto withObjects = [&](std::vector<std::string> args,
                         std::vector<std::string> libraries = {}) {
    args.insert(args.end(), objects.begin(), objects.end());
    args.insert(args.end(), libraries.begin(), libraries.end());
    return args;
  };
  if (ext == ".so") {
    // Libraries after the objects that need them (the linker drops an
    // -lm it meets first).
    // The file's name as its soname: a program linked against the
    // artifact (kiln_add_model) finds it by name on its run path.
    std::string soname = "-Wl,-soname," + llvm::sys::path::filename(outputPath).str();
    if (llvm::Error e = runTool("cc", withObjects({"-shared", "-o", partial.str().str(),
                                                   "-Wl,--build-id=sha1", soname},
                                                  {"-lm"})))
      return e;
  } else if (ext == ".o") {
    if (llvm::Error e = runTool("ld", withObjects({"-r", "-o", partial.str().str()})))
      return e;
    // An entry linked into another artifact keeps only its descriptor
    // global: its code's symbols (the same names in every entry) go local.
    if (contents.descriptorSymbol != "kiln_model_descriptor")
      if (llvm::Error e = runTool("objcopy", {"--keep-global-symbol=" + contents.descriptorSymbol,
                                              partial.str().str()}))
        return e;
  } else {
    llvm::sys::fs::remove(partial);
    if (llvm::Error e = runTool("ar", withObjects({"rcsD", partial.str().str()})))
      return e;
  }
  if (llvm::Error e =
          writeFile(partialHeader, headerSource(contents, llvm::sys::path::stem(outputPath))))
    return e;
  if (std::error_code ec = llvm::sys::fs::rename(partial, outputPath))
    return error("cannot write '" + outputPath + "': " + ec.message());
  if (std::error_code ec = llvm::sys::fs::rename(partialHeader, header))
    return error("cannot write '" + header + "': " + ec.message());
  return llvm::Error::success();
}

} // namespace kiln::artifact
