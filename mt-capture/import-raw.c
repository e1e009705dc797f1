/* SPDX-License-Identifier: MIT */
/*
 * mt-capture import-raw: build a snapshot from a raw Intel PT file recorded
 * by another tool, plus the memory the traced code lived in, so mt-decode
 * can decode it.
 *
 *   import-raw --pt FILE [--pages ADDRFILE,DUMPFILE] [--filter LO-HI]
 *              [--cpu FAMILY/MODEL/STEPPING] [--elf FILE[@BIAS]]
 *              [--elf-ref FILE[@BIAS]] -o SNAP [IMAGE ...]
 *
 * IMAGE is FILE[:OFFSET[-SIZE]]@ADDR as ptxed's --raw takes it: SIZE bytes
 * (default: to the end of the file) from OFFSET (default 0) mapped at ADDR.
 * --pages reads kAFL/Nyx page dumps: ADDRFILE holds little-endian u64 page
 * addresses, DUMPFILE the 4 KiB pages in the same order.  Each image and
 * each run of pages at consecutive addresses becomes a BLOB chunk of kind 3
 * (raw memory); the PT bytes become
 * one AUX chunk; the PTCFG chunk says backend 2 (import-raw) and carries the
 * IP filters (ADDRn_A = LO, ADDRn_B = HI, as RTIT_ADDRn_A/B).
 *
 * --elf FILE[@BIAS] bundles an ELF file (an ELF chunk with its build-id)
 * and records a MMAP chunk for each executable PT_LOAD segment, loaded at
 * its p_vaddr + BIAS (default 0), so mt-decode uses its code and its
 * function symbols; --elf-ref records the MMAP chunks only (path and
 * build-id), for files mt-decode finds on disk (ptxed's --elf).  The output
 * is written to a temporary name and renamed when complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cmds.h"
#include "elffile.h"
#include "err.h"
#include "snap.h"
#include "snapout.h"
#include "version.h"

#define RAW_PAGE 4096
#define RAW_MAX_FILE (1ull << 34)	/* 16 GiB: refuse larger inputs */

struct raw_opts {
	const char *pt;		/* --pt FILE */
	const char *pages;	/* --pages ADDRFILE,DUMPFILE */
	const char *out;	/* -o SNAP */
	int has_cpu;		/* --cpu given */
	unsigned family, model, stepping;
	int nfilters;
	struct mt_snap_filter filters[MT_SNAP_MAX_FILTERS];
	const char *elfs[16];	/* --elf / --elf-ref arguments */
	int elf_bundle[16];	/* 1: --elf, 0: --elf-ref */
	int nelfs;
};

/* The synopsis on stderr (bad usage), all of it on stdout (--help). */
static void
raw_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: mt-capture import-raw [-h] [--cpu family/model/stepping]\n"
	    "                             [--elf file[@bias]] "
	    "[--elf-ref file[@bias]]\n"
	    "                             [--filter lo-hi] "
	    "[--pages addrfile,dumpfile]\n"
	    "                             --pt file -o snapshot "
	    "[file[:offset[-size]]@addr ...]\n");
	if (fp == stderr)
		return;
	fprintf(fp,
	    "Build a snapshot from a raw Intel PT byte file recorded by\n"
	    "another tool and the code it ran, for mt-decode.  Each operand\n"
	    "maps size bytes (default: to the end) of a file from offset\n"
	    "(default 0) at addr, as ptxed maps a raw image.\n"
	    "  --pt FILE          the raw PT bytes (required)\n"
	    "  -o, --output FILE  snapshot to write (required; '-' stdout, not\n"
	    "                     a terminal); renamed into place when complete\n"
	    "  --cpu F/M/S        the recording CPU's family/model/stepping\n"
	    "                     (for libipt's errata)\n"
	    "  --elf FILE[@BIAS]  bundle an ELF file, each executable segment\n"
	    "                     mapped at its address + BIAS (default 0)\n"
	    "  --elf-ref FILE[@BIAS]\n"
	    "                     the same mappings by path and build-id only,\n"
	    "                     for a file mt-decode finds on disk\n"
	    "  --filter LO-HI     an IP filter range the trace was recorded\n"
	    "                     with (repeat for up to %d)\n"
	    "  --pages ADDRFILE,DUMPFILE\n"
	    "                     kAFL/Nyx page dumps: little-endian u64 page\n"
	    "                     addresses, and the 4 KiB pages in that order\n"
	    "  -h, --help         this help\n", MT_SNAP_MAX_FILTERS);
}

/* Read all of @path; returns 0 or -1 with errno set. */
static int
raw_slurp(const char *path, uint8_t **p, size_t *len)
{
	struct stat sb;
	size_t done = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*p = NULL;
	*len = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || (uint64_t)sb.st_size > RAW_MAX_FILE) {
		if (errno == 0)
			errno = EFBIG;
		close(fd);
		return -1;
	}
	*p = malloc((size_t)sb.st_size + 1);
	if (*p == NULL) {
		close(fd);
		return -1;
	}
	while (done < (size_t)sb.st_size) {
		ssize_t n = read(fd, *p + done, (size_t)sb.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	*len = done;
	return 0;
}

static int
raw_num(const char *s, char **end, uint64_t *v)
{
	errno = 0;
	if (*s == '-' || *s == '\0')
		return -1;
	*v = strtoull(s, end, 0);
	return errno != 0 || *end == s ? -1 : 0;
}

static int
raw_parse_filter(struct raw_opts *o, const char *arg)
{
	uint64_t lo, hi;
	char *e;

	if (o->nfilters == MT_SNAP_MAX_FILTERS)
		return -1;
	if (raw_num(arg, &e, &lo) < 0 || *e != '-' ||
	    raw_num(e + 1, &e, &hi) < 0 || *e != '\0' || hi < lo)
		return -1;
	o->filters[o->nfilters].a = lo;
	o->filters[o->nfilters].b = hi;
	o->filters[o->nfilters].cfg = 1;
	o->nfilters++;
	return 0;
}

static int
raw_parse_cpu(struct raw_opts *o, const char *arg)
{
	uint64_t f, m, st;
	char *e;

	if (raw_num(arg, &e, &f) < 0 || *e != '/' ||
	    raw_num(e + 1, &e, &m) < 0 || *e != '/' ||
	    raw_num(e + 1, &e, &st) < 0 || *e != '\0' || f > 0xffff ||
	    m > 0xff || st > 0xff)
		return -1;
	o->has_cpu = 1;
	o->family = (unsigned)f;
	o->model = (unsigned)m;
	o->stepping = (unsigned)st;
	return 0;
}

static int
raw_add_blob(struct mt_snap *s, const char *name, uint64_t addr,
    const uint8_t *p, uint64_t len)
{
	struct mt_snap_blob b;

	memset(&b, 0, sizeof(b));
	b.pid = 0;
	b.kind = MT_SNAP_BLOB_MEMORY;
	b.addr = addr;
	b.name = (char *)(uintptr_t)name;
	b.len = len;
	b.data = (uint8_t *)(uintptr_t)p;
	return mt_snap_add_blob(s, &b);
}

/* FILE[:OFFSET[-SIZE]]@ADDR */
static int
raw_image(struct mt_snap *s, const char *spec)
{
	char *copy = strdup(spec), *at, *colon, *e;
	uint64_t addr, off = 0, size = UINT64_MAX;
	uint8_t *p;
	size_t len;
	int rc = 1;

	if (copy == NULL)
		return -MT_E_NOMEM;
	at = strrchr(copy, '@');
	if (at == NULL || raw_num(at + 1, &e, &addr) < 0 || *e != '\0')
		goto bad;
	*at = '\0';
	colon = strrchr(copy, ':');
	if (colon != NULL) {
		*colon = '\0';
		if (raw_num(colon + 1, &e, &off) < 0)
			goto bad;
		if (*e == '-') {
			if (raw_num(e + 1, &e, &size) < 0)
				goto bad;
		}
		if (*e != '\0')
			goto bad;
	}
	if (raw_slurp(copy, &p, &len) < 0) {
		fprintf(stderr, "mt-capture: cannot read '%s': %s\n", copy,
		    strerror(errno));
		free(copy);
		return 1;
	}
	if (off > len || (size != UINT64_MAX && size > len - off)) {
		if (size == UINT64_MAX)	/* (no size: to the end) */
			fprintf(stderr, "mt-capture: image '%s': offset %llu "
			    "past the end of the file (%zu bytes)\n", spec,
			    (unsigned long long)off, len);
		else
			fprintf(stderr, "mt-capture: image '%s': offset %llu "
			    "size %llu past the end of the file (%zu bytes)\n",
			    spec, (unsigned long long)off,
			    (unsigned long long)size, len);
		free(p);
		free(copy);
		return 1;
	}
	if (size == UINT64_MAX)
		size = len - off;
	if (size > 0 && size - 1 > UINT64_MAX - addr) {
		fprintf(stderr, "mt-capture: image '%s': %llu bytes at "
		    "0x%llx run past the end of the address space\n", spec,
		    (unsigned long long)size, (unsigned long long)addr);
		free(p);
		free(copy);
		return 1;
	}
	rc = raw_add_blob(s, copy, addr, p + off, size) < 0 ? -MT_E_NOMEM : 0;
	free(p);
	free(copy);
	return rc;
bad:
	fprintf(stderr, "mt-capture: bad image '%s' (want "
	    "file[:offset[-size]]@addr)\n", spec);
	free(copy);
	return 2;
}

/* --elf FILE[@BIAS]: MMAP chunks for its executable segments, and the
 * file itself when @bundle. */
static int
raw_elf(struct mt_snap *s, const char *spec, int bundle)
{
	char *copy = strdup(spec), *at, *e;
	uint64_t bias = 0;
	const struct mt_elf_seg *segs;
	const uint8_t *bid;
	struct mt_elf *elf = NULL;
	uint8_t *p = NULL;
	size_t n, i, bidlen, len;
	int rc = 1;

	if (copy == NULL)
		return -MT_E_NOMEM;
	at = strrchr(copy, '@');
	if (at != NULL) {
		*at = '\0';
		if (raw_num(at + 1, &e, &bias) < 0 || *e != '\0') {
			fprintf(stderr, "mt-capture: bad --elf '%s' (want "
			    "file[@bias])\n", spec);
			free(copy);
			return 2;
		}
	}
	if (raw_slurp(copy, &p, &len) < 0) {
		fprintf(stderr, "mt-capture: cannot read '%s': %s\n", copy,
		    strerror(errno));
		goto out;
	}
	if (mt_elf_open_mem(&elf, p, len) < 0) {
		fprintf(stderr, "mt-capture: '%s': not a usable ELF file: %s\n",
		    copy, mt_elf_errmsg(NULL));
		goto out;
	}
	bidlen = mt_elf_build_id(elf, &bid);
	if (bidlen > MT_SNAP_BUILD_ID_MAX)
		bidlen = MT_SNAP_BUILD_ID_MAX;
	n = mt_elf_segs(elf, &segs);
	for (i = 0; i < n; i++) {
		struct mt_snap_mmap m;
		uint64_t pad = segs[i].vaddr & 0xfff;

		if (!(segs[i].flags & 1) || segs[i].memsz == 0)
			continue;
		if ((segs[i].offset & 0xfff) != pad)
			pad = 0;
		memset(&m, 0, sizeof(m));
		m.pid = 0;
		m.start = segs[i].vaddr - pad + bias;
		m.end = segs[i].vaddr + segs[i].memsz + bias;
		if (m.end <= m.start) {	/* (a bias is modulo 2^64) */
			fprintf(stderr, "mt-capture: '%s': segment at 0x%llx "
			    "with bias 0x%llx runs past the end of the "
			    "address space\n", copy,
			    (unsigned long long)segs[i].vaddr,
			    (unsigned long long)bias);
			goto out;
		}
		m.pgoff = segs[i].offset - pad;
		m.prot = 5;	/* PROT_READ | PROT_EXEC */
		m.flags = 2;	/* MAP_PRIVATE */
		m.build_id_len = (uint8_t)bidlen;
		memcpy(m.build_id, bid, bidlen);
		m.path = copy;
		if (mt_snap_add_mmap(s, &m) < 0) {
			rc = -MT_E_NOMEM;
			goto out;
		}
	}
	if (bundle) {
		struct mt_snap_elf ef;

		memset(&ef, 0, sizeof(ef));
		ef.build_id_len = (uint8_t)bidlen;
		memcpy(ef.build_id, bid, bidlen);
		ef.path = copy;
		ef.len = len;
		ef.data = p;
		if (mt_snap_add_elf(s, &ef) < 0) {
			rc = -MT_E_NOMEM;
			goto out;
		}
	}
	rc = 0;
out:
	mt_elf_free(elf);
	free(p);
	free(copy);
	return rc;
}

static int
raw_pages(struct mt_snap *s, const char *arg)
{
	char *copy = strdup(arg), *comma;
	uint8_t *addrs = NULL, *dump = NULL;
	size_t alen, dlen, i, j, n;
	const char *name;
	int rc = 1;

	if (copy == NULL)
		return -MT_E_NOMEM;
	comma = strchr(copy, ',');
	if (comma == NULL || comma == copy || comma[1] == '\0') {
		fprintf(stderr, "mt-capture: bad --pages '%s' (want "
		    "addrfile,dumpfile)\n", arg);
		free(copy);
		return 2;
	}
	*comma = '\0';
	if (raw_slurp(copy, &addrs, &alen) < 0 ||
	    raw_slurp(comma + 1, &dump, &dlen) < 0) {
		fprintf(stderr, "mt-capture: cannot read '%s': %s\n",
		    addrs == NULL ? copy : comma + 1, strerror(errno));
		goto out;
	}
	if (alen % 8 != 0) {
		fprintf(stderr, "mt-capture: '%s': truncated address at offset "
		    "%zu\n", copy, alen - alen % 8);
		goto out;
	}
	n = alen / 8;
	if (dlen / RAW_PAGE < n) {
		fprintf(stderr, "mt-capture: '%s': %zu pages listed but the "
		    "dump ends at offset %zu\n", comma + 1, n, dlen);
		goto out;
	}
	name = comma + 1;
	/*
	 * A run of pages at consecutive addresses is one BLOB: mt-decode
	 * then maps it as one libipt section, whose blocks do not end at
	 * every page border (about 10% fewer blocks and a quarter less
	 * decode time on the mruby trace), and export-perf writes it as one
	 * mapping.
	 */
	for (i = 0; i < n; i = j) {
		uint64_t addr = mt_le64(addrs + 8 * i);

		for (j = i + 1; j < n && addr <= UINT64_MAX - (j - i) *
		    RAW_PAGE && mt_le64(addrs + 8 * j) == addr + (j - i) *
		    RAW_PAGE; j++)
			;
		if (raw_add_blob(s, name, addr, dump + i * RAW_PAGE,
		    (j - i) * RAW_PAGE) < 0) {
			rc = -MT_E_NOMEM;
			goto out;
		}
	}
	rc = 0;
out:
	free(addrs);
	free(dump);
	free(copy);
	return rc;
}

static int
raw_write(const struct mt_snap *s, const char *out)
{
	int rc;

	if (strcmp(out, "-") == 0 && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "mt-capture: standard output is a terminal: "
		    "not writing a snapshot there\n");
		return 2;
	}
	rc = mt_cap_write_snapshot(s, out);
	if (rc == -MT_E_ISDIR) {
		fprintf(stderr, "mt-capture: '%s' is a directory (-o names "
		    "the output file)\n", out);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "mt-capture: cannot write '%s': %s\n", out,
		    rc == -MT_E_IO ? strerror(errno) : mt_strerror(rc));
		return 1;
	}
	return 0;
}

static int
raw_build(const struct raw_opts *o, char **images, int nimages,
    struct mt_snap *s)
{
	struct mt_snap_aux a;
	uint8_t *pt;
	size_t ptlen;
	int i, rc;

	if (raw_slurp(o->pt, &pt, &ptlen) < 0) {
		fprintf(stderr, "mt-capture: cannot read '%s': %s\n", o->pt,
		    strerror(errno));
		return 1;
	}
	if (mt_snap_add_meta(s, "mt-version", MT_VERSION) < 0 ||
	    mt_snap_add_meta(s, "reason", "import") < 0 ||
	    mt_snap_add_meta(s, "backend-name", "raw") < 0 ||
	    mt_snap_add_meta(s, "source", o->pt) < 0)
		goto nomem;
	if (o->has_cpu) {
		struct mt_snap_host h;

		memset(&h, 0, sizeof(h));
		memcpy(h.vendor, "GenuineIntel", 12);
		h.family = (uint16_t)o->family;
		h.model = (uint8_t)o->model;
		h.stepping = (uint8_t)o->stepping;
		if (mt_snap_set_host(s, &h) < 0)
			goto nomem;
		s->has_host = 1;
	}
	s->has_ptcfg = 1;
	s->ptcfg.backend = MT_SNAP_BK_RAW;
	s->ptcfg.config = MT_PT_CFG_BRANCH;
	s->ptcfg.user = 1;
	s->ptcfg.nfilters = (uint8_t)o->nfilters;
	memcpy(s->ptcfg.filters, o->filters, sizeof(o->filters));
	for (i = 0; i < nimages; i++) {
		rc = raw_image(s, images[i]);
		if (rc != 0)
			goto fail;
	}
	if (o->pages != NULL && (rc = raw_pages(s, o->pages)) != 0)
		goto fail;
	for (i = 0; i < o->nelfs; i++) {
		rc = raw_elf(s, o->elfs[i], o->elf_bundle[i]);
		if (rc != 0)
			goto fail;
	}
	memset(&a, 0, sizeof(a));
	a.tid = 0;
	a.cpu = MT_SNAP_NONE;
	a.ring_size = ptlen;
	a.head = 0;
	a.len = ptlen;
	a.data = pt;
	if (mt_snap_add_aux(s, &a) < 0)
		goto nomem;
	free(pt);
	return 0;
nomem:
	rc = -MT_E_NOMEM;
fail:
	free(pt);
	if (rc < 0) {
		fprintf(stderr, "mt-capture: %s\n", mt_strerror(rc));
		return 1;
	}
	return rc;
}

int
cmd_import_raw(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "elf", required_argument, NULL, 'e' },
		{ "elf-ref", required_argument, NULL, 'E' },
		{ "filter", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "pages", required_argument, NULL, 'P' },
		{ "pt", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct raw_opts o;
	struct mt_snap s;
	int c, rc;

	memset(&o, 0, sizeof(o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (raw_parse_cpu(&o, optarg) < 0) {
				fprintf(stderr, "mt-capture: bad --cpu '%s' "
				    "(want family/model/stepping)\n", optarg);
				return 2;
			}
			break;
		case 'e':
		case 'E':
			if (o.nelfs == 16) {
				fprintf(stderr, "mt-capture: at most 16 ELF "
				    "files\n");
				return 2;
			}
			o.elf_bundle[o.nelfs] = c == 'e';
			o.elfs[o.nelfs++] = optarg;
			break;
		case 'F':
			if (raw_parse_filter(&o, optarg) < 0) {
				fprintf(stderr, "mt-capture: bad --filter '%s' "
				    "(want lo-hi, at most %d)\n", optarg,
				    MT_SNAP_MAX_FILTERS);
				return 2;
			}
			break;
		case 'h':
			raw_usage(stdout);
			return 0;
		case 'o': o.out = optarg; break;
		case 'P': o.pages = optarg; break;
		case 't': o.pt = optarg; break;
		default:
			raw_usage(stderr);
			return 2;
		}
	}
	if (o.pt == NULL || o.out == NULL) {
		fprintf(stderr, "mt-capture: import-raw needs --pt and -o\n");
		raw_usage(stderr);
		return 2;
	}
	mt_snap_init(&s);
	rc = raw_build(&o, argv + optind, argc - optind, &s);
	if (rc == 0)
		rc = raw_write(&s, o.out);
	mt_snap_release(&s);
	return rc;
}
