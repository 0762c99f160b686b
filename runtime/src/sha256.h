/* sha256.h - SHA-256 (FIPS 180-4) for checking an artifact's bytes before
 * it is loaded (kiln_model_load_verified). */
#ifndef KILN_RUNTIME_SHA256_H
#define KILN_RUNTIME_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The digest of `bytes` as 64 lowercase hex digits and a NUL. */
void kiln_sha256_hex(const void *bytes, size_t size, char hex[65]);

#endif /* KILN_RUNTIME_SHA256_H */
