// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-hunt's identity oracle: see ident.h. Bounded memory: the
 * registry holds IDENT_MAX objects; an entry is written once, before it
 * is published (nreg), and only its end (to) changes afterwards, so the
 * walkers read it without a lock. Once the registry is full, nothing more
 * is registered and a call it cannot vouch for after that point counts as
 * "unvouched", never as a wrong object. The walkers' unmatched sightings
 * are deduplicated per path and object into IDENT_PENDING slots (the rest
 * counted as lost).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/types.h>
#include "ident.h"

#define IDENT_MAX	65536
#define IDENT_PENDING	256
#define IDENT_NAME	32

struct ident {
	dev_t dev;
	ino_t ino;
	mode_t type;
	unsigned long from;	/* the clock interval it existed in */
	atomic_ulong to;
	char name[IDENT_NAME];
};

static struct ident reg[IDENT_MAX];
static atomic_ulong nreg;		/* written by the controller only */
static atomic_ulong clk = 1;
static atomic_ulong full_at;		/* the clock when it filled up (0: not) */
static atomic_ulong unvouched;

struct sighting {
	int pidx;
	dev_t dev;
	ino_t ino;
	mode_t type;
	unsigned long c0, c1;	/* the earliest call's span */
	unsigned long count;
};

static struct sighting pend[IDENT_PENDING];
static int npend;
static unsigned long pend_lost;
static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ulong checks;

unsigned long ident_clock(void)
{
	return atomic_load(&clk);
}

void ident_made(const char *name, const char *path)
{
	unsigned long c0 = atomic_load(&clk), n = atomic_load(&nreg);
	struct ident *r;
	struct stat st;

	if (lstat(path, &st))
		return;
	if (n == IDENT_MAX) {
		if (!atomic_load(&full_at))
			atomic_store(&full_at, c0);
		return;
	}
	r = &reg[n];
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->type = st.st_mode & S_IFMT;
	/* it may have been visible from just before this call's clock */
	r->from = c0 ? c0 - 1 : 0;
	atomic_store(&r->to, ~0UL);
	snprintf(r->name, sizeof(r->name), "%s", name);
	atomic_store(&nreg, n + 1);
	atomic_fetch_add(&clk, 1);
}

void ident_removed(const char *name)
{
	unsigned long i = atomic_load(&nreg);

	while (i-- > 0) {
		struct ident *r = &reg[i];

		if (atomic_load(&r->to) == ~0UL && !strcmp(r->name, name)) {
			/* gone after this point of the clock */
			atomic_store(&r->to, atomic_load(&clk));
			break;
		}
	}
	atomic_fetch_add(&clk, 1);
}

/* does @name appear in the comma-separated list @names? */
static int name_in(const char *name, const char *names)
{
	size_t n = strlen(name);
	const char *p = names;

	if (!n)
		return 0;
	while ((p = strstr(p, name))) {
		if ((p == names || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

static int vouches(const struct ident *r, const struct sighting *s,
		   const char *names, int any_name)
{
	if (r->dev != s->dev || r->ino != s->ino || r->type != s->type)
		return 0;
	if (r->from > s->c1 || atomic_load(&r->to) < s->c0)
		return 0;
	return any_name || name_in(r->name, names);
}

/*
 * The registered object @s met, alive in its span, named in @names. Each
 * walker first tries the entry that vouched for the same path last time
 * (a path keeps naming the same object for many calls).
 */
#define IDENT_HINTS	16
static __thread unsigned long hint[IDENT_HINTS];

static const struct ident *vouch(const struct sighting *s, const char *names,
				 int any_name)
{
	unsigned long i = atomic_load(&nreg), h;

	if (!any_name && s->pidx < IDENT_HINTS) {
		h = hint[s->pidx];
		if (h && h <= i && vouches(&reg[h - 1], s, names, 0))
			return &reg[h - 1];
	}
	while (i-- > 0) {
		if (!vouches(&reg[i], s, names, any_name))
			continue;
		if (!any_name && s->pidx < IDENT_HINTS)
			hint[s->pidx] = i + 1;
		return &reg[i];
	}
	return NULL;
}

void ident_check(int pidx, const char *names, const struct stat *st,
		 unsigned long c0)
{
	struct sighting s = { .pidx = pidx, .dev = st->st_dev, .ino = st->st_ino,
			      .type = st->st_mode & S_IFMT, .c0 = c0,
			      .c1 = atomic_load(&clk), .count = 1 };
	int i;

	if (!names[0])
		return;
	atomic_fetch_add(&checks, 1);
	if (vouch(&s, names, 0))
		return;
	/* the controller registers right after making: look once more */
	sched_yield();
	s.c1 = atomic_load(&clk);
	if (vouch(&s, names, 0))
		return;
	pthread_mutex_lock(&pend_lock);
	for (i = 0; i < npend; i++) {
		struct sighting *p = &pend[i];

		if (p->pidx == pidx && p->dev == s.dev && p->ino == s.ino &&
		    p->type == s.type) {
			/* one object seen again: the span of every sighting */
			p->count++;
			if (s.c0 < p->c0)
				p->c0 = s.c0;
			if (s.c1 > p->c1)
				p->c1 = s.c1;
			break;
		}
	}
	if (i == npend) {
		if (npend < IDENT_PENDING)
			pend[npend++] = s;
		else
			pend_lost++;
	}
	pthread_mutex_unlock(&pend_lock);
}

static const char *type_name(mode_t t)
{
	return S_ISDIR(t) ? "directory" : S_ISREG(t) ? "file" :
	       S_ISLNK(t) ? "symlink" : "other";
}

unsigned long ident_finish(FILE *out, const char *const *path_names,
			   const char *const *names)
{
	unsigned long wrong = 0, first = 1;
	int i;

	fprintf(out, "\"identity_checks\": %lu, \"identity_lost\": %lu, \"wrong_objects\": [",
		atomic_load(&checks), pend_lost);
	for (i = 0; i < npend; i++) {
		const struct sighting *s = &pend[i];
		const struct ident *r;

		/* registered late: the object was the path's after all */
		if (vouch(s, names[s->pidx], 0))
			continue;
		/* made after the registry filled up: nothing can vouch */
		if (atomic_load(&full_at) && s->c1 >= atomic_load(&full_at)) {
			atomic_fetch_add(&unvouched, s->count);
			continue;
		}
		r = vouch(s, "", 1);
		wrong += s->count;
		fprintf(out, "%s{\"path\": \"%s\", \"got\": \"%s %s\", \"dev\": %lu, \"ino\": %lu, \"count\": %lu}",
			first ? "" : ", ", path_names[s->pidx], type_name(s->type),
			r ? r->name : "(not one the scenario made)",
			(unsigned long)s->dev, (unsigned long)s->ino, s->count);
		first = 0;
	}
	fprintf(out, "], \"wrong_total\": %lu, \"identity_unvouched\": %lu, ",
		wrong, atomic_load(&unvouched));
	return wrong;
}
