// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the filesystem callbacks an RCU-mode walk makes (docs/design.md,
 * "The hunt"): ->permission() with MAY_NOT_BLOCK, ->d_revalidate() with
 * LOOKUP_RCU, ->d_hash(), ->d_compare(), ->get_link() with a NULL dentry.
 * A callback that reads an object freed without an RCU grace period is a
 * use-after-free (KASAN is the oracle, not the errno). With callbacks=1
 * each callback below that this kernel has gets an entry kprobe: an entry
 * made while the task's walk is in RCU mode is counted per kind
 * ("window_<kind>" in stats, per symbol in probes) for the tasks of the
 * comm filter, and is delayed when the knob "window" has the kind's bit
 * (8 permission, 16 d_revalidate, 32 d_hash, 64 d_compare, 128 get_link).
 *
 * A lifetime ends on two sides, and each has its window (docs/design.md,
 * "The hunt"): the reader's after it loaded a pointer a callback goes on
 * to use ("load", 256: the entry of get_pid_task()/pid_task(), whose
 * argument the callback has just read from the inode), and the freer's
 * between the drop of a reference and the clearing of the pointer to it
 * ("free", 512: the return of proc_pid_evict_inode(), which put the pid
 * while proc_evict_inode() has not yet cleared ei->pid; a kretprobe, for
 * the controller's comm DCRACE_FREER_COMM only, in any walk mode).
 *
 * The walk is current->nameidata, read through the mirror the load's
 * self-check verified; only its flags are read, in the walker's own task.
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include "internal.h"

struct dcrace_cb {
	const char *fs;		/* the filesystem, as "probes" shows it */
	u8 kind;		/* enum dcrace_cb_kind */
	const char *sym;
	struct kprobe kp;
	struct kretprobe rp;	/* CB_FREE: at the function's return */
	bool armed;
	atomic_long_t hits;	/* window entries by the selected tasks */
};

static const char * const cb_kind_names[NR_CB_KINDS] = {
	[CB_PERMISSION] = "permission",
	[CB_REVALIDATE] = "d_revalidate",
	[CB_HASH] = "d_hash",
	[CB_COMPARE] = "d_compare",
	[CB_GET_LINK] = "get_link",
	[CB_LOAD] = "load",
	[CB_FREE] = "free",
};

#define CB(f, k, s) { .fs = f, .kind = k, .sym = s }

/*
 * What a filesystem of the hunt calls from an RCU walk, by symbol. Those
 * the kernel lacks (not built in, renamed, inlined) are "missing" in
 * probes. generic_permission() is every filesystem's without its own
 * ->permission() (tmpfs, ext2, ext4, vfat).
 */
static struct dcrace_cb cbs[] = {
	CB("generic", CB_PERMISSION, "generic_permission"),
	CB("procfs", CB_PERMISSION, "proc_pid_permission"),
	CB("procfs", CB_PERMISSION, "proc_fd_permission"),
	CB("procfs", CB_PERMISSION, "proc_sys_permission"),
	CB("procfs", CB_REVALIDATE, "pid_revalidate"),
	CB("procfs", CB_REVALIDATE, "tid_fd_revalidate"),
	CB("procfs", CB_REVALIDATE, "map_files_d_revalidate"),
	CB("procfs", CB_REVALIDATE, "proc_misc_d_revalidate"),
	CB("procfs", CB_REVALIDATE, "proc_net_d_revalidate"),
	CB("procfs", CB_REVALIDATE, "proc_sys_revalidate"),
	CB("procfs", CB_COMPARE, "proc_sys_compare"),
	CB("procfs", CB_GET_LINK, "proc_pid_get_link"),
	CB("procfs", CB_GET_LINK, "proc_ns_get_link"),
	CB("procfs", CB_GET_LINK, "proc_self_get_link"),
	CB("procfs", CB_GET_LINK, "proc_thread_self_get_link"),
	CB("procfs", CB_GET_LINK, "proc_get_link"),
	CB("tmpfs", CB_GET_LINK, "shmem_get_link"),
	CB("ext2", CB_GET_LINK, "page_get_link"),
	CB("ext4", CB_GET_LINK, "ext4_get_link"),
	CB("ext4", CB_HASH, "generic_ci_d_hash"),
	CB("ext4", CB_COMPARE, "generic_ci_d_compare"),
	CB("vfat", CB_REVALIDATE, "vfat_revalidate"),
	CB("vfat", CB_REVALIDATE, "vfat_revalidate_ci"),
	CB("vfat", CB_HASH, "vfat_hash"),
	CB("vfat", CB_HASH, "vfat_hashi"),
	CB("vfat", CB_COMPARE, "vfat_cmp"),
	CB("vfat", CB_COMPARE, "vfat_cmpi"),
	CB("overlayfs", CB_PERMISSION, "ovl_permission"),
	CB("overlayfs", CB_REVALIDATE, "ovl_dentry_revalidate"),
	CB("overlayfs", CB_REVALIDATE, "ovl_dentry_weak_revalidate"),
	CB("overlayfs", CB_GET_LINK, "ovl_get_link"),
	CB("procfs", CB_LOAD, "get_pid_task"),
	CB("procfs", CB_LOAD, "pid_task"),
	CB("procfs", CB_FREE, "proc_pid_evict_inode"),
};

static atomic_t free_inflight;	/* CB_FREE returns hijacked, not yet back */

static bool walk_in_rcu(void)
{
	const struct dcrace_nd_head *nd = (void *)current->nameidata;

	return nd && (READ_ONCE(nd->flags) & LOOKUP_RCU);
}

static int cb_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct dcrace_cb *cb = container_of(kp, struct dcrace_cb, kp);

	if (!knob(K_ENABLED) || !walk_in_rcu() || !inject_comm_matches())
		return 0;
	atomic_long_inc(&cb->hits);
	cnt_inc(C_CB_PERMISSION + cb->kind);
	maybe_inject(DCRACE_WINDOW_CB << cb->kind);
	return 0;
}

static int free_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&free_inflight);
	return 0;
}

/* the freer's window: its reference dropped, the pointer not yet cleared */
static int free_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct dcrace_cb *cb = rp ? container_of(rp, struct dcrace_cb, rp) : NULL;

	if (cb && knob(K_ENABLED) &&
	    !strncmp(current->comm, DCRACE_FREER_COMM, TASK_COMM_LEN)) {
		atomic_long_inc(&cb->hits);
		cnt_inc(C_CB_FREE);
		maybe_inject(DCRACE_WINDOW_FREE);
	}
	atomic_dec(&free_inflight);
	return 0;
}

static int cb_register(struct dcrace_cb *cb)
{
	atomic_long_set(&cb->hits, 0);
	if (cb->kind == CB_FREE) {
		memset(&cb->rp, 0, sizeof(cb->rp));
		cb->rp.kp.symbol_name = cb->sym;
		cb->rp.entry_handler = free_entry;
		cb->rp.handler = free_ret;
		cb->rp.maxactive = 16;
		return register_kretprobe(&cb->rp);
	}
	memset(&cb->kp, 0, sizeof(cb->kp));
	cb->kp.symbol_name = cb->sym;
	cb->kp.pre_handler = cb_pre;
	return register_kprobe(&cb->kp);
}

/*
 * callbacks=1: arm every callback this kernel has; none found is an error.
 * One missing is not: "probes" lists it as "missing" and dmesg names it.
 */
int callbacks_arm(void)
{
	unsigned int i, n = 0;
	int err;

	atomic_set(&free_inflight, 0);
	for (i = 0; i < ARRAY_SIZE(cbs); i++) {
		struct dcrace_cb *cb = &cbs[i];

		err = cb_register(cb);
		cb->armed = !err;
		if (err)
			pr_notice("dcrace: window %s:%s at %s missing (%d)\n",
				  cb->fs, cb_kind_names[cb->kind], cb->sym, err);
		n += cb->armed;
	}
	if (n)
		return 0;
	pr_err("dcrace: callbacks=1 but no filesystem callback could be probed\n");
	return -ENOENT;
}

void callbacks_disarm(void)
{
	struct kprobe *kps[ARRAY_SIZE(cbs)];
	unsigned int i, n = 0, tries;

	for (i = 0; i < ARRAY_SIZE(cbs); i++) {
		if (!cbs[i].armed || cbs[i].kind != CB_FREE)
			continue;
		/* no new entry, then every hijacked return back (bounded) */
		disable_kretprobe(&cbs[i].rp);
		for (tries = 0; tries < 5000 && atomic_read(&free_inflight); tries++)
			usleep_range(1000, 2000);
		unregister_kretprobe(&cbs[i].rp);
		cbs[i].armed = false;
	}
	for (i = 0; i < ARRAY_SIZE(cbs); i++) {
		if (cbs[i].armed)
			kps[n++] = &cbs[i].kp;
		cbs[i].armed = false;
	}
	if (n)
		unregister_kprobes(kps, n);
}

/* "probes": one line per callback, with its filesystem and kind */
void callbacks_show(struct seq_file *m)
{
	unsigned int i;

	if (!callbacks)
		return;
	for (i = 0; i < ARRAY_SIZE(cbs); i++) {
		const struct dcrace_cb *cb = &cbs[i];

		seq_printf(m, "callback %s %s %s %ld %s:%s\n", cb->sym,
			   cb->kind == CB_FREE ? "kretprobe" : "kprobe",
			   cb->armed ? "armed" : "missing",
			   atomic_long_read(&cb->hits), cb->fs,
			   cb_kind_names[cb->kind]);
	}
}

unsigned long callbacks_missed(void)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cbs); i++)
		if (cbs[i].armed)
			n += cbs[i].kind == CB_FREE ? cbs[i].rp.nmissed :
			     cbs[i].kp.nmissed;
	return n;
}
