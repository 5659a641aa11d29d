// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: what the load learns from walks of its own, with the probes
 * armed: walk_component()'s usual return sites (armed before the workload
 * runs) and stack mode's word offsets (walk.c's stack_learn() records
 * them at the rcu_lookup site; here they are accepted or not). The load's
 * self-check (selftest.c) walks the same paths.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include "internal.h"

/* The load's warm-up: one open() of our own (its last component). */
static void open_warm_up(void)
{
	struct file *f = filp_open("/proc/self/status", O_RDONLY, 0);

	if (!IS_ERR(f))
		filp_close(f, NULL);
}

/*
 * Learn walk_component's usual return sites at load, before the workload
 * runs: a few walks of our own (a multi-component path, a symlink in the
 * middle, a last component), then arm what they taught synchronously.
 * Arming later, while other vCPUs run the walk, is what can go wrong under
 * multi-threaded TCG (a patched instruction not seen by a vCPU that keeps
 * executing its old translation; see docs/design.md).
 */
void warm_up_walks(void)
{
	static const char * const paths[] = {
		"/proc/self/status", "/sys/kernel", "/dev/null", "/",
	};
	struct path path;
	int i;

	for (i = 0; i < ARRAY_SIZE(paths); i++)
		if (!kern_path(paths[i], LOOKUP_FOLLOW, &path))
			path_put(&path);
	/* and an open(): its last component is open_last_lookups()' */
	open_warm_up();
}

/* With fast probes: the warm-up, then stack mode if the offsets agree. */
void learn_walks(void)
{
	if (late_sites)
		return;
	warm_up_walks();
	sites_flush();
	if (!dcrace_layout.wc_lookup_ret)
		return;
	/*
	 * The sites are armed now: steps are tracked, offsets can be learnt
	 * (k_lookup also serves open() and the other callers of lookup_fast,
	 * with or without stack mode).
	 */
	WRITE_ONCE(stack_learning, true);
	warm_up_walks();
	WRITE_ONCE(stack_learning, false);
	if (stack_seen < 2 || stack_bad || k_lookup < 0 || k_walk < 0) {
		WRITE_ONCE(k_lookup, -1);
		return;
	}
	if (!stack_claim)
		return;
	/*
	 * From now on rcu_lookup claims the steps: disable the entry probe
	 * (no RCU wait here; disarm_all() unregisters it with the rest).
	 */
	WRITE_ONCE(stack_mode, true);
	disable_kprobe(&walk_kp);
}
