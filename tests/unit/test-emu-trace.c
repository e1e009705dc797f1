/* SPDX-License-Identifier: MIT */
/*
 * The software PT backend end to end without the capture framework: the
 * small programs of tests/data/emu are compiled into a temporary
 * directory, run under the tracer from main (--start-at), and each
 * thread's packets are decoded with libipt's block decoder against the
 * process's file mappings.  The decoded call/return sequence must equal
 * the ground truth the tracer wrote, with zero decode errors.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <intel-pt.h>

#include "../../mt-capture/emu-trace.h"
#include "err.h"
#include "tap.h"

#define MAXT 8
#define TSC0 1000000ull

struct tbuf {
	pid_t tid;
	uint8_t *p;		/* packets */
	size_t len, cap;
};

struct run {
	pid_t pid;
	struct tbuf t[MAXT];
	size_t nt;
	char *maps;		/* last /proc/PID/maps read */
	unsigned polls;
	int exited;
	int status;		/* waitpid status of the process */
};

static char tmpdir[] = "/tmp/mt-emu-test.XXXXXX";

static int
sink(void *ctx, const uint8_t *p, size_t n)
{
	struct tbuf *b = ctx;

	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2;
		uint8_t *q = realloc(b->p, cap);

		if (q == NULL)
			return -MT_E_NOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static int
h_thread_new(void *ctx, pid_t pid, pid_t tid, mt_emu_pt_sink_fn *s,
    void **sctx)
{
	struct run *r = ctx;

	(void)pid;
	if (r->nt == MAXT)
		return 0;
	r->t[r->nt].tid = tid;
	*s = sink;
	*sctx = &r->t[r->nt++];
	return 0;
}

static int
h_proc_exit(void *ctx, pid_t pid, int status)
{
	struct run *r = ctx;

	(void)pid;
	r->status = status;
	r->exited = 1;
	return 1;
}

static void
read_maps(struct run *r)
{
	char path[64], *buf;
	size_t len = 0, cap = 1 << 16;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)r->pid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	buf = malloc(cap);
	if (buf != NULL) {
		len = fread(buf, 1, cap - 1, f);
		buf[len] = '\0';
		/* A process that is exiting has no mappings left. */
		if (len == 0) {
			free(buf);
		} else {
			free(r->maps);
			r->maps = buf;
		}
	}
	fclose(f);
}

/* Keep a recent copy of the maps: the process is gone at the end. */
static int
h_poll(void *ctx, int timeout_ms)
{
	struct run *r = ctx;

	if (r->polls++ % 256 == 0)
		read_maps(r);
	if (timeout_ms > 0)
		usleep((useconds_t)timeout_ms * 1000);
	return 0;
}

/* Compile tests/data/emu/@src into the temporary directory. */
static int
build(const char *src, char *out, size_t outsz)
{
	const char *root = getenv("MT_ROOT");
	char cmd[1024];
	int cxx = strstr(src, ".cpp") != NULL;

	snprintf(out, outsz, "%s/%s.bin", tmpdir, src);
	snprintf(cmd, sizeof(cmd), "%s -O2 -g -o %s %s/tests/data/emu/%s "
	    "-lpthread", cxx ? "g++" : "gcc", out, root ? root : ".", src);
	return system(cmd);
}

/* Run @prog under the tracer from main; fills @r and the ground truth. */
static uint64_t config = MT_EMU_DEFAULT_CONFIG;

static int
trace_prog(const char *prog, struct run *r, const char *gtpath,
    struct mt_emu_trace_stats *st)
{
	struct mt_emu_trace_opts o;
	struct mt_emu_hooks h;
	struct mt_emu_trace *t;
	int gate[2], rc;
	char msg[256] = "", c = 'x';
	FILE *gt;

	memset(r, 0, sizeof(*r));
	memset(&o, 0, sizeof(o));
	memset(&h, 0, sizeof(h));
	gt = fopen(gtpath, "w");
	if (gt == NULL || pipe(gate) != 0)
		return -1;
	r->pid = fork();
	if (r->pid == 0) {
		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(126);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(gate[0]);
	o.config = config;
	o.start_at = "main";
	o.ground_truth = gt;
	o.poll_every = 1;
	o.tsc0 = TSC0;
	h.ctx = r;
	h.thread_new = h_thread_new;
	h.proc_exit = h_proc_exit;
	h.poll = h_poll;
	t = mt_emu_trace_new(&o, &h);
	rc = t != NULL ? mt_emu_trace_seize(t, r->pid, 1) : -1;
	if (write(gate[1], &c, 1) != 1)
		rc = -1;
	close(gate[1]);
	if (rc == 0)
		rc = mt_emu_trace_run(t, msg, sizeof(msg));
	if (rc != MT_EMU_EV_EXIT)
		printf("# run: %d %s\n", rc, msg);
	*st = *mt_emu_trace_stats(t);
	mt_emu_trace_detach(t);
	mt_emu_trace_free(t);
	fclose(gt);
	while (waitpid(r->pid, NULL, __WALL) > 0)
		;
	return rc == MT_EMU_EV_EXIT ? 0 : -1;
}

/* Add every executable file mapping of the maps text to @img. */
static void
add_maps(struct pt_image *img, const char *maps)
{
	const char *line = maps;
	unsigned long long lo, hi, off;
	char perms[8], path[4096];

	while (line != NULL && *line != '\0') {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi,
		    perms, &off, path) >= 4 && perms[2] == 'x' &&
		    path[0] == '/')
			pt_image_add_file(img, path, off, hi - lo, NULL, lo);
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
}

struct seq {
	char (*e)[48];		/* "call 0x.. 0x.." lines */
	size_t n, cap;
};

static void
seq_add(struct seq *s, const char *kind, uint64_t from, uint64_t to)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->e = realloc(s->e, s->cap * sizeof(*s->e));
		if (s->e == NULL)
			abort();
	}
	snprintf(s->e[s->n++], sizeof(s->e[0]), "%s %llx %llx", kind,
	    (unsigned long long)from, (unsigned long long)to);
}

/* Decode one thread's packets: calls and returns, and the error count. */
static int
decode(const struct tbuf *b, const char *maps, struct seq *out,
    uint64_t *tsc_end)
{
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	struct pt_image *img;
	struct pt_block blk;
	struct pt_event ev;
	int st, errors = 0, pending = 0;
	uint64_t pfrom = 0;
	const char *pkind = NULL;

	pt_config_init(&cfg);
	cfg.begin = b->p;
	cfg.end = b->p + b->len;
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = 6;
	cfg.cpu.model = 0x55;
	cfg.mtc_freq = (uint8_t)((config >> 14) & 0xf);
	cfg.nom_freq = MT_EMU_NOM_FREQ;
	cfg.cpuid_0x15_eax = MT_EMU_CPUID15_EAX;
	cfg.cpuid_0x15_ebx = MT_EMU_CPUID15_EBX;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	dec = pt_blk_alloc_decoder(&cfg);
	if (dec == NULL)
		return -1;
	img = pt_blk_get_image(dec);
	add_maps(img, maps);
	for (;;) {
		st = pt_blk_sync_forward(dec);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				st = pt_blk_event(dec, &ev, sizeof(ev));
				if (st < 0)
					break;
				/* A transfer into an instruction that was
				 * interrupted before it ran (int3 as the
				 * first instruction of the callee). */
				if (ev.type == ptev_async_disabled && pending)
					seq_add(out, pkind, pfrom,
					    ev.variant.async_disabled.at);
				if (ev.type == ptev_disabled ||
				    ev.type == ptev_async_disabled)
					pending = 0;
			}
			if (st < 0 || (st & pts_eos))
				break;
			memset(&blk, 0, sizeof(blk));
			st = pt_blk_next(dec, &blk, sizeof(blk));
			if (blk.ninsn > 0) {
				if (pending)
					seq_add(out, pkind, pfrom, blk.ip);
				pending = 0;
				if (blk.iclass == ptic_call ||
				    blk.iclass == ptic_return) {
					pending = 1;
					pfrom = blk.end_ip;
					pkind = blk.iclass == ptic_call ?
					    "call" : "ret";
				}
			}
			if (st < 0)
				break;
		}
		{
			uint32_t lm, lc;
			uint64_t tsc;

			if (pt_blk_time(dec, &tsc, &lm, &lc) >= 0 &&
			    tsc > *tsc_end)
				*tsc_end = tsc;
		}
		if (st < 0 && st != -pte_eos) {
			uint64_t off = 0;

			pt_blk_get_offset(dec, &off);
			printf("# decode error at %llu: %s\n",
			    (unsigned long long)off, pt_errstr(pt_errcode(st)));
			errors++;
		} else {
			break;
		}
	}
	pt_blk_free_decoder(dec);
	return errors;
}

static void
ground_truth(const char *path, pid_t tid, struct seq *out)
{
	char line[256], kind[32];
	unsigned long long from, to;
	int t;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%d %31s %llx %llx", &t, kind, &from, &to) != 4
		    || t != tid)
			continue;
		if (strcmp(kind, "call") == 0 || strcmp(kind, "icall") == 0)
			seq_add(out, "call", from, to);
		else if (strcmp(kind, "ret") == 0)
			seq_add(out, "ret", from, to);
	}
	fclose(f);
}

/* Trace @src, decode every thread, compare with the ground truth. */
static void
check_prog(const char *src, size_t want_threads, uint64_t want_signals)
{
	struct mt_emu_trace_stats st;
	char bin[512], gtpath[512];
	struct run r;
	size_t i, j;

	memset(&st, 0, sizeof(st));
	CHECK(build(src, bin, sizeof(bin)) == 0);
	snprintf(gtpath, sizeof(gtpath), "%s/%s.gt", tmpdir, src);
	CHECK(trace_prog(bin, &r, gtpath, &st) == 0);
	CHECK(r.maps != NULL);
	/* The program behaves as it does natively. */
	{
		int native = system(bin);

		CHECK(r.exited && WIFEXITED(r.status) && WIFEXITED(native));
		CHECK_EQ_U64(WEXITSTATUS(r.status), WEXITSTATUS(native));
	}
	CHECK_EQ_U64(r.nt, want_threads);
	CHECK_EQ_U64(st.threads, want_threads);
	if (want_signals != UINT64_MAX)
		CHECK_EQ_U64(st.signals, want_signals);
	CHECK_EQ_U64(st.odd, 0);
	printf("# %s: %llu insns, %llu steps in %.2f s (%.0f steps/s)\n",
	    src, (unsigned long long)st.insns, (unsigned long long)st.steps,
	    st.seconds, st.seconds > 0 ? st.steps / st.seconds : 0.0);
	for (i = 0; i < r.nt && r.maps != NULL; i++) {
		struct seq dec = { 0 }, want = { 0 };
		int errors;

		uint64_t tsc_end = 0;

		errors = decode(&r.t[i], r.maps, &dec, &tsc_end);
		/* The virtual clock: one tick per instruction from tsc0. */
		printf("# thread %d: last time %llu\n", (int)r.t[i].tid,
		    (unsigned long long)tsc_end);
		CHECK(tsc_end > TSC0 || st.insns < 800);	/* one MTC period */
		CHECK(tsc_end <= TSC0 + st.insns + 1000);
		/* With CYC the time is exact to the last packet. */
		if (config & 2)
			CHECK(tsc_end + 200 >= TSC0 + st.insns);
		ground_truth(gtpath, r.t[i].tid, &want);
		CHECK_EQ_U64(errors, 0);
		CHECK(want.n > 0);
		CHECK_EQ_U64(dec.n, want.n);
		for (j = 0; j < dec.n && j < want.n; j++) {
			if (strcmp(dec.e[j], want.e[j]) != 0) {
				printf("# thread %d entry %zu: decoded '%s', "
				    "ran '%s'\n", (int)r.t[i].tid, j, dec.e[j],
				    want.e[j]);
				CHECK(0);
				break;
			}
		}
		free(dec.e);
		free(want.e);
		free(r.t[i].p);
	}
	free(r.maps);
}

static void emu_recurse(void) { check_prog("recurse.c", 1, 0); }
static void emu_fnptr(void) { check_prog("fnptr.c", 1, 0); }
static void emu_switch(void) { check_prog("switch.c", 1, 0); }
static void emu_longjmp(void) { check_prog("longjmp.c", 1, 0); }
static void emu_signal(void) { check_prog("signal.c", 1, 2); }
/* The program's own int3: its SIGTRAP reaches its handler. */
static void emu_trap(void) { check_prog("trap.c", 1, 1); }
static void emu_threads(void) { check_prog("threads.c", 2, 0); }
static void
emu_timing_cyc(void)
{
	/* --timing normal: cyc, cyc_thresh 1, mtc_period 0, tsc, psb 3 */
	config = (1ull << 13) | (1ull << 10) | (1ull << 9) | (1ull << 1) |
	    (1ull << 19) | (3ull << 24);
	check_prog("fnptr.c", 1, 0);
	config = MT_EMU_DEFAULT_CONFIG;
}

static void
emu_noretcomp(void)
{
	config = MT_EMU_DEFAULT_CONFIG | (1ull << 11);
	check_prog("recurse.c", 1, 0);
	config = MT_EMU_DEFAULT_CONFIG;
}

static void emu_except(void) { check_prog("except.cpp", 1, 0); }

int
main(void)
{
	char cmd[600];
	int rc;

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	TEST(emu_recurse);
	TEST(emu_fnptr);
	TEST(emu_switch);
	TEST(emu_longjmp);
	TEST(emu_signal);
	TEST(emu_trap);
	TEST(emu_threads);
	TEST(emu_except);
	TEST(emu_timing_cyc);
	TEST(emu_noretcomp);
	rc = tap_done();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (getenv("MT_KEEP") == NULL && system(cmd) != 0)
		rc = 1;
	return rc;
}
