/*===- thread_policy.c - How many threads a CPU session's next run uses ---===*
 *
 * The rules are in thread_policy.h.
 *
 *===----------------------------------------------------------------------===*/

#include "thread_policy.h"

#include <string.h>

void kiln_thread_policy_init(kiln_thread_policy *policy, int32_t full) {
  memset(policy, 0, sizeof *policy);
  policy->full = full > 0 ? full : 1;
  policy->reduced = policy->full / 2 > 0 ? policy->full / 2 : 1;
  policy->chosen = policy->full;
}

/* The shape with `signature`, else the least recently used one, cleared. */
static kiln_thread_shape *shape_of(kiln_thread_policy *policy, uint64_t signature) {
  kiln_thread_shape *slot = &policy->shapes[0];
  for (int i = 0; i < KILN_THREAD_SHAPES; ++i) {
    kiln_thread_shape *s = &policy->shapes[i];
    if (s->signature == signature)
      return s;
    if (s->last_used < slot->last_used)
      slot = s;
  }
  memset(slot, 0, sizeof *slot);
  slot->signature = signature;
  return slot;
}

int32_t kiln_thread_policy_choose(kiln_thread_policy *policy, uint64_t signature) {
  kiln_thread_shape *s = shape_of(policy, signature ? signature : 1);
  s->last_used = ++policy->clock;
  policy->current = s;
  policy->timed = policy->reduced < policy->full && s->runs >= KILN_THREAD_WARMUP_RUNS;
  int reduced = policy->reduced_now;
  /* A try runs at a shape timed at the count it is compared with. */
  if (policy->timed && policy->try_pending &&
      (reduced ? s->last_reduced_ns : s->last_full_ns) != 0)
    reduced = !reduced;
  policy->chosen = reduced ? policy->reduced : policy->full;
  return policy->chosen;
}

/* A try of the other count ended at `s`: switch when it was faster. */
static void end_try(kiln_thread_policy *policy, kiln_thread_shape *s, uint64_t ns) {
  policy->try_pending = 0;
  ++policy->tries;
  uint64_t before = policy->reduced_now ? s->last_reduced_ns : s->last_full_ns;
  int faster = ns * 10 < before * 9;
  if (faster) {
    ++policy->switches;
    policy->reduced_now = !policy->reduced_now;
  }
  if (policy->reduced_now) {
    /* Reduced: the next try of the full count comes later each time the
     * full count loses. */
    policy->interval = faster ? KILN_THREAD_FIRST_INTERVAL
                              : (policy->interval * 2 > KILN_THREAD_LAST_INTERVAL
                                     ? KILN_THREAD_LAST_INTERVAL
                                     : policy->interval * 2);
    policy->until_try = policy->interval;
  } else {
    /* Full: the runs that looked slow are the new normal, or the machine
     * is idle again; either way its best is measured afresh. */
    policy->slow_runs = 0;
    s->best_full_ns = 0;
  }
}

void kiln_thread_policy_record(kiln_thread_policy *policy, uint64_t ns) {
  kiln_thread_shape *s = policy->current;
  if (!s)
    return;
  policy->current = NULL;
  ++policy->runs;
  int at_full = policy->chosen == policy->full;
  if (!at_full)
    ++policy->reduced_runs;
  ++s->runs;
  if (!policy->timed)
    return;
  if (ns == 0)
    ns = 1;
  int tried = at_full == policy->reduced_now; /* this run was a try */
  if (tried) {
    end_try(policy, s, ns);
  } else if (at_full) {
    policy->slow_runs = s->best_full_ns && ns * 2 > s->best_full_ns * 3 ? policy->slow_runs + 1 : 0;
    if (policy->slow_runs >= 2 || !policy->tried)
      policy->try_pending = 1;
    policy->tried = 1;
  } else if (policy->until_try && --policy->until_try == 0) {
    policy->try_pending = 1;
  }
  if (at_full) {
    s->last_full_ns = ns;
    if (!s->best_full_ns || ns < s->best_full_ns)
      s->best_full_ns = ns;
  } else {
    s->last_reduced_ns = ns;
  }
}
