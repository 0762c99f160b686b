//===- Backend.cpp - the backend registry ---------------------------------===//

#include "compiler/Target/Backend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <map>

namespace kiln {

Backend::~Backend() = default;

std::string Backend::codeSummary(mlir::ModuleOp, const ArtifactContents &contents) const {
  return "kernels: " + std::to_string(contents.libraryCalls.size()) + " library calls";
}

llvm::Error Backend::unknownSetting(llvm::StringRef key) const {
  std::string known;
  for (const auto &[k, help] : settingsHelp())
    known += (known.empty() ? "" : ", ") + k;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the " + name().str() + " target has no setting '" + key.str() +
                                     "' (known: " + known + ")");
}

static std::map<std::string, std::unique_ptr<Backend>> &registry() {
  static std::map<std::string, std::unique_ptr<Backend>> backends;
  return backends;
}

void registerBackend(std::unique_ptr<Backend> backend) {
  std::string name = backend->name().str();
  // Registering twice (two tools' start-up paths) keeps the first.
  registry().emplace(std::move(name), std::move(backend));
}

const Backend *lookupBackend(llvm::StringRef name) {
  auto it = registry().find(name.str());
  return it == registry().end() ? nullptr : it->second.get();
}

std::vector<std::string> registeredBackendNames() {
  std::vector<std::string> names;
  for (const auto &entry : registry())
    names.push_back(entry.first);
  return names;
}

std::vector<const std::vector<int64_t> *> LibraryCall::operands() const {
  std::vector<const std::vector<int64_t> *> list = {&input};
  for (const std::vector<int64_t> &more : moreInputs)
    list.push_back(&more);
  if (kind == LibraryKind::Convolution || kind == LibraryKind::Matmul || kind == LibraryKind::Scale)
    list.push_back(&weight);
  list.push_back(&output);
  return list;
}

std::string LibraryCall::summary() const {
  static const char *activations[] = {"",      "+relu", "+clip",      "+sigmoid",
                                      "+tanh", "+gelu", "+gelu_tanh", "+silu",
                                      "+hardsigmoid", "+hardswish"};
  const char *name = kind == LibraryKind::Convolution ? "conv"
                     : kind == LibraryKind::Matmul    ? "matmul"
                     : kind == LibraryKind::Concat    ? "concat"
                     : kind == LibraryKind::Scale     ? "scale"
                     : param("algorithm") == std::vector<int64_t>{0} ? "maxpool"
                                                                     : "avgpool";
  std::vector<int64_t> transposes = param("transposes");
  std::string operands;
  if (transposes.size() == 2 && (transposes[0] || transposes[1]))
    operands = transposes[0] && transposes[1] ? "(A^T, B^T)" : transposes[0] ? "(A^T)" : "(B^T)";
  return std::string(name) + operands +
         (epilogue.bias ? "+bias" : "") + (epilogue.residual ? "+residual" : "") +
         activations[static_cast<int>(epilogue.activation)] +
         (layoutNote.empty() ? "" : " (reorders " + layoutNote + ")");
}

} // namespace kiln
