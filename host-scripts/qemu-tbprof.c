// SPDX-License-Identifier: GPL-2.0
/*
 * tbprof: a QEMU TCG plugin (plugin API version 1, QEMU 7.2) counting the
 * guest instructions executed per translation block of kernel text. At
 * exit it writes one line per block, "VADDR INSNS EXECUTED_INSNS", to the
 * file of its out= argument (host-scripts/profile maps them to symbols).
 * The few API declarations it needs are written here: Debian ships no
 * plugin header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define NT (1 << 20)
struct ent { uint64_t va, n, cnt; };
static struct ent *tab;
static size_t used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *outpath = "/tmp/tbprof.out";

static void trans(qemu_plugin_id_t id __attribute__((unused)), struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb), h;
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct ent *e = NULL;

	if (va < 0xffff800000000000ULL)
		return;
	pthread_mutex_lock(&lock);
	/* open addressing; a full table (a million blocks) drops the rest */
	for (h = (va * 0x9E3779B97F4A7C15ULL + n) >> 44; used < NT - 1; h = (h + 1) & (NT - 1)) {
		e = &tab[h];
		if (!e->va) {
			e->va = va;
			e->n = n;
			used++;
			break;
		}
		if (e->va == va && e->n == n) break;
	}
	pthread_mutex_unlock(&lock);
	if (!e || e->va != va || e->n != n)
		return;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &e->cnt, n);
}

static void dump(qemu_plugin_id_t id __attribute__((unused)), void *p __attribute__((unused)))
{
	FILE *f = fopen(outpath, "w");
	size_t i;

	if (!f)
		return;
	for (i = 0; i < NT; i++)
		if (tab[i].cnt)
			fprintf(f, "%llx %llu %llu\n", (unsigned long long)tab[i].va,
				(unsigned long long)tab[i].n, (unsigned long long)tab[i].cnt);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info __attribute__((unused)),
			int argc, char **argv)
{
	if (argc > 0 && !strncmp(argv[0], "out=", 4))
		outpath = strdup(argv[0] + 4);
	tab = calloc(NT, sizeof(*tab));
	if (!tab)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, dump, NULL);
	return 0;
}
