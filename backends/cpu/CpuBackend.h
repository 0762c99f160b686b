//===- CpuBackend.h - the CPU target ----------------------------*- C++ -*-===//

#ifndef KILN_BACKENDS_CPU_CPUBACKEND_H
#define KILN_BACKENDS_CPU_CPUBACKEND_H

namespace kiln::cpu {

/// Registers the `cpu` backend with the driver's registry.
void registerCpuBackend();

} // namespace kiln::cpu

#endif // KILN_BACKENDS_CPU_CPUBACKEND_H
