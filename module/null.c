// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace_null: kprobes with empty handlers at the sites given, so that
 * bench --icount can tell what the kprobe mechanism costs (the trap or
 * the jump to a trampoline, the kprobe core, the return) from what
 * dcrace's own handlers cost at the same sites.
 *
 *	insmod dcrace_null.ko sites=SYM+0xOFF[,SYM+0xOFF...]
 *
 * Each site is a symbol and an offset into it, as dcrace's "probes" file
 * prints them in its "form" lines (a "/0xSIZE" suffix is ignored). A site
 * that cannot be probed fails the load (-EINVAL for one that does not
 * parse) and says which. The forms the kernel chose are in
 * /sys/kernel/debug/kprobes/list.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#define NULL_MAX_SITES 64
#define NULL_SYM_LEN 96

static char *sites;
module_param(sites, charp, 0444);
MODULE_PARM_DESC(sites, "comma-separated SYM+0xOFF sites to probe with empty handlers");

static struct kprobe *kps;
static struct kprobe **kpp;
static char (*names)[NULL_SYM_LEN];
static int nr_kps;

static int null_pre(struct kprobe *kp, struct pt_regs *regs)
{
	return 0;
}

/* "sym+0xoff[/0xsize]" into kp's symbol_name and offset */
static int null_parse(char *s, struct kprobe *kp, char *name)
{
	char *plus = strrchr(s, '+'), *slash = strchr(s, '/');
	unsigned int off = 0;

	if (slash)
		*slash = '\0';
	if (plus) {
		*plus = '\0';
		if (kstrtouint(plus + 1, 0, &off))
			return -EINVAL;
	}
	if (!*s || strscpy(name, s, NULL_SYM_LEN) < 0)
		return -EINVAL;
	kp->symbol_name = name;
	kp->offset = off;
	kp->pre_handler = null_pre;
	return 0;
}

static void null_free(void)
{
	kfree(kps);
	kfree(kpp);
	kfree(names);
}

static int __init null_init(void)
{
	char *buf, *cur, *tok;
	int err = 0, n = 0;

	if (!sites || !*sites) {
		pr_err("dcrace_null: no sites= given\n");
		return -EINVAL;
	}
	kps = kcalloc(NULL_MAX_SITES, sizeof(*kps), GFP_KERNEL);
	kpp = kcalloc(NULL_MAX_SITES, sizeof(*kpp), GFP_KERNEL);
	names = kcalloc(NULL_MAX_SITES, sizeof(*names), GFP_KERNEL);
	buf = kstrdup(sites, GFP_KERNEL);
	if (!kps || !kpp || !names || !buf) {
		err = -ENOMEM;
		goto out;
	}
	cur = buf;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		if (n == NULL_MAX_SITES) {
			pr_err("dcrace_null: more than %d sites\n", NULL_MAX_SITES);
			err = -EINVAL;
			goto out;
		}
		err = null_parse(tok, &kps[n], names[n]);
		if (err) {
			pr_err("dcrace_null: site %d does not parse (SYM+0xOFF)\n", n + 1);
			goto out;
		}
		kpp[n] = &kps[n];
		n++;
	}
	if (!n) {
		err = -EINVAL;
		goto out;
	}
	err = register_kprobes(kpp, n);
	if (err) {
		pr_err("dcrace_null: cannot probe the %d sites: %d\n", n, err);
		goto out;
	}
	nr_kps = n;
	pr_info("dcrace_null: %d empty kprobes armed\n", n);
out:
	kfree(buf);
	if (err)
		null_free();
	return err;
}

static void __exit null_exit(void)
{
	unregister_kprobes(kpp, nr_kps);
	null_free();
}

module_init(null_init);
module_exit(null_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dcrace_null: empty kprobes at given sites (bench: the mechanism's cost)");
