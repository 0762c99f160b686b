// Unit tests of the compile driver as a library (compiler/Driver), the way
// a tool or a service calls it: backends by name, kiln IR from files, the
// import contract, stopping after a phase, and the content hash that does
// not depend on the form the model came in.
#include "backends/Registration.h"
#include "compiler/Driver/Driver.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {
/// A temporary folder with a small model in kiln IR (as `kiln import`
/// writes it), removed afterwards.
struct DriverFixture {
  llvm::SmallString<128> dir;
  DriverFixture() {
    registerAllBackends();
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("kiln-driver-test", dir));
  }
  ~DriverFixture() { llvm::sys::fs::remove_directories(dir); }

  std::string write(llvm::StringRef name, llvm::StringRef text) {
    std::string path = (dir + "/" + name).str();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    REQUIRE(!ec);
    os << text;
    return path;
  }
  std::string read(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    REQUIRE(buffer);
    return (*buffer)->getBuffer().str();
  }
};

const char *kModel = R"mlir(
func.func @main(%x: tensor<?x4xf32> {kiln.name = "x"}, %w: tensor<4x3xf32> {kiln.name = "w"})
    -> (tensor<?x3xf32> {kiln.name = "y"}) {
  %m = kiln.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %y = kiln.relu %m : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
)mlir";

std::string errorText(llvm::Error error) { return llvm::toString(std::move(error)); }
} // namespace

TEST_CASE_METHOD(DriverFixture, "driver: an unknown target is an error naming the known ones",
                 "[driver]") {
  auto backend = driver::findBackend("tpu");
  REQUIRE(!bool(backend));
  CHECK(errorText(backend.takeError()) == "unknown target 'tpu' (known: cpu, cuda)");
  auto cpu = driver::findBackend("cpu");
  REQUIRE(bool(cpu));
  CHECK((*cpu)->name() == "cpu");
}

TEST_CASE_METHOD(DriverFixture, "driver: a backend refuses a setting it does not take",
                 "[driver]") {
  auto source = driver::createIrFileSource(write("model.mlir", kModel));
  driver::CompileOptions options;
  options.outputPath = (dir + "/model.so").str();
  options.targetOptions.settings["unroll"] = "4";
  auto summary = driver::compile(*source, options);
  REQUIRE(!bool(summary));
  CHECK(errorText(summary.takeError()) ==
        "the cpu target has no setting 'unroll' (known: cpu, conv-post-ops, conv-layout, prepack)");
}

TEST_CASE_METHOD(DriverFixture, "driver: kiln IR as text or bytecode gives the same artifact",
                 "[driver]") {
  std::string text = write("model.mlir", kModel);
  auto fromText = driver::createIrFileSource(text);
  std::string bytecode = (dir + "/model.mlirbc").str();
  REQUIRE(errorText(driver::importModel(*fromText, Phase::Import, bytecode)).empty());

  // The same file name in two folders: an artifact's name is its soname.
  REQUIRE(!llvm::sys::fs::create_directories(dir + "/a"));
  REQUIRE(!llvm::sys::fs::create_directories(dir + "/b"));
  driver::CompileOptions options;
  options.outputPath = (dir + "/a/model.so").str();
  auto first = driver::compile(*fromText, options);
  REQUIRE(bool(first));
  auto fromBytecode = driver::createIrFileSource(bytecode);
  options.outputPath = (dir + "/b/model.so").str();
  auto second = driver::compile(*fromBytecode, options);
  REQUIRE(bool(second));
  CHECK(first->contentHash.size() == 64);
  CHECK(first->contentHash == second->contentHash);
  CHECK(read((dir + "/a/model.so").str()) == read((dir + "/b/model.so").str()));
  CHECK(llvm::StringRef(first->target).starts_with("x86_64"));
  CHECK(llvm::StringRef(first->report).contains("memory: arena"));

  // A flag that changes the code changes the hash.
  options.targetOptions.libraries = false;
  options.outputPath = (dir + "/c.so").str();
  auto third = driver::compile(*fromBytecode, options);
  REQUIRE(bool(third));
  CHECK(third->contentHash != first->contentHash);
}

TEST_CASE_METHOD(DriverFixture, "driver: IR that breaks the import contract is refused",
                 "[driver]") {
  auto source = driver::createIrFileSource(write("unnamed.mlir", R"mlir(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
)mlir"));
  driver::CompileOptions options;
  options.outputPath = (dir + "/unnamed.so").str();
  auto summary = driver::compile(*source, options);
  REQUIRE(!bool(summary));
  CHECK(llvm::StringRef(errorText(summary.takeError()))
            .contains("is not kiln IR as the import phase leaves it"));
}

TEST_CASE_METHOD(DriverFixture, "driver: stops after a phase and prints its IR", "[driver]") {
  auto source = driver::createIrFileSource(write("model.mlir", kModel));
  std::string ir;
  llvm::raw_string_ostream os(ir);
  driver::CompileOptions options;
  options.stopAfter = Phase::Plan;
  options.irOutput = &os;
  auto summary = driver::compile(*source, options);
  REQUIRE(bool(summary));
  CHECK(summary->contentHash.empty());
  CHECK(llvm::StringRef(ir).contains("kiln.memory_plan"));
  CHECK(llvm::StringRef(ir).contains("call @kiln_library_call_0("));
  CHECK(!llvm::StringRef(ir).contains("tensor<"));
}

TEST_CASE_METHOD(DriverFixture, "driver: a file that is not MLIR is an error, not a crash",
                 "[driver]") {
  auto source = driver::createIrFileSource(write("junk.mlirbc", "ML\xefR garbage"));
  driver::CompileOptions options;
  options.outputPath = (dir + "/junk.so").str();
  auto summary = driver::compile(*source, options);
  REQUIRE(!bool(summary));
  CHECK(llvm::StringRef(errorText(summary.takeError())).contains("cannot be imported"));
  auto missing = driver::createIrFileSource((dir + "/none.mlir").str());
  auto none = driver::compile(*missing, options);
  REQUIRE(!bool(none));
  CHECK(llvm::StringRef(errorText(none.takeError())).contains("cannot read"));
}
