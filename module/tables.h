/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace's counters and knobs, each listed once. Included several times
 * (no include guard), each time with DCRACE_COUNTER() and/or DCRACE_KNOB()
 * defined to make one thing of the list: the enums in internal.h, the
 * "stats" names and the knob table in debugfs.c. So an enum value and its
 * name cannot drift apart. New counters go at the end: "stats" prints
 * them in this order, and scripts read it; those from C_FIRST_LATE on
 * (internal.h) come after its other lines, at the very end.
 */

#ifdef DCRACE_COUNTER
/*             id                name in "stats" */
DCRACE_COUNTER(C_WALKS,          "walk_steps")
DCRACE_COUNTER(C_RCU_LOOKUPS,    "rcu_lookups")
DCRACE_COUNTER(C_NULL_INODE,     "null_inode_seen")
DCRACE_COUNTER(C_FALSE_ENOENT,   "false_enoent")
DCRACE_COUNTER(C_CAUGHT,         "caught")
DCRACE_COUNTER(C_CAUGHT_LATE,    "caught_late")
DCRACE_COUNTER(C_GENUINE_NEG,    "genuine_negative")
DCRACE_COUNTER(C_PRUNED_NEG,     "pruned_negative")
DCRACE_COUNTER(C_UNEXPECTED,     "unexpected")
DCRACE_COUNTER(C_PRUNES,         "prunes")
DCRACE_COUNTER(C_KILLS_DROPPED,  "kill_records_dropped")
DCRACE_COUNTER(C_INJECTED,       "injected_delays")
DCRACE_COUNTER(C_NOT_RCU,        "left_rcu_unjudged")
DCRACE_COUNTER(C_PARENT_ECHILD,  "parent_changed_echild")
DCRACE_COUNTER(C_SLOTS_FULL,     "task_slots_full")
DCRACE_COUNTER(C_NEW_SITE,       "steps_unjudged_new_site")
DCRACE_COUNTER(C_STEP_LOST,      "steps_return_missed")
DCRACE_COUNTER(C_EVENTS_DROPPED, "events_dropped_busy")
DCRACE_COUNTER(C_KILL_BUSY,      "kill_lookups_busy")
/* per lookup (the trace event's lookup=): walk_component's, open()'s last */
DCRACE_COUNTER(C_WALK_FALSE_ENOENT, "walk_false_enoent")
DCRACE_COUNTER(C_WALK_CAUGHT,    "walk_caught")
DCRACE_COUNTER(C_WALK_CAUGHT_LATE, "walk_caught_late")
DCRACE_COUNTER(C_WALK_GENUINE_NEG, "walk_genuine_negative")
DCRACE_COUNTER(C_OPEN_LOOKUPS,   "open_lookups")
DCRACE_COUNTER(C_OPEN_FALSE_ENOENT, "open_false_enoent")
DCRACE_COUNTER(C_OPEN_CAUGHT,    "open_caught")
DCRACE_COUNTER(C_OPEN_CAUGHT_LATE, "open_caught_late")
DCRACE_COUNTER(C_OPEN_GENUINE_NEG, "open_genuine_negative")
DCRACE_COUNTER(C_OPEN_PRUNED_NEG, "open_pruned_negative")
DCRACE_COUNTER(C_OPEN_UNJUDGED,  "open_unjudged")
DCRACE_COUNTER(C_OTHER_LOOKUPS,  "other_lookups")
/* the rule at the walk's end: hard errors of RCU-mode walks (end.c) */
DCRACE_COUNTER(C_END_JUDGED,     "end_judged")
DCRACE_COUNTER(C_END_GENUINE,    "end_genuine")
DCRACE_COUNTER(C_END_CAUGHT,     "end_caught")
DCRACE_COUNTER(C_FALSE_ENOTDIR,  "false_enotdir")
DCRACE_COUNTER(C_FALSE_EACCES,   "false_eacces")
DCRACE_COUNTER(C_FALSE_EPERM,    "false_eperm")
DCRACE_COUNTER(C_FALSE_ENOENT_SEQ, "false_enoent_seq_unchanged")
DCRACE_COUNTER(C_END_UNJUDGED,   "end_unjudged")
DCRACE_COUNTER(C_END_UNVOUCHED,  "end_unvouched")
DCRACE_COUNTER(C_END_NOT_JUDGED, "end_not_judged")
DCRACE_COUNTER(C_SLOTS_RECLAIMED, "slots_reclaimed")
/* callbacks=1: RCU-mode entries per kind, in enum dcrace_cb_kind's order */
DCRACE_COUNTER(C_CB_PERMISSION,  "window_permission")
DCRACE_COUNTER(C_CB_REVALIDATE,  "window_d_revalidate")
DCRACE_COUNTER(C_CB_HASH,        "window_d_hash")
DCRACE_COUNTER(C_CB_COMPARE,     "window_d_compare")
DCRACE_COUNTER(C_CB_GET_LINK,    "window_get_link")
DCRACE_COUNTER(C_CB_LOAD,        "window_load")
DCRACE_COUNTER(C_CB_FREE,        "window_free")
/* sample=N: steps and walk ends left unjudged (N - 1 of every N) */
DCRACE_COUNTER(C_SAMPLED_OUT,    "sampled_out")
/* synchronize_rcu: writes that waited their grace periods */
DCRACE_COUNTER(C_GRACE_WAITS,    "grace_waits")
#undef DCRACE_COUNTER
#endif

#ifdef DCRACE_KNOB
/*          id             file/parameter min  max      default */
DCRACE_KNOB(K_ENABLED,     "enabled",     0,  1,       1)
DCRACE_KNOB(K_DELAY_US,    "delay_us",    0,  10000,   0)
DCRACE_KNOB(K_PROBABILITY, "probability", 0,  100,     100)
DCRACE_KNOB(K_INTERVAL,    "interval",    1,  INT_MAX, 1)
DCRACE_KNOB(K_TIMES,       "times",       -1, INT_MAX, -1)
DCRACE_KNOB(K_VERBOSE,     "verbose",     0,  1,       0)
/*
 * which windows delay_us widens (a mask): 1 sample, 2 step, 4 walk end;
 * with callbacks=1 the callbacks' entries: 8 permission, 16 d_revalidate,
 * 32 d_hash, 64 d_compare, 128 get_link, 256 a load a callback made
 * (reader side, after the load), 512 a freer's (its reference dropped,
 * the pointer not yet cleared)
 */
DCRACE_KNOB(K_WINDOW,      "window",      1,  1023,    1)
/* judge one step (and one walk end) in N, per CPU, as KCSAN's skip_watch */
DCRACE_KNOB(K_SAMPLE,      "sample",      1,  1000000, 1)
#undef DCRACE_KNOB
#endif
