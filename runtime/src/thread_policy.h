/*===- thread_policy.h - How many threads a CPU session's next run uses ---===*
 *
 * With the policy on (kiln_session_set_adaptive_threads; off by
 * default), a session asked for N threads runs on N while that is
 * fastest, and on N/2 while another process holds a core and N threads
 * wait on each other: oneDNN's primitives split their work statically, so every
 * parallel region waits for the thread that shares its core, and two of
 * the session's own threads placed on one core (the scheduler does that
 * when a third thread runs) spin against each other. The policy decides
 * from the runs' own wall times, nothing else (a busy machine is the
 * machine's state, so the count is the session's; times compare only
 * between runs of one input shape):
 *
 *  - the full count first; once a shape has a timed run, one run tries
 *    the reduced count (a machine busy from the start has no fast run to
 *    compare with);
 *  - at the full count, two runs in a row slower than 1.5x their shape's
 *    fastest make a later run try the reduced count;
 *  - a try faster by 10% than the same shape's last run at the other
 *    count switches; at the reduced count the full count is tried again
 *    after 1 run (a switch made on a passing spike is undone at once),
 *    then 2, 4, ... 1024 while it keeps losing.
 *
 * A shape's first runs are not timed (they make its primitives and touch
 * its pages).
 * On an idle machine that costs one reduced run per input shape. Pure
 * functions of the timings they are given, so that a test can drive them.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_THREAD_POLICY_H
#define KILN_RUNTIME_THREAD_POLICY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs before a shape's timings count (primitives made, pages touched). */
#define KILN_THREAD_WARMUP_RUNS 2
/* Input shapes followed at once (a server alternating batch sizes). */
#define KILN_THREAD_SHAPES 4
#define KILN_THREAD_FIRST_INTERVAL 1
#define KILN_THREAD_LAST_INTERVAL 1024

typedef struct kiln_thread_shape {
  uint64_t signature; /* 0: unused */
  uint64_t last_used;
  uint32_t runs;          /* runs at this shape */
  uint64_t best_full_ns;  /* fastest full-count run since the last switch */
  uint64_t last_full_ns, last_reduced_ns; /* 0: none timed */
} kiln_thread_shape;

typedef struct kiln_thread_policy {
  int32_t full, reduced; /* thread counts; the policy acts when reduced < full */
  int reduced_now;       /* runs use the reduced count */
  int try_pending;       /* the next timed run tries the other count */
  int tried;             /* the reduced count has been tried once */
  uint32_t slow_runs;    /* full-count runs in a row > 1.5x their shape's best */
  uint32_t interval;     /* reduced: runs between tries of the full count */
  uint32_t until_try;
  uint64_t clock;
  kiln_thread_shape shapes[KILN_THREAD_SHAPES];
  kiln_thread_shape *current; /* the shape of the run chosen last */
  int32_t chosen;             /* its thread count */
  int timed;                  /* whether its time counts */
  /* All time, for kiln_session_thread_stats. */
  uint64_t runs, reduced_runs, tries, switches;
} kiln_thread_policy;

/* A policy for a session of `full` threads (the count itself, never 0). */
void kiln_thread_policy_init(kiln_thread_policy *policy, int32_t full);

/* The thread count of the next run, whose inputs have `signature` (any
 * value that differs between input shapes; 0 is taken as 1). */
int32_t kiln_thread_policy_choose(kiln_thread_policy *policy, uint64_t signature);

/* The wall time of the run kiln_thread_policy_choose chose for. */
void kiln_thread_policy_record(kiln_thread_policy *policy, uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
