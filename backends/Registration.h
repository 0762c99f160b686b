//===- Registration.h - every backend Kiln is built with --------*- C++ -*-===//

#ifndef KILN_BACKENDS_REGISTRATION_H
#define KILN_BACKENDS_REGISTRATION_H

namespace kiln {

/// Registers every backend with the driver (tools call this once), and
/// their passes and pipelines with MLIR's registry (for kiln-opt).
void registerAllBackends();

} // namespace kiln

#endif // KILN_BACKENDS_REGISTRATION_H
