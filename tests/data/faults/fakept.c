/* SPDX-License-Identifier: MIT */
/*
 * An LD_PRELOAD shim that lets the live Intel PT path of mt-capture run on
 * a machine without Intel PT (tests/mt-capture-livept.bats).  It sits
 * between mt-capture and the kernel at syscall(SYS_perf_event_open), mmap
 * and ioctl, and, as the environment asks:
 *
 *   FAKEPT_TYPE=N        attr.type N is "intel_pt": the event is opened as a
 *                        dummy software event with the same flags (so
 *                        enable_on_exec, inherit, SET_OUTPUT, DISABLE and
 *                        ENABLE run in the real kernel), and its AUX mmap
 *                        is an anonymous zeroed mapping, optionally holding
 *                        the bytes of FAKEPT_AUX (aux_head set to their
 *                        length modulo the ring size).  IOC_SET_FILTER on
 *                        it is logged and accepted.
 *   FAKEPT_UPROBE=N      attr.type N is the uprobe PMU: opened with the
 *                        real uprobe type.  A uprobe with aux_action bits
 *                        in a fake PT group is opened alone (the dummy
 *                        leader has no AUX) and logged.
 *   FAKEPT_KERNEL=M.m    refuse with EINVAL what kernels before M.m refuse:
 *                        attr.build_id (5.12), aux_action (6.13),
 *                        text_poke (5.9), ksymbol and bpf_event (5.1),
 *                        inherit_thread (5.13).
 *   FAKEPT_OPEN_ERRNO=E  opening a PT event fails with errno E.
 *   FAKEPT_MMAP_ERRNO=E  the data-ring mmap of a PT event fails with E.
 *   FAKEPT_AUX_ERRNO=E   the AUX mmap fails with E.
 *   FAKEPT_SB_MMAP_ERRNO=E  the data-ring mmap of another perf event (the
 *                        sideband) fails with E.
 *   FAKEPT_FAKE_DATA=1   every perf data-ring mmap is an anonymous zeroed
 *                        mapping too (no records; nothing charged to the
 *                        locked-memory limits): for tests of the sizes
 *                        mt-capture maps, whatever other perf users of
 *                        this uid hold.
 *   FAKEPT_PT_RECORDS=1  the fake PT event also records task and comm
 *                        events (FORK, EXIT, COMM of its thread), so its
 *                        own data ring fills as ITRACE_START and AUX
 *                        records would fill a real one.
 *   FAKEPT_BPF_ERRNO=E   every bpf(2) call fails with errno E (EPERM=1:
 *                        an unprivileged user).
 *   FAKEPT_SB=FILE       the first data-ring mmap of another perf event
 *                        (the first sideband ring) is an anonymous
 *                        mapping whose data area holds the records of
 *                        FILE (data_head their length) and whose page
 *                        gives the time conversion of a stable TSC at 1
 *                        ns per tick from 0 (cap_user_time_zero,
 *                        time_mult 1, time_shift 0, time_zero 0): perf
 *                        time equals TSC.  A virtual machine's kernel
 *                        gives none (its sched_clock is not the TSC).
 *   FAKEPT_LOG=FILE      one line per perf_event_open, perf mmap and
 *                        perf ioctl: what mt-capture asked of the kernel;
 *                        and per rename (a snapshot reaching its name).
 *   FAKEPT_WATCH=STR     log "read N" for each read(2) of N bytes from a
 *                        file whose path contains STR (bundling reads
 *                        whole files; libelf maps them).
 *
 * Nothing here imitates PT itself: the AUX bytes are whatever the test
 * puts in FAKEPT_AUX.
 *
 * Build: cc -shared -fPIC -o fakept.so fakept.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

long syscall(long n, ...);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int ioctl(int fd, unsigned long req, ...);
int close(int fd);
int rename(const char *from, const char *to);
ssize_t read(int fd, void *buf, size_t n);

#define MAXFD 65536
static unsigned char fake[MAXFD];	/* fd is a fake PT event */
static unsigned char upr[MAXFD];	/* fd is a uprobe event */
static struct perf_event_mmap_page *upage[MAXFD];

static long
env_num(const char *name, long dflt)
{
	const char *e = getenv(name);

	return e != NULL && *e != '\0' ? strtol(e, NULL, 0) : dflt;
}

static void
tlog(const char *fmt, ...)
{
	const char *path = getenv("FAKEPT_LOG");
	va_list ap;
	FILE *fp;

	if (path == NULL || (fp = fopen(path, "ae")) == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fclose(fp);
}

/* 1 when FAKEPT_KERNEL says the kernel is older than @maj.@min. */
static int
older_than(int maj, int min)
{
	const char *e = getenv("FAKEPT_KERNEL");
	int a = 0, b = 0;

	if (e == NULL || sscanf(e, "%d.%d", &a, &b) < 1)
		return 0;
	return a < maj || (a == maj && b < min);
}

static uint32_t
real_uprobe_type(void)
{
	FILE *fp = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	unsigned t = 0;

	if (fp != NULL) {
		if (fscanf(fp, "%u", &t) != 1)
			t = 0;
		fclose(fp);
	}
	return t;
}

static long
fake_open(long (*real)(long, ...), struct perf_event_attr *ua, long pid,
    long cpu, long group, long flags)
{
	struct perf_event_attr a;
	uint32_t aux_action;
	int is_pt, is_up;
	long fd;

	memcpy(&a, ua, sizeof(a) < ua->size ? sizeof(a) : ua->size);
	memcpy(&aux_action, (const char *)ua + 116, 4);
	is_pt = a.type == (uint32_t)env_num("FAKEPT_TYPE", -1);
	is_up = a.type == (uint32_t)env_num("FAKEPT_UPROBE", -1);
	tlog("open %s type=%u config=0x%llx pid=%ld cpu=%ld group=%ld "
	    "size=%u build_id=%u aux_action=%u inherit=%u enable_on_exec=%u "
	    "disabled=%u exclude_kernel=%u context_switch=%u text_poke=%u "
	    "ksymbol=%u bpf_event=%u inherit_thread=%u\n",
	    is_pt ? "pt" : is_up ? "uprobe" : "other", a.type,
	    (unsigned long long)a.config, pid, cpu, group, ua->size,
	    a.build_id, aux_action, a.inherit, a.enable_on_exec, a.disabled,
	    a.exclude_kernel, a.context_switch, a.text_poke, a.ksymbol,
	    a.bpf_event, a.inherit_thread);
	if ((a.build_id && older_than(5, 12)) ||
	    (aux_action != 0 && older_than(6, 13)) ||
	    (a.text_poke && older_than(5, 9)) ||
	    ((a.ksymbol || a.bpf_event) && older_than(5, 1)) ||
	    (a.inherit_thread && older_than(5, 13))) {
		tlog("refused EINVAL\n");
		errno = EINVAL;
		return -1;
	}
	if (is_pt && env_num("FAKEPT_OPEN_ERRNO", 0) != 0) {
		errno = (int)env_num("FAKEPT_OPEN_ERRNO", 0);
		return -1;
	}
	if (is_pt) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		if (env_num("FAKEPT_PT_RECORDS", 0)) {
			a.task = 1;
			a.comm = 1;
		}
	}
	if (is_up) {
		a.type = real_uprobe_type();
		if (group >= 0 && group < MAXFD && fake[group]) {
			/* The dummy leader has no AUX: open it alone. */
			memset((char *)&a + 116, 0, 4);
			group = -1;
		}
	}
	fd = real(SYS_perf_event_open, &a, pid, cpu, group, flags);
	if (fd >= 0 && fd < MAXFD) {
		fake[fd] = (unsigned char)is_pt;
		upr[fd] = (unsigned char)is_up;
		upage[fd] = NULL;
	}
	tlog("fd %ld\n", fd);
	return fd;
}

long
syscall(long n, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (real == NULL)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_perf_event_open)
		return fake_open(real, (struct perf_event_attr *)a[0], a[1],
		    a[2], a[3], a[4]);
	if (n == SYS_bpf && env_num("FAKEPT_BPF_ERRNO", 0) != 0) {
		errno = (int)env_num("FAKEPT_BPF_ERRNO", 0);
		return -1;
	}
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int
is_perf_fd(int fd)
{
	char link[64], path[128];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, sizeof(path) - 1);
	if (k < 0)
		return 0;
	path[k] = '\0';
	return strstr(path, "perf_event") != NULL;
}

static void *
fake_aux(size_t len, int prot, int fd)
{
	const char *f = getenv("FAKEPT_AUX");
	uint8_t *p;
	size_t n = 0;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	if (f != NULL) {
		int in = open(f, O_RDONLY | O_CLOEXEC);
		ssize_t r;

		while (in >= 0 && n < len &&
		    (r = read(in, p + n, len - n)) > 0)
			n += (size_t)r;
		if (in >= 0)
			close(in);
	}
	if (upage[fd] != NULL)
		upage[fd]->aux_head = n % len;
	mprotect(p, len, prot);
	return p;
}

/* FAKEPT_SB: a data ring of @len bytes holding the file's records. */
static void *
fake_sb(size_t len, int prot, int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	struct perf_event_mmap_page *pg;
	int in = open(getenv("FAKEPT_SB"), O_RDONLY | O_CLOEXEC);
	uint8_t *p;
	ssize_t r;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	while (in >= 0 && page + n < len &&
	    (r = read(in, p + page + n, len - page - n)) > 0)
		n += (size_t)r;
	if (in >= 0)
		close(in);
	pg = (struct perf_event_mmap_page *)p;
	pg->data_offset = page;
	pg->data_size = len - page;
	pg->data_head = n;
	pg->cap_user_time_zero = 1;
	pg->time_zero = 0;
	pg->time_mult = 1;
	pg->time_shift = 0;
	upage[fd] = pg;
	tlog("fake sideband fd=%d bytes=%zu\n", fd, n);
	(void)prot;
	return p;
}

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	const char *what;
	long e;
	void *p;

	if (real == NULL)
		real = (void *(*)(void *, size_t, int, int, int,
		    off_t))dlsym(RTLD_NEXT, "mmap");
	if (fd < 0 || fd >= MAXFD || !is_perf_fd(fd))
		return real(addr, len, prot, flags, fd, off);
	what = off != 0 ? "aux" : fake[fd] ? "pt-data" : "data";
	tlog("mmap %s fd=%d len=%zu off=%lld prot=%d\n", what, fd, len,
	    (long long)off, prot);
	e = off != 0 ? env_num("FAKEPT_AUX_ERRNO", 0) : fake[fd] ?
	    env_num("FAKEPT_MMAP_ERRNO", 0) : env_num("FAKEPT_SB_MMAP_ERRNO",
	    0);
	if (e != 0) {
		errno = (int)e;
		return MAP_FAILED;
	}
	if (off != 0 && fake[fd])
		return fake_aux(len, prot, fd);
	if (off == 0 && !fake[fd] && getenv("FAKEPT_SB") != NULL) {
		static int done;

		if (!done) {
			done = 1;
			return fake_sb(len, prot, fd);
		}
	}
	if (off == 0 && env_num("FAKEPT_FAKE_DATA", 0)) {
		p = real(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			upage[fd] = p;
		return p;
	}
	p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && off == 0)
		upage[fd] = p;
	return p;
}

int
ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	if (real == NULL)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
		    "ioctl");
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd < MAXFD && fake[fd] &&
	    req == PERF_EVENT_IOC_SET_FILTER) {
		tlog("ioctl SET_FILTER fd=%d '%s'\n", fd, (const char *)arg);
		return 0;
	}
	if (fd >= 0 && fd < MAXFD && (fake[fd] || upr[fd]))
		tlog("ioctl %s fd=%d %s\n", fake[fd] ? "pt" : "uprobe", fd,
		    req == PERF_EVENT_IOC_ENABLE ? "ENABLE" :
		    req == PERF_EVENT_IOC_DISABLE ? "DISABLE" :
		    req == PERF_EVENT_IOC_SET_OUTPUT ? "SET_OUTPUT" : "other");
	return real(fd, req, arg);
}

int
close(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (fd >= 0 && fd < MAXFD) {
		fake[fd] = 0;
		upr[fd] = 0;
		upage[fd] = NULL;
	}
	return real(fd);
}

int
rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);

	if (real == NULL)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT,
		    "rename");
	tlog("rename %s\n", to);
	return real(from, to);
}

ssize_t
read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	const char *w = getenv("FAKEPT_WATCH");
	char link[64], path[4096];
	ssize_t r, k;

	if (real == NULL)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT,
		    "read");
	r = real(fd, buf, n);
	if (w == NULL || *w == '\0' || r <= 0)
		return r;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, sizeof(path) - 1);
	if (k > 0) {
		path[k] = '\0';
		if (strstr(path, w) != NULL)
			tlog("read %zd %s\n", r, path);
	}
	return r;
}
