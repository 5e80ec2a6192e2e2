/**
 * @file wstune.h
 * The C API of libwstune (C99; usable from C++, and from any language with
 * a C foreign-function interface, e.g. Python's ctypes: docs/app.md). It
 * wraps wstune::Tuner (wstune/tuner.hpp): ask for the stored local work
 * size of a kernel over a global size on a queue's device, and enqueue with
 * it, optionally tuning online first. Model: CLBlast's clblast_c.h.
 *
 * Errors: every function that can fail returns a status, WSTUNE_SUCCESS (0)
 * or a negative code: an OpenCL error code (e.g. -54,
 * CL_INVALID_WORK_GROUP_SIZE) when an OpenCL call failed, else one of
 * wstune_status. wstune_last_error() then describes the failure (the input
 * and the fix). Functions returning a pointer return NULL on failure.
 *
 * Ownership: a wstune_tuner is created by wstune_open() and freed by
 * wstune_close(); besides it, only the program and kernel handed out by
 * wstune_build_best() are the caller's to release. Queues, kernels, buffers and
 * events stay the caller's: wstune retains none of them (an event returned
 * by wstune_launch() is the caller's to release). Strings returned are owned
 * by the library (see each function for how long they stay valid).
 *
 * Thread safety: a wstune_tuner must be used by one thread at a time (it
 * owns an SQLite connection and caches); use one tuner per thread for
 * concurrent use. wstune_last_error() is per thread. wstune_version() is
 * thread-safe.
 *
 * Linking: C programs link with `pkg-config --libs wstune-c` (or CMake's
 * wstune::wstune_c target) and need no C++ flags.
 */
#ifndef WSTUNE_WSTUNE_H_
#define WSTUNE_WSTUNE_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120 /* the API level libwstune is built against */
#endif
#include <CL/cl.h>
#include <stddef.h>

#include "wstune/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes besides CL_SUCCESS and the OpenCL error codes (negative). */
typedef enum wstune_status {
  WSTUNE_SUCCESS = 0,         /**< no error */
  WSTUNE_USAGE_ERROR = -2001, /**< bad input (a NULL handle, a bad size, a kernel wstune cannot tune safely) */
  WSTUNE_STORE_ERROR = -2002, /**< the database failed (locked, read-only, corrupt, newer schema) */
  WSTUNE_OTHER_ERROR = -2003  /**< anything else (out of memory, …) */
} wstune_status;

/** An opaque tuner: a database connection, its look-up chain and what it knows about kernels. */
typedef struct wstune_tuner wstune_tuner;

/**
 * Opens the database at `db_path` (NULL or "": the default database,
 * $WSTUNE_DB or $XDG_DATA_HOME/wstune/wstune.db; created if missing) for
 * look-ups only. Returns NULL on failure (wstune_last_error() says why).
 */
WSTUNE_EXPORT wstune_tuner* wstune_open(const char* db_path);

/**
 * wstune_open() with online tuning: a launch with no exact or near stored
 * answer first tunes within `max_trials` configurations (0: 12) and
 * `max_time_ms` milliseconds (0: 2000), on the kernel's current arguments,
 * without changing what the app computes (docs/app.md). Returns NULL on
 * failure.
 */
WSTUNE_EXPORT wstune_tuner* wstune_open_online(const char* db_path, unsigned max_trials, unsigned max_time_ms);

/**
 * The local work size for `k` over the NDRange `global` (`work_dim` 1 to 3
 * values, work-items) on `q`'s device, written to `local` (`work_dim`
 * values; local[0] == 0 means NULL, the driver's choice). Never tunes.
 * Returns 0 or an error code.
 */
WSTUNE_EXPORT int wstune_local_size(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim,
                                    const size_t* global, size_t* local);

/**
 * Enqueues `k` over `global` on `q` with the answer (tuning first when the
 * tuner was opened with wstune_open_online() and nothing exact or near is
 * stored). When `event` is not NULL it receives the kernel's event (the
 * caller releases it). Returns 0 or an error code; nothing is enqueued on
 * an error.
 */
WSTUNE_EXPORT int wstune_launch(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim,
                                const size_t* global, cl_event* event);

/** Tunes `k` over `global` now (see wstune_open_online()) and stores the result. Returns 0 or an error code. */
WSTUNE_EXPORT int wstune_tune(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t* global);

/**
 * Which look-up level gave `t`'s last answer: "required", "forced", "exact",
 * "nearest", "architecture", "vendor-type", "rule", "null", "online" (the
 * fastest so far of a dynamic online session, wstune_set_trials_per_launch),
 * "default" or "reference" (wstune_build_best()), or "" before any.
 * Valid until the next call with `t`.
 */
WSTUNE_EXPORT const char* wstune_last_level(const wstune_tuner* t);

/**
 * Dynamic tuning for a tuner opened with wstune_open_online(): with
 * `trials` > 0 each later wstune_launch() measures at most `trials` new
 * configurations of the kernel's online session, then enqueues the fastest
 * correct one so far; the launch that ends the session stores the best.
 * 0 (the default): the whole search runs at the first launch. Returns 0 or
 * an error code.
 */
WSTUNE_EXPORT int wstune_set_trials_per_launch(wstune_tuner* t, unsigned trials);

/**
 * Sets argument `index` of `k` to `buffer` (clSetKernelArg) and remembers
 * it, so online tuning can snapshot and restore what the kernel writes
 * there. Set every buffer the kernel may write this way. Returns 0 or an
 * error code.
 */
WSTUNE_EXPORT int wstune_set_arg_buffer(wstune_tuner* t, cl_kernel k, cl_uint index, cl_mem buffer);

/**
 * Declares (`guarded` != 0) that `k` checks its work-item ids against the
 * real size, so wstune may pad the NDRange to a multiple of the local size.
 * Returns 0 or an error code.
 */
WSTUNE_EXPORT int wstune_set_bounds_guarded(wstune_tuner* t, cl_kernel k, int guarded);

/**
 * Sets `kernel`'s __local arguments for a launch with `local` (`work_dim`
 * values; `local` is NULL and `work_dim` 0 when the driver chooses).
 * Returns non-zero when the kernel can run so, 0 to refuse that local size.
 */
typedef int (*wstune_local_args_fn)(cl_kernel kernel, cl_uint work_dim, const size_t* local, void* user);

/**
 * Registers `fn` (called with `user`) to size `k`'s __local arguments
 * before every trial and launch; needed to tune or launch a kernel with
 * __local pointer arguments. NULL `fn` removes it. Returns 0 or an error code.
 */
WSTUNE_EXPORT int wstune_set_local_args(wstune_tuner* t, cl_kernel k, wstune_local_args_fn fn, void* user);

/**
 * Declares the `count` argument indices `k` may write (default: its
 * __global pointer arguments not declared const, from the argument info).
 * Returns 0 or an error code.
 */
WSTUNE_EXPORT int wstune_set_written_args(wstune_tuner* t, cl_kernel k, cl_uint count, const cl_uint* indices);

/**
 * A kernel of a T1 tuning file built by wstune_build_best() with the
 * configuration the parameter look-up chain chose for one problem size.
 * Ownership: the caller owns one reference to `kernel` and one to
 * `program`: release them with clReleaseKernel() and clReleaseProgram()
 * when done (the tuner keeps its own reference to the program, to reuse
 * it for the same device, context and options). The strings are owned by
 * the tuner and valid until the next call with it.
 */
typedef struct wstune_built_kernel {
  cl_program program;        /**< the program, built for the queue's device in the queue's context */
  cl_kernel kernel;          /**< the file's KernelName; arguments not set (the file's Arguments order) */
  cl_uint work_dim;          /**< 1 to 3 */
  size_t global[3];          /**< the NDRange (work-items) for this size and configuration */
  size_t local[3];           /**< the local size; local[0] == 0: NULL (the driver's choice) */
  const char* level;         /**< "online" (tuned in this call), "exact", "nearest", "architecture", "vendor-type",
                                  "default" or "reference" */
  const char* params;        /**< the parameters' values, a JSON object */
  const char* build_options; /**< the clBuildProgram options it was built with */
  double compile_ms;         /**< clBuildProgram wall time of this call (ms); 0 when the tuner had built it before */
  int compiled; /**< 1: compiled from source in this call; 0: loaded from the binary cache, or built before */
  unsigned tuned_evaluations; /**< configurations measured by online tuning in this call (0: it did not run) */
  const char* note;           /**< why online tuning ran but the chain answered ("" otherwise) */
} wstune_built_kernel;

/**
 * Builds the kernel of the T1 tuning file `tuning_file` for problem size
 * `size` (NULL or "": the file's ProblemSize; `wstune tune --size` syntax)
 * on `q`'s device in `q`'s context, with the configuration of the
 * parameter look-up chain (a stored best of this size, the nearest tuned
 * size, the same architecture, the same vendor and type, the file's
 * Defaults, the reference configuration: docs/app.md), into `*out`. Also
 * sets wstune_last_level(). Returns 0 or an error code (`*out` untouched).
 */
WSTUNE_EXPORT int wstune_build_best(wstune_tuner* t, cl_command_queue q, const char* tuning_file, const char* size,
                                    wstune_built_kernel* out);

/**
 * Online tuning of the parameters for later wstune_build_best() calls
 * (wstune::BuildBestOnline, docs/app.md): with `enable` != 0, a call whose
 * size has no exact stored best on the queue's device first tunes the
 * tuning file at that size on that device (in the app's process, in a
 * context of its own, on the file's inputs, never the app's buffers; every
 * configuration verified against the file's reference) within `max_evals`
 * configurations and `max_time_ms` milliseconds of search, stores the
 * session, every trial and the best, and builds that best (level
 * "online"); the next call, in this process or the next, answers "exact".
 * A tuning that fails never fails wstune_build_best(): it answers from the
 * chain and says why in wstune_built_kernel::note. `enable` 0 turns it off
 * (the default). Returns 0, or WSTUNE_USAGE_ERROR for `enable` with
 * `max_evals` 0 or `max_time_ms` 0 (the setting is then unchanged).
 */
WSTUNE_EXPORT int wstune_set_build_best_online(wstune_tuner* t, int enable, unsigned max_evals, unsigned max_time_ms);

/**
 * This process's program builds so far (every build of libwstune,
 * wstune_build_best() and tuning trials), into the non-NULL pointers:
 * `compiled` from source, `from_binary` loaded from the persistent program
 * binary cache (WSTUNE_CACHE_DIR, else $XDG_CACHE_HOME/wstune/programs, else
 * ~/.cache/wstune/programs; "off" turns it off). A second start of an app
 * that built its kernels before compiles nothing: `compiled` stays 0.
 * Thread-safe.
 */
WSTUNE_EXPORT void wstune_program_builds(unsigned long long* compiled, unsigned long long* from_binary);

/**
 * What wstune_autotune() tunes for and how long; wstune_autotune_defaults()
 * fills it. Strings are the caller's and only read during the call; NULL or
 * "" takes the default.
 */
typedef struct wstune_autotune_options {
  const char* size;     /**< problem size, `wstune tune --size` syntax ("N=4096"); default: the file's ProblemSize */
  const char* device;   /**< device selector ("1:0", "gpu"); default: the file's Device, else the default device */
  const char* strategy; /**< search strategy ("random", "guided", ...); default: the file's Search, else "auto" */
  /**
   * What decides the best: "NAME", "NAME:min" or "NAME:max", NAME one of
   * "time" (ms, the default), "energy" (J per kernel run), "power" (W),
   * "edp" (J*s) or one of the file's wstune.Metrics; or a comma-separated
   * list ("time,energy": the first decides, the Pareto front over all is
   * stored). An unknown name or direction is WSTUNE_USAGE_ERROR naming
   * the field and the known metrics.
   */
  const char* objective;
  /**
   * When each correct trial's energy is observed on the device's sensor
   * (NVML, RAPL): "auto" (default: when an objective needs energy), "on"
   * (always, where a sensor is readable) or "off". Where an objective needs
   * energy and the device has no sensor, the time decides and
   * wstune_autotune_result.objective_note says why.
   */
  const char* energy;
  unsigned max_trials; /**< configurations measured at most; 0: the file's Budget, else the strategy's default */
  double max_time_s;   /**< seconds of search at most; 0: the file's TuningDuration, else none */
} wstune_autotune_options;

/** Sets every field of `options` to its default (NULL strings, 0 budgets). NULL is ignored. Thread-safe. */
WSTUNE_EXPORT void wstune_autotune_defaults(wstune_autotune_options* options);

/**
 * The best configuration wstune_autotune() found. The strings are owned by
 * the tuner and valid until the next call with it.
 */
typedef struct wstune_autotune_result {
  const char* params;         /**< the best's tuning parameter values, a JSON object */
  cl_uint work_dim;           /**< 1 to 3 */
  size_t local[3];            /**< its local size; local[0] == 0: NULL (the driver's choice) */
  double time_ms;             /**< its median kernel time (ms) */
  int energy_measured;        /**< non-zero when energy_j and power_w were measured for it */
  double energy_j;            /**< its energy per kernel run (J) on energy_sensor; 0 when not measured */
  double power_w;             /**< the device's average power while it ran back to back (W); 0 when not measured */
  const char* energy_sensor;  /**< "nvml", "rapl", or "" when no trial's energy was observed */
  const char* objective;      /**< the objective that decided, "NAME:min" or "NAME:max" */
  const char* objective_note; /**< "" when it decided; else why the time did (its energy was not measured, and why) */
  unsigned evaluations;       /**< configurations measured, the baseline included */
} wstune_autotune_result;

/**
 * Tunes the kernel of the T1 tuning file `tuning_file` as `wstune tune
 * --kernel-file` does (the same library session: every trial stored in
 * `t`'s database, the best recorded, so wstune_build_best() then builds
 * it), with `options` (NULL: the defaults), and writes the best into
 * `*out`. The search runs in a forked worker process: call it before this
 * process has initialised OpenCL (or tune from another process with
 * `wstune tune`). Blocks until the search ends. Returns 0 or an error code
 * (WSTUNE_USAGE_ERROR for a bad option, file or size; `*out` untouched);
 * a search with no correct configuration is WSTUNE_OTHER_ERROR.
 */
WSTUNE_EXPORT int wstune_autotune(wstune_tuner* t, const char* tuning_file, const wstune_autotune_options* options,
                                  wstune_autotune_result* out);

/** Forgets what `t` knows about `k`; call before releasing a kernel whose handle may be reused. */
WSTUNE_EXPORT void wstune_forget(wstune_tuner* t, cl_kernel k);

/** Closes the database and frees `t` (NULL is ignored). */
WSTUNE_EXPORT void wstune_close(wstune_tuner* t);

/**
 * This thread's last error message ("" when none); valid until this
 * thread's next failing call.
 */
WSTUNE_EXPORT const char* wstune_last_error(void);

/** The library's version, "MAJOR.MINOR.PATCH" (static storage). */
WSTUNE_EXPORT const char* wstune_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WSTUNE_WSTUNE_H_ */
