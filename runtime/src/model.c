/*===- model.c - loading artifacts: models and their descriptors ----------===*
 *
 * A model is a loaded artifact: its file checked (ELF headers against the
 * file's size, the SHA-256 when one is given), opened with dlopen (or a
 * descriptor linked into the program), its descriptor's magic, version
 * and tables checked (descriptor_check.c), and the device it names asked
 * whether this host can run it. Sessions (kiln_runtime.c) hold references
 * to their model; the model and its code go with the last.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "kiln/kiln.h"
#include "descriptor_check.h"
#include "devices/device.h"
#include "session.h"
#include "sha256.h"

#include <unistd.h>

#include <dlfcn.h>
#include <elf.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kiln_model_retain(kiln_model *model) {
  __atomic_add_fetch(&model->owner->references, 1, __ATOMIC_RELAXED);
}

void kiln_model_release(kiln_model *model) {
  model = model->owner;
  if (__atomic_sub_fetch(&model->references, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  if (model->library)
    dlclose(model->library);
  if (model->memory_file >= 0)
    close(model->memory_file);
  free(model->inference);
  free(model);
}

/* A model for a checked descriptor, with its inference entry if it has
 * one; NULL when out of memory. */
static kiln_model *new_model(void *library, const kiln_model_v1 *abi,
                             const kiln_device *device, int memory_file) {
  kiln_model *m = calloc(1, sizeof(*m));
  kiln_model *entry = abi->inference ? calloc(1, sizeof(*entry)) : NULL;
  if (!m || (abi->inference && !entry)) {
    free(m);
    free(entry);
    return NULL;
  }
  m->library = library;
  m->abi = abi;
  m->device = device;
  m->references = 1;
  m->memory_file = memory_file;
  m->owner = m;
  if (entry) {
    entry->abi = abi->inference;
    entry->device = device;
    entry->memory_file = -1;
    entry->owner = m;
    m->inference = entry;
  }
  return m;
}

kiln_model *kiln_model_inference(const kiln_model *model) {
  return model ? model->inference : NULL;
}

/* The device the descriptor names, after it has checked that this host
 * can run the code (machine, processor features, vendor libraries). */
static kiln_status find_device(const kiln_model_v1 *abi, const char *what, unsigned elf_machine,
                               const kiln_device **device) {
  *device = kiln_device_for(abi->device);
  if (!*device)
    return kiln_fail(KILN_ERROR_LOAD,
                     "%s: compiled for device kind %u, which this runtime does not have (it "
                     "has: %s)",
                     what, abi->device, kiln_device_names());
  return (*device)->check_model(abi, what, elf_machine);
}

kiln_status kiln_model_from_abi(const kiln_model_v1 *abi, kiln_model **model) {
  if (!abi || !model)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_from_abi: null argument");
  kiln_status status = kiln_check_descriptor(abi, "linked model");
  const kiln_device *device = NULL;
  if (status == KILN_OK)
    status = find_device(abi, "linked model", 0, &device);
  if (status != KILN_OK)
    return status;
  kiln_model *m = new_model(NULL, abi, device, -1);
  if (!m)
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  *model = m;
  return kiln_ok();
}

/* The dynamic loader maps segments without checking that the file holds
 * them; a truncated library then crashes it (SIGBUS). Check the ELF
 * headers against the file's size first. */
static kiln_status check_elf(const char *path, unsigned *machine) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return kiln_fail(KILN_ERROR_LOAD, "cannot open '%s'", path);
  struct stat st;
  Elf64_Ehdr header;
  int ok = fstat(fileno(f), &st) == 0 && fread(&header, sizeof(header), 1, f) == 1;
  if (!ok || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64) {
    fclose(f);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': not a 64-bit ELF shared library", path);
  }
  uint64_t size = (uint64_t)st.st_size;
  /* Whether the machine is this host's is the device's to say. */
  *machine = header.e_machine;
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phoff + (uint64_t)header.e_phnum * sizeof(Elf64_Phdr) > size ||
      header.e_shoff + (uint64_t)header.e_shnum * header.e_shentsize > size) {
    fclose(f);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': the file is truncated (%llu bytes)", path,
                (unsigned long long)size);
  }
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (fseek(f, (long)(header.e_phoff + i * sizeof(segment)), SEEK_SET) != 0 ||
        fread(&segment, sizeof(segment), 1, f) != 1 ||
        (segment.p_type == PT_LOAD && segment.p_offset + segment.p_filesz > size)) {
      fclose(f);
      return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': the file is truncated (%llu bytes)",
                  path, (unsigned long long)size);
    }
  }
  fclose(f);
  return KILN_OK;
}

/* Loads the library at `open_path` (`path` names it in messages); the
 * model keeps `memory_file` (or -1) open until it goes. */
static kiln_status load_library(const char *open_path, const char *path, int memory_file,
                                kiln_model **model) {
  unsigned machine = 0;
  if (strchr(open_path, '/')) {
    kiln_status status = check_elf(open_path, &machine);
    if (status != KILN_OK)
      return status;
  }
  void *library = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': %s", path, dlerror());
  const kiln_model_v1 *abi = dlsym(library, "kiln_model_descriptor");
  if (!abi) {
    dlclose(library);
    return kiln_fail(KILN_ERROR_FORMAT, "'%s' is not a Kiln model (no kiln_model_descriptor symbol)",
                path);
  }
  const kiln_device *device = NULL;
  kiln_status status = kiln_check_descriptor(abi, path);
  if (status == KILN_OK)
    status = find_device(abi, path, machine, &device);
  if (status != KILN_OK) {
    dlclose(library);
    return status;
  }
  kiln_model *m = new_model(library, abi, device, memory_file);
  if (!m) {
    dlclose(library);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  *model = m;
  return kiln_ok();
}

kiln_status kiln_model_load(const char *path, kiln_model **model) {
  if (!path || !model)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_load: null argument");
  *model = NULL;
  /* A file name is a file, as at a shell ("model.so" in the current
   * folder); a bare name that is not a file ("libm.so.6") is left to the
   * loader's search path. */
  char local[4096];
  const char *open_path = path;
  if (!strchr(path, '/') && access(path, F_OK) == 0) {
    if (snprintf(local, sizeof local, "./%s", path) >= (int)sizeof local)
      return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': the path is too long", path);
    open_path = local;
  }
  return load_library(open_path, path, -1, model);
}

/* Reads the whole file at `path` into memory (at most 2^36 bytes). */
static kiln_status read_file(const char *path, unsigned char **bytes, size_t *size) {
  *bytes = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return kiln_fail(KILN_ERROR_LOAD, "cannot open '%s'", path);
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > ((off_t)1 << 36)) {
    fclose(f);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': not a regular file of at most 64 GiB",
                     path);
  }
  *size = (size_t)st.st_size;
  *bytes = malloc(*size ? *size : 1);
  if (!*bytes) {
    fclose(f);
    return kiln_fail(KILN_ERROR_OUT_OF_MEMORY, "cannot load '%s': out of memory", path);
  }
  size_t got = fread(*bytes, 1, *size, f);
  fclose(f);
  if (got != *size) {
    free(*bytes);
    *bytes = NULL;
    return kiln_fail(KILN_ERROR_LOAD, "cannot read '%s'", path);
  }
  return KILN_OK;
}

kiln_status kiln_model_load_verified(const char *path, const char *sha256, kiln_model **model) {
  if (!path || !sha256 || !model)
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_load_verified: null argument");
  *model = NULL;
  size_t digits = strspn(sha256, "0123456789abcdefABCDEF");
  if (digits != 64 || sha256[64] != '\0')
    return kiln_fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_model_load_verified: the expected hash must be a SHA-256 "
                     "digest, 64 hex digits");
  unsigned char *bytes;
  size_t size = 0;
  kiln_status status = read_file(path, &bytes, &size);
  if (status != KILN_OK)
    return status;
  char actual[65];
  kiln_sha256_hex(bytes, size, actual);
  if (strcasecmp(actual, sha256) != 0) {
    free(bytes);
    return kiln_fail(KILN_ERROR_VERIFY,
                     "'%s' has SHA-256 %s, not the expected %s; it was not loaded", path,
                     actual, sha256);
  }
  /* The bytes that were checked are the bytes that are loaded: a copy in
   * anonymous memory, so that the file changing after the check cannot
   * matter. */
  int fd = memfd_create("kiln-verified-model", MFD_CLOEXEC);
  size_t written = 0;
  while (fd >= 0 && written < size) {
    ssize_t n = write(fd, bytes + written, size - written);
    if (n <= 0)
      break;
    written += (size_t)n;
  }
  free(bytes);
  if (fd < 0 || written != size) {
    if (fd >= 0)
      close(fd);
    return kiln_fail(KILN_ERROR_LOAD, "cannot load '%s': no memory file for the checked copy",
                     path);
  }
  char fd_path[64];
  snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
  status = load_library(fd_path, path, fd, model);
  if (status != KILN_OK)
    close(fd);
  return status;
}

void kiln_model_free(kiln_model *model) {
  /* An inference entry goes with its training model. */
  if (model && model->owner == model)
    kiln_model_release(model);
}

uint32_t kiln_model_num_inputs(const kiln_model *model) { return model ? model->abi->num_inputs : 0; }
uint32_t kiln_model_num_outputs(const kiln_model *model) { return model ? model->abi->num_outputs : 0; }

const kiln_model_tensor *kiln_model_input(const kiln_model *model, uint32_t i) {
  return model && i < model->abi->num_inputs ? &model->abi->inputs[i] : NULL;
}

const kiln_model_tensor *kiln_model_output(const kiln_model *model, uint32_t i) {
  return model && i < model->abi->num_outputs ? &model->abi->outputs[i] : NULL;
}

uint32_t kiln_model_library_call_count(const kiln_model *model) {
  return model ? model->abi->num_library_calls : 0;
}

const kiln_library_call *kiln_model_library_call(const kiln_model *model, uint32_t i) {
  return model && i < model->abi->num_library_calls ? &model->abi->library_calls[i] : NULL;
}

uint64_t kiln_model_arena_bytes(const kiln_model *model) {
  return model ? model->abi->arena_bytes : 0;
}

uint64_t kiln_model_stack_bytes(const kiln_model *model) {
  return model ? model->abi->stack_bytes : 0;
}

uint64_t kiln_model_max_batch(const kiln_model *model) {
  return model ? model->abi->max_batch : 0;
}

const char *kiln_model_report(const kiln_model *model) {
  return model && model->abi->report ? model->abi->report : "";
}

const char *kiln_model_device(const kiln_model *model) {
  return model ? model->device->name : "";
}

const char *kiln_model_target(const kiln_model *model) {
  return model && model->abi->target ? model->abi->target : "";
}

const char *kiln_model_required_features(const kiln_model *model) {
  return model && model->abi->required_features ? model->abi->required_features : "";
}

const uint64_t *kiln_model_batch_buckets(const kiln_model *model, uint32_t *count) {
  if (count)
    *count = model ? model->abi->num_batch_buckets : 0;
  return model ? model->abi->batch_buckets : NULL;
}

const char *kiln_model_content_hash(const kiln_model *model) {
  return model && model->abi->content_hash ? model->abi->content_hash : "";
}
