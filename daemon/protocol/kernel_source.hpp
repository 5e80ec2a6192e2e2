#pragma once
/// @file kernel_source.hpp
/// A job's kernel as wstuned's master and workers share it: one of wstune's
/// built-in kernels by name, or a kernel described by a T1 tuning file
/// (tuning_file.hpp). The master reads the tuning file and packs it with
/// every file it names (the kernel source and the BinaryRaw inputs and
/// references), so a worker on another node needs no shared file system: it
/// unpacks them into a per-user cache directory and loads the same
/// KernelSpec, then generates the Random, Generator and Constant inputs
/// itself from the file (seeded, as the CLI does). docs/daemon.md "Kernel files".

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernel/kernel.hpp"

namespace wstune::daemon {

/// The tuning file at `path` packed for the workers:
/// {"name": its file name, "root": the directory levels above it that its
/// files need, "hash": 16 hex digits over every file, "files": {relative path:
/// bytes (CBOR binary)}}; relative paths are as the file names them, from
/// its directory. Reads and validates the file first (read_tuning_file(),
/// whose UsageError names the file, the JSON path and the fix).
nlohmann::json pack_tuning_file(const std::string& path);

/// The KernelSpec of a packed tuning file: its files are written (once per
/// hash, atomically, so workers of one node may race) under
/// $TMPDIR/wstuned-kernels-UID/HASH/ and loaded with load_tuning_file().
/// Cached by hash in this process. Throws ProtocolError for a malformed
/// package, UsageError when the file does not load.
std::shared_ptr<const KernelSpec> unpack_tuning_file(const nlohmann::json& packed);

/// A job's kernel on a worker: the built-in `name` when `packed` is null,
/// else unpack_tuning_file(packed).
std::shared_ptr<const KernelSpec> worker_kernel(const std::string& name, const nlohmann::json& packed);

/// A job's kernel on the master: the built-in `name` when `kernel_file` is
/// empty (kernel_spec()), else load_tuning_file(kernel_file), cached by path
/// in this process (the file is read once per run).
std::shared_ptr<const KernelSpec> master_kernel(const std::string& name, const std::string& kernel_file);

/// A job's problem: `size` parsed by `spec`, with the tuning parameter
/// values `params` over the reference configuration's (none: the reference).
Problem job_problem(const KernelSpec& spec, const std::string& size, const nlohmann::json& params);

}  // namespace wstune::daemon
