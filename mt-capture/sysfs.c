/* SPDX-License-Identifier: MIT */
/*
 * PMU discovery in sysfs (see sysfs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "sysfs.h"

#define DEVICES "/sys/bus/event_source/devices"

/* Read a small text file into @buf, NUL-terminated, trailing space cut. */
static int
read_small(const char *path, char *buf, size_t sz)
{
	int fd;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -MT_E_NOTFOUND : -MT_E_SYS;
	n = read(fd, buf, sz - 1);
	close(fd);
	if (n < 0)
		return -MT_E_SYS;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int
parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -MT_E_CORRUPT;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		return -MT_E_CORRUPT;
	return 0;
}

int
mt_pmu_exists(const char *root, const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s/%s", root ? root : "", DEVICES,
	    name);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Parse "config:LO-HI", "config1:BIT" into @f. */
static int
parse_format(const char *s, struct mt_pmu_format *f)
{
	const char *colon = strchr(s, ':');
	char *end;
	unsigned long lo, hi;
	size_t flen;

	if (colon == NULL)
		return -MT_E_CORRUPT;
	flen = (size_t)(colon - s);
	if (flen == 6 && strncmp(s, "config", 6) == 0)
		f->field = 0;
	else if (flen == 7 && strncmp(s, "config1", 7) == 0)
		f->field = 1;
	else if (flen == 7 && strncmp(s, "config2", 7) == 0)
		f->field = 2;
	else
		return -MT_E_CORRUPT;
	s = colon + 1;
	if (*s < '0' || *s > '9')
		return -MT_E_CORRUPT;
	lo = strtoul(s, &end, 10);
	hi = lo;
	if (*end == '-') {
		s = end + 1;
		if (*s < '0' || *s > '9')
			return -MT_E_CORRUPT;
		hi = strtoul(s, &end, 10);
	}
	if (*end == ',')
		return -MT_E_UNSUPP;
	if (*end != '\0' || lo > hi || hi > 63)
		return -MT_E_CORRUPT;
	f->lo = (uint8_t)lo;
	f->hi = (uint8_t)hi;
	return 0;
}

static int
cmp_fmt(const void *a, const void *b)
{
	return strcmp(((const struct mt_pmu_format *)a)->name,
	    ((const struct mt_pmu_format *)b)->name);
}

int
mt_pmu_read(struct mt_pmu *p, const char *root, const char *name,
    char *msg, size_t msgsz)
{
	char path[1024], buf[128];
	uint64_t v;
	DIR *d;
	struct dirent *de;
	int rc;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->dir, sizeof(p->dir), "%s%s/%s", root ? root : "",
	    DEVICES, name);
	if (!mt_pmu_exists(root, name)) {
		snprintf(msg, msgsz, "no '%s' PMU in %s%s", name,
		    root ? root : "", DEVICES);
		return -MT_E_NOPMU;
	}
	snprintf(path, sizeof(path), "%s/type", p->dir);
	rc = read_small(path, buf, sizeof(buf));
	if (rc == 0)
		rc = parse_u64(buf, 10, &v);
	if (rc == 0 && v > UINT32_MAX)
		rc = -MT_E_CORRUPT;
	if (rc < 0) {
		snprintf(msg, msgsz, "cannot read PMU type from '%s'", path);
		return rc == -MT_E_NOTFOUND ? -MT_E_CORRUPT : rc;
	}
	p->type = (uint32_t)v;

	snprintf(path, sizeof(path), "%s/format", p->dir);
	d = opendir(path);
	if (d == NULL)
		return 0;	/* a PMU without format terms */
	rc = 0;
	while ((de = readdir(d)) != NULL) {
		struct mt_pmu_format *f;

		if (de->d_name[0] == '.')
			continue;
		if (p->nfmt == MT_PMU_MAX_FORMATS ||
		    strlen(de->d_name) >= sizeof(f->name))
			continue;
		f = &p->fmt[p->nfmt];
		memcpy(f->name, de->d_name, strlen(de->d_name) + 1);
		snprintf(path, sizeof(path), "%s/format/%s", p->dir,
		    de->d_name);
		rc = read_small(path, buf, sizeof(buf));
		if (rc == 0)
			rc = parse_format(buf, f);
		if (rc < 0) {
			snprintf(msg, msgsz, "%s format in '%s': '%s'",
			    rc == -MT_E_UNSUPP ? "unsupported" : "malformed",
			    path, buf);
			break;
		}
		p->nfmt++;
	}
	closedir(d);
	if (rc < 0)
		return rc == -MT_E_NOTFOUND ? -MT_E_CORRUPT : rc;
	qsort(p->fmt, p->nfmt, sizeof(p->fmt[0]), cmp_fmt);
	return 0;
}

void
mt_pmu_canonical_pt(struct mt_pmu *p)
{
	static const struct mt_pmu_format pt_fmt[] = {
		{ "pt", 0, 0, 0 },
		{ "cyc", 0, 1, 1 },
		{ "pwr_evt", 0, 4, 4 },
		{ "fup_on_ptw", 0, 5, 5 },
		{ "mtc", 0, 9, 9 },
		{ "tsc", 0, 10, 10 },
		{ "noretcomp", 0, 11, 11 },
		{ "ptw", 0, 12, 12 },
		{ "branch", 0, 13, 13 },
		{ "mtc_period", 0, 14, 17 },
		{ "cyc_thresh", 0, 19, 22 },
		{ "psb_period", 0, 24, 27 },
	};
	size_t i;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "intel_pt");
	p->canonical = 1;
	for (i = 0; i < sizeof(pt_fmt) / sizeof(pt_fmt[0]); i++)
		p->fmt[p->nfmt++] = pt_fmt[i];
	qsort(p->fmt, p->nfmt, sizeof(p->fmt[0]), cmp_fmt);
}

const struct mt_pmu_format *
mt_pmu_format(const struct mt_pmu *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nfmt; i++)
		if (strcmp(p->fmt[i].name, name) == 0)
			return &p->fmt[i];
	return NULL;
}

int
mt_pmu_cap(const struct mt_pmu *p, const char *cap, uint64_t *v)
{
	char path[700], buf[128];
	int rc, is_cap = strncmp(cap, "caps/", 5) == 0;

	if (p->canonical) {
		if (!is_cap)
			return -MT_E_NOTFOUND;
		*v = strstr(cap, "periods") || strstr(cap, "thresholds") ?
		    0xffff : 1;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", p->dir, cap);
	rc = read_small(path, buf, sizeof(buf));
	if (rc < 0)
		return rc == -MT_E_NOTFOUND ? rc : -MT_E_SYS;
	return parse_u64(buf, is_cap ? 16 : 10, v);
}

int
mt_pmu_format_set(const struct mt_pmu_format *f, uint64_t cfg[3],
    uint64_t value)
{
	unsigned width = (unsigned)(f->hi - f->lo + 1);
	uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);

	if (value & ~mask)
		return -MT_E_LIMIT;
	cfg[f->field] &= ~(mask << f->lo);
	cfg[f->field] |= value << f->lo;
	return 0;
}
