// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: a kprobes race detector for the dcache's RCU path walk.
 *
 * It records every case where an RCU walk sees a NULL inode on a dentry
 * whose d_seq changed since __d_lookup_rcu() sampled it, says whether the
 * kernel turned it into a false ENOENT (the 2011 bug) or caught it with
 * -ECHILD (the fix), and who pruned the dentry. See docs/design.md; the
 * map of the files is at its end.
 *
 * This file, the top: loading (layout, arm, learn, self-check, debugfs)
 * and unloading (the reverse), and the load-time parameters (their
 * variables are state.c's).
 */
#include <linux/init.h>
#include <linux/module.h>
#include "internal.h"

/*
 * Does walk_component() have its own NULL-inode test before step_into()?
 * -1: learn it (step.c). Range-checked like the knobs.
 */
module_param_cb(early_test, &knob_param_ops, &early_test, 0444);
MODULE_PARM_DESC(early_test, "walk_component() has its own NULL-inode test: 1 (our patched kernels), 0 (stock 6.1), -1 learn it (default)");

module_param(stack_claim, bool, 0444);
MODULE_PARM_DESC(stack_claim, "open steps from the rcu_lookup probe, no walk_component entry probe (default 1)");

module_param(fast, bool, 0444);
MODULE_PARM_DESC(fast, "entry-only probes, no kretprobes on the hot path (default 1)");

/*
 * lookup_fast only counts hits: its probe costs time on every path
 * component and tells the oracle nothing.
 */
module_param(extra_probes, bool, 0444);
MODULE_PARM_DESC(extra_probes, "also arm the lookup_fast hit counter (default 0)");

module_param(callbacks, bool, 0444);
MODULE_PARM_DESC(callbacks, "probe the filesystem callbacks of RCU walks and the frees behind them: counted per kind, delayed by window bits 8-512 (default 0)");

/* For tests only: see docs/debugfs.md. */
module_param(late_sites, bool, 0444);
MODULE_PARM_DESC(late_sites, "test: no warm-up, return sites armed late under load, no self-check (default 0)");

module_param(selftest_break, uint, 0444);
MODULE_PARM_DESC(selftest_break, "test: 1 the load's self-check reads the nameidata mirror one word off, 2 the d_seq samples are 2 off, so insmod fails (default 0)");

module_param(skip_open_return, bool, 0444);
MODULE_PARM_DESC(skip_open_return, "test: leave the first of path_openat()'s return sites unprobed, so open() is not judged (default 0)");

module_param(test_miss_returns, bool, 0444);
MODULE_PARM_DESC(test_miss_returns, "test: the return sites of the walk functions judge nothing, as if the layout had not found them: slots are left to their owners' exit (default 0)");

module_param(test_end_room, uint, 0444);
MODULE_PARM_DESC(test_end_room, "test: room for fewer return sites of path_lookupat()/path_parentat() than the module has (0: all it has)");

module_param(skip_probes, uint, 0444);
MODULE_PARM_DESC(skip_probes, "bitmask of probes not to arm (bit = order in \"probes\"; then 64 open_return, 128 end_return, 256 unlazy_call, 512 slot_reclaim sites; for measuring their cost)");

/* The knobs, also settable in debugfs (debugfs.c parses both). */
module_param_cb(enabled, &knob_param_ops, &dcrace_knobs[K_ENABLED], 0444);
MODULE_PARM_DESC(enabled, "record races (0/1, default 1)");
module_param_cb(delay_us, &knob_param_ops, &dcrace_knobs[K_DELAY_US], 0444);
MODULE_PARM_DESC(delay_us, "busy-wait in the race window, us (0-10000, default 0)");
module_param_cb(probability, &knob_param_ops, &dcrace_knobs[K_PROBABILITY], 0444);
MODULE_PARM_DESC(probability, "percent of eligible lookups delayed (0-100, default 100)");
module_param_cb(interval, &knob_param_ops, &dcrace_knobs[K_INTERVAL], 0444);
MODULE_PARM_DESC(interval, "delay only every Nth eligible lookup (default 1)");
module_param_cb(times, &knob_param_ops, &dcrace_knobs[K_TIMES], 0444);
MODULE_PARM_DESC(times, "delays left, -1 unlimited (default -1)");
module_param_cb(verbose, &knob_param_ops, &dcrace_knobs[K_VERBOSE], 0444);
MODULE_PARM_DESC(verbose, "print a report to dmesg per race (0/1, default 0)");
module_param_cb(window, &knob_param_ops, &dcrace_knobs[K_WINDOW], 0444);
MODULE_PARM_DESC(window, "windows delayed, a mask: 1 after the d_seq sample, 2 after a step ends (before may_lookup()/d_can_lookup()), 4 at a walk's end before its snapshot (tests); with callbacks=1 8 permission, 16 d_revalidate, 32 d_hash, 64 d_compare, 128 get_link, 256 after a callback's load, 512 a freer before it clears (default 1)");
module_param_cb(sample, &knob_param_ops, &dcrace_knobs[K_SAMPLE], 0444);
MODULE_PARM_DESC(sample, "judge one step and one walk end in N, per CPU (1-1000000, default 1: all)");
module_param_cb(comm, &comm_param_ops, NULL, 0444);
MODULE_PARM_DESC(comm, "delay only tasks with this comm (default: all)");

/* The self-check needs the required probes and the warm-up. */
static bool selftest_wanted(void)
{
	int i;

	for (i = 0; i < NR_PROBES; i++)
		if (probes[i].required && (skip_probes & BIT(i)))
			return false;
	return !late_sites;
}

static int __init dcrace_init(void)
{
	int err = inject_check();

	if (err)
		return err;
	report_init();
	inject_init();
	layout_read();
	err = arm_all();
	if (!err && probes[P_WALK].fast)
		learn_walks();
	if (!err && selftest_wanted())
		err = selftest_verdict();
	if (!err && callbacks)
		err = callbacks_arm();
	if (err) {
		/* handlers ran already: what they queued goes too */
		callbacks_disarm();
		disarm_all();
		report_sync();
		return err;
	}
	debugfs_setup();
	pr_info("dcrace: loaded: walk_component=%s lookup=%s rcu=%s step=%s kill=%s open=%s\n",
		probes[P_WALK].sym ?: "-", probes[P_LOOKUP].sym ?: "-",
		probes[P_RCU].sym ?: "-", probes[P_STEP].sym ?: "-",
		probes[P_KILL].sym ?: "-",
		open_covered() ? "judged" : "not judged");
	return 0;
}

static void __exit dcrace_exit(void)
{
	debugfs_teardown();
	callbacks_disarm();
	disarm_all();
	report_sync();
	pr_info("dcrace: unloaded\n");
}

module_init(dcrace_init);
module_exit(dcrace_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dcrace: race detector for the dcache RCU path walk");
MODULE_AUTHOR("dcrace developers");
