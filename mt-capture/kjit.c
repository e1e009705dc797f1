/* SPDX-License-Identifier: MIT */
/*
 * BPF programs loaded now (see kjit.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "err.h"
#include "kjit.h"
#include "proc.h"

static int
sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* The info of program @fd with its per-function arrays (malloc'ed). */
static int
prog_info(int fd, struct bpf_prog_info *info, uint64_t **ksyms,
    uint32_t **lens, uint8_t **tags)
{
	union bpf_attr a;
	uint32_t nk, nl, nt;

	*ksyms = NULL;
	*lens = NULL;
	*tags = NULL;
	memset(info, 0, sizeof(*info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
		return -1;
	nk = info->nr_jited_ksyms;
	nl = info->nr_jited_func_lens;
	nt = info->nr_prog_tags;
	if (nk == 0 || nl != nk || nk > 4096)
		return -1;	/* not JIT-compiled, or hidden */
	*ksyms = calloc(nk, sizeof(**ksyms));
	*lens = calloc(nl, sizeof(**lens));
	*tags = calloc(nt + 1, BPF_TAG_SIZE);
	if (*ksyms == NULL || *lens == NULL || *tags == NULL)
		return -1;
	/* Again, asking only for the arrays (their counts as given). */
	memset(info, 0, sizeof(*info));
	info->nr_jited_ksyms = nk;
	info->jited_ksyms = (uint64_t)(uintptr_t)*ksyms;
	info->nr_jited_func_lens = nl;
	info->jited_func_lens = (uint64_t)(uintptr_t)*lens;
	info->nr_prog_tags = nt;
	info->prog_tags = (uint64_t)(uintptr_t)*tags;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0 ||
	    info->nr_jited_ksyms < nk || info->nr_jited_func_lens < nl)
		return -1;
	if (info->nr_prog_tags < nt)
		nt = info->nr_prog_tags;
	info->nr_jited_ksyms = nk;
	info->nr_prog_tags = nt;
	return 0;
}

static void
tag_hex(const uint8_t *tag, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < BPF_TAG_SIZE; i++) {
		out[2 * i] = hex[tag[i] >> 4];
		out[2 * i + 1] = hex[tag[i] & 15];
	}
	out[2 * BPF_TAG_SIZE] = '\0';
}

size_t
mt_kjit_bpf(struct mt_proc_krange *out, size_t max, int *err)
{
	union bpf_attr a;
	uint32_t id = 0;
	size_t n = 0;

	*err = 0;
	while (n < max) {
		struct bpf_prog_info info;
		uint64_t *ksyms;
		uint32_t *lens, k;
		uint8_t *tags;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a) < 0) {
			if (errno != ENOENT)
				*err = errno;
			break;
		}
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		if ((fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a)) < 0) {
			if (errno == ENOENT)	/* unloaded meanwhile */
				continue;
			*err = errno;
			break;
		}
		if (prog_info(fd, &info, &ksyms, &lens, &tags) == 0)
			for (k = 0; k < info.nr_jited_ksyms && n < max; k++) {
				struct mt_proc_krange *r = &out[n++];
				char hex[2 * BPF_TAG_SIZE + 1];

				memset(r, 0, sizeof(*r));
				r->addr = ksyms[k];
				r->len = lens[k];
				r->type = PERF_RECORD_KSYMBOL_TYPE_BPF;
				tag_hex(k < info.nr_prog_tags ?
				    tags + k * BPF_TAG_SIZE : info.tag, hex);
				snprintf(r->name, sizeof(r->name),
				    "bpf_prog_%s%s%s", hex,
				    k > 0 || info.name[0] ? "_" : "",
				    k > 0 ? "F" : info.name);
			}
		free(ksyms);
		free(lens);
		free(tags);
		close(fd);
	}
	return n;
}

/*
 * The next "[bpf]" line of kallsyms text from *@p: its address and
 * name.  Returns 1, or 0 at the end.
 */
static int
next_bpf_sym(const char **p, uint64_t *addr, char *name, size_t namesz)
{
	const char *l = *p, *e;

	for (; *l != '\0'; l = *e ? e + 1 : e) {
		char nm[128];
		unsigned long long a;
		char type;

		e = strchr(l, '\n');
		if (e == NULL)
			e = l + strlen(l);
		if (e - l < 7 || memcmp(e - 6, "\t[bpf]", 6) != 0 ||
		    sscanf(l, "%llx %c %127s", &a, &type, nm) != 3)
			continue;
		*addr = a;
		snprintf(name, namesz, "%s", nm);
		*p = *e ? e + 1 : e;
		return 1;
	}
	*p = l;
	return 0;
}

void
mt_kjit_name(const char *syms, struct mt_proc_krange *r, size_t n)
{
	const char *p = syms;
	char name[sizeof(r->name)];
	uint64_t addr;
	size_t i;

	while (n > 0 && next_bpf_sym(&p, &addr, name, sizeof(name)))
		for (i = 0; i < n; i++)
			if (r[i].addr == addr && addr != 0)
				memcpy(r[i].name, name, sizeof(name));
}

size_t
mt_kjit_from_kallsyms(const char *syms, uint32_t cap,
    struct mt_proc_krange *out, size_t max)
{
	const char *p = syms;
	char name[sizeof(out->name)];
	uint64_t addr;
	size_t n = 0, i, j;

	while (n < max && next_bpf_sym(&p, &addr, name, sizeof(name))) {
		if (addr == 0)	/* kptr_restrict */
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].addr = addr;
		out[n].type = strncmp(name, "bpf_prog_", 9) == 0 ?
		    PERF_RECORD_KSYMBOL_TYPE_BPF :
		    PERF_RECORD_KSYMBOL_TYPE_UNKNOWN;
		memcpy(out[n].name, name, sizeof(name));
		n++;
	}
	/* Up to the next symbol above (of [bpf]: JIT code has its own
	 * area), at most @cap. */
	for (i = 0; i < n; i++) {
		uint64_t next = out[i].addr + cap;

		for (j = 0; j < n; j++)
			if (out[j].addr > out[i].addr && out[j].addr < next)
				next = out[j].addr;
		out[i].len = (uint32_t)(next - out[i].addr);
	}
	return n;
}

long
mt_kjit_all(const char *syms, const struct mt_proc_krange *jit, size_t njit,
    struct mt_proc_krange **out, char *warn, size_t warnsz)
{
	const size_t most = 4096;
	struct mt_proc_krange *all;
	size_t nb, i, j, n = njit;
	int err;

	warn[0] = '\0';
	*out = NULL;
	if ((all = malloc((njit + most) * sizeof(*all))) == NULL)
		return -MT_E_NOMEM;
	if (njit > 0)
		memcpy(all, jit, njit * sizeof(*all));
	nb = mt_kjit_bpf(all + njit, most, &err);
	if (err != 0) {
		nb = mt_kjit_from_kallsyms(syms, MT_KJIT_GUESS, all + njit,
		    most);
		if (nb > 0)
			snprintf(warn, warnsz, "--kernel: listing the BPF "
			    "programs was refused (bpf(): %s; it needs "
			    "CAP_SYS_ADMIN): the %zu [bpf] symbols of "
			    "/proc/kallsyms are taken up to the next one, at "
			    "most %u bytes each", strerror(err), nb,
			    MT_KJIT_GUESS);
	} else {
		mt_kjit_name(syms, all + njit, nb);
	}
	/* Those the KSYMBOL records announced already stay as they are. */
	for (i = njit; i < njit + nb; i++) {
		for (j = 0; j < njit && all[j].addr != all[i].addr; j++)
			;
		if (j == njit)
			all[n++] = all[i];
	}
	if (n == 0) {
		free(all);
		return 0;
	}
	*out = all;
	return (long)n;
}
