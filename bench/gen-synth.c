/* SPDX-License-Identifier: MIT */
/*
 * gen-synth: the synthetic workloads of `make bench` (bench/run).  It
 * generates a program (a few hundred functions with loops, conditional
 * branches, guarded direct calls, recursion and indirect calls), and then
 * Intel PT traces of several threads running it, written packet by packet
 * with libipt's encoder (pt_enc_next) following what the hardware emits
 * (Intel SDM Vol. 3C, "Intel Processor Trace"; perf's
 * Documentation/perf-intel-pt.txt): one TNT bit per conditional branch,
 * nothing for direct calls, TIP for indirect calls, a taken TNT bit for a return whose
 * call is on the 64-entry compression stack and was made since the last
 * PSB, else TIP (see RETSTACK); PSB+ (PSB, TSC, MODE.Exec, FUP current IP, PSBEND) about
 * every PSB_PERIOD bytes, with the compression stack cleared; a CYC packet
 * after every TNT packet (cyc=1, as magic-trace's default timing).
 *
 *   gen-synth asm [-k] [-S seed] -o prog.s
 *       the program as assembler source (.byte lines under one symbol per
 *       function); link it with
 *       cc -nostdlib -static -no-pie -Wl,--build-id -Wl,-Ttext=0x401000
 *   gen-synth snap [-CkM] [-S seed] [-T n] [-t threads] -m MIB -e prog
 *       -o out.snap
 *       a snapshot (docs/formats/snapshot.md) of MIB MiB of PT in all,
 *       one AUX buffer per thread, with prog bundled by build-id; -C
 *       leaves out the CYC packets (times then come from PSB+ TSCs only);
 *       -T n adds a TSC packet after every n-th TNT packet (TSC packets
 *       outside PSB+, as the hardware writes after a frequency change or
 *       a deep C-state: times that change between two branches with TSC
 *       only); -M adds MTC packets (every 2^3 crystal clocks, TSC:CTC
 *       84:1, a TMA in each PSB+) after the TNT packets;
 *       -r DIR also writes DIR/t<N>.pt (thread N's raw PT) and DIR/addr,
 *       DIR/dump (the program's pages) for bench/ipt-loop
 *   -k (with asm and snap): user and kernel.  Some indirect-call sites
 *       of the program are `syscall`s instead, and the trace follows
 *       them into a generated kernel image at KTEXT (0xffffffff81000000)
 *       the way the hardware does with user and kernel traced: TIP to
 *       entry_SYSCALL_64, whose `call *%rax` (TIP) enters one of 256
 *       kernel functions made like the program's, their return (TIP),
 *       then `sysretq` (TIP back after the syscall).  The snapshot
 *       bundles the image as mt-capture bundles kernel text (a BLOB of
 *       kind kernel text named "[kernel.kallsyms]") with a kallsyms TEXT
 *       chunk naming its functions; -r also writes its pages to
 *       DIR/addr, DIR/dump and the symbols to DIR/kallsyms.  asm -k
 *       writes the program that goes with it (a different program: the
 *       sites that became syscalls).
 *
 * The same seed gives the same program and the same traces.  The program
 * is never run: the generator walks its control flow itself, choosing each
 * branch with a PRNG, so it knows exactly which packets the hardware would
 * write.  Links common/snap.c (libmtcommon.a) to write the snapshot.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "snap.h"

#define TEXT		0x401000ull	/* -Ttext of the linked program */
#define KTEXT		0xffffffff81000000ull	/* -k: the kernel image */
#define KENTRY		(KTEXT + 16)	/* entry_SYSCALL_64 */
#define KFUNCS		(KTEXT + 32)	/* the kernel's functions */
#define NFUNC		256
#define MAXOPS		24
#define MAXDEPTH	48
/*
 * Return compression: the hardware's stack holds 64 entries; 0 means
 * noretcomp (every return is a TIP), the default here because perf 6.1's
 * decoder disagrees with libipt on some compressed returns of these traces
 * ("Trace doesn't match instruction") and both decoders must see the same
 * trace for the comparison to be fair.  Build with -DRETSTACK=64 for
 * compressed returns (libipt decodes them with no error).
 */
#ifndef RETSTACK
#define RETSTACK	0
#endif
#define PSB_PERIOD	16384		/* bytes between PSB+ (psb_period=3) */
#define PID		4242

enum op_kind { OP_COND, OP_CALL, OP_ICALL, OP_SYSCALL };

struct op {
	uint8_t kind;
	uint16_t target;	/* OP_CALL callee */
	uint32_t off;		/* offset of the op in its function */
};

struct func {
	uint64_t addr;
	uint32_t size;
	int nops;
	struct op ops[MAXOPS];
	uint32_t loop_off;	/* test + jnz back to the entry */
	uint32_t ret_off;	/* ret */
	uint8_t loop_pct;	/* chance in % to loop again */
};

/* Op sizes in bytes: test eax,eax then jcc/call. */
#define SZ_COND		6	/* 85 c0 75 02 90 90 */
#define SZ_CALL		9	/* 85 c0 74 05 e8 rel32 */
#define SZ_ICALL	6	/* 85 c0 74 02 ff d0 */
#define SZ_SYSCALL	6	/* 85 c0 74 02 0f 05 */
#define SZ_LOOP		8	/* 85 c0 0f 85 rel32 */
#define SZ_MAIN		7	/* e8 rel32 (call f0); eb f9 (jmp main) */

static struct func ufn[NFUNC];	/* the program's functions */
static struct func kfn[NFUNC];	/* -k: the kernel's */
static struct func *fn = ufn;	/* the table the trace is in */
static int with_cyc = 1;	/* -C: no CYC packets (TSC only) */
static int tsc_every;		/* -T: a TSC after every n-th TNT packet */
static int with_mtc;		/* -M: MTC packets, TMA in PSB+ */
#define MTC_FREQ	3	/* -M: MTC every 2^3 crystal clocks */
#define CTC_RATIO	84	/* -M: TSC cycles per crystal clock */
static int with_kernel;		/* -k: syscalls into a kernel image */

static void code(const struct func *tab, int i, uint8_t *b);
static const char *raw_dir;	/* -r: also raw files for bench/ipt-loop */

/* Write @len bytes of @p to @dir/@name; returns 0 or -1. */
static int
put_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4200];
	FILE *fp;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp == NULL)
		return -1;
	rc = fwrite(p, 1, len, fp) == len ? 0 : -1;
	return fclose(fp) == 0 ? rc : -1;
}

/*
 * The raw form ipt-loop reads (kAFL/Nyx page dumps): "addr" holds the
 * little-endian u64 address of each 4 KiB page of the program as mapped
 * (file offset N at 0x400000 + N), then of the kernel image's (-k: @klen
 * bytes at KTEXT), "dump" the pages.
 */
static int
put_pages(const char *dir, const uint8_t *elf, size_t elen,
    const uint8_t *kimg, size_t klen)
{
	size_t np = (elen + 4095) / 4096, nk = (klen + 4095) / 4096, i, k;
	uint8_t *addr = calloc(np + nk, 8), *dump = calloc(np + nk, 4096);
	int rc = -1;

	if (addr != NULL && dump != NULL) {
		memcpy(dump, elf, elen);
		if (klen > 0)
			memcpy(dump + 4096 * np, kimg, klen);
		for (i = 0; i < np + nk; i++)
			for (k = 0; k < 8; k++)
				addr[8 * i + k] = (uint8_t)((i < np ?
				    TEXT - 0x1000 + 4096 * i :
				    KTEXT + 4096 * (i - np)) >> (8 * k));
		rc = put_file(dir, "addr", addr, 8 * (np + nk));
		if (rc == 0)
			rc = put_file(dir, "dump", dump, 4096 * (np + nk));
	}
	free(addr);
	free(dump);
	return rc;
}

/*
 * -k: the kernel image (int3 between functions; entry_SYSCALL_64 is
 * `call *%rax; sysretq`) into *@img, its kallsyms (`_text`, the entry, a
 * `kN` per function) into *@syms; returns the image's length or 0.
 */
static size_t
kernel_image(uint8_t **img, char **syms, size_t *slen)
{
	size_t len = (size_t)(kfn[NFUNC - 1].addr + kfn[NFUNC - 1].size -
	    KTEXT), cap = 64 + 40 * (NFUNC + 2), n;
	uint8_t *b = malloc(len);
	char *t = malloc(cap);
	int i;

	if (b == NULL || t == NULL) {
		free(b);
		free(t);
		return 0;
	}
	memset(b, 0xcc, len);
	memcpy(b + (KENTRY - KTEXT), "\xff\xd0\x48\x0f\x07", 5);
	n = (size_t)snprintf(t, cap, "%llx T _text\n%llx T entry_SYSCALL_64\n",
	    KTEXT, KENTRY);
	for (i = 0; i < NFUNC; i++) {
		code(kfn, i, b + (kfn[i].addr - KTEXT));
		n += (size_t)snprintf(t + n, cap - n, "%llx t k%d\n",
		    (unsigned long long)kfn[i].addr, i);
	}
	*img = b;
	*syms = t;
	*slen = n;
	return len;
}
static uint64_t main_addr;
static uint64_t rng_state;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned
pct(void)
{
	return (unsigned)(rnd() >> 33) % 100;
}

/*
 * The functions of one image from address @a on (the PRNG state goes
 * on from the caller's); @sys: indirect-call sites may be syscalls.
 */
static void
layout_funcs(struct func *tab, uint64_t a, int sys)
{
	int i, k;

	for (i = 0; i < NFUNC; i++) {
		struct func *f = &tab[i];
		uint32_t off = 0;

		f->addr = a;
		f->nops = 4 + (int)(rnd() % (MAXOPS - 4));
		f->loop_pct = (uint8_t)(60 + rnd() % 30);
		for (k = 0; k < f->nops; k++) {
			struct op *o = &f->ops[k];
			unsigned r = pct();

			o->off = off;
			if (r < 70) {
				o->kind = OP_COND;
				off += SZ_COND;
			} else if (r < 92) {
				o->kind = OP_CALL;
				/* mostly deeper, some recursion, some back */
				r = pct();
				if (r < 10)
					o->target = (uint16_t)i;
				else if (r < 80 && i + 1 < NFUNC)
					o->target = (uint16_t)(i + 1 +
					    rnd() % (uint64_t)(NFUNC - i - 1));
				else
					o->target = (uint16_t)(rnd() % NFUNC);
				off += SZ_CALL;
			} else {
				o->kind = sys && pct() < 50 ? OP_SYSCALL :
				    OP_ICALL;
				off += SZ_ICALL;
			}
		}
		f->loop_off = off;
		off += SZ_LOOP;
		f->ret_off = off;
		off += 1;
		f->size = off;
		a += off;
	}
}

/* The program (and with -k the kernel): function layout from the seed. */
static void
layout(uint64_t seed)
{
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	main_addr = TEXT;
	layout_funcs(ufn, TEXT + SZ_MAIN, with_kernel);
	if (with_kernel)
		layout_funcs(kfn, KFUNCS, 0);
}

static void
put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)u;
	p[1] = (uint8_t)(u >> 8);
	p[2] = (uint8_t)(u >> 16);
	p[3] = (uint8_t)(u >> 24);
}

/* Machine code of function @i of table @fn into @b (f->size bytes). */
static void
code(const struct func *tab, int i, uint8_t *b)
{
	const struct func *f = &tab[i];
	int k;

	for (k = 0; k < f->nops; k++) {
		const struct op *o = &f->ops[k];
		uint8_t *p = b + o->off;

		p[0] = 0x85;
		p[1] = 0xc0;
		switch (o->kind) {
		case OP_COND:
			memcpy(p + 2, "\x75\x02\x90\x90", 4);
			break;
		case OP_CALL:
			p[2] = 0x74;
			p[3] = 0x05;
			p[4] = 0xe8;
			put32(p + 5, (int32_t)(tab[o->target].addr -
			    (f->addr + o->off + SZ_CALL)));
			break;
		case OP_SYSCALL:
			memcpy(p + 2, "\x74\x02\x0f\x05", 4);
			break;
		default:
			memcpy(p + 2, "\x74\x02\xff\xd0", 4);
			break;
		}
	}
	b[f->loop_off] = 0x85;
	b[f->loop_off + 1] = 0xc0;
	b[f->loop_off + 2] = 0x0f;
	b[f->loop_off + 3] = 0x85;
	put32(b + f->loop_off + 4, -(int32_t)(f->loop_off + SZ_LOOP));
	b[f->ret_off] = 0xc3;
}

static int
write_asm(const char *path)
{
	FILE *fp = fopen(path, "w");
	uint8_t b[MAXOPS * SZ_CALL + SZ_LOOP + 1], m[SZ_MAIN];
	uint32_t j;
	int i;

	if (fp == NULL)
		return -1;
	fprintf(fp, "# generated by bench/gen-synth: do not edit\n"
	    "\t.text\n\t.globl _start\n\t.type _start, @function\n"
	    "_start:\nthread_main:\n");
	m[0] = 0xe8;
	put32(m + 1, (int32_t)(ufn[0].addr - (main_addr + 5)));
	m[5] = 0xeb;
	m[6] = 0xf9;
	fprintf(fp, "\t.byte ");
	for (j = 0; j < SZ_MAIN; j++)
		fprintf(fp, "%s0x%02x", j ? "," : "", m[j]);
	fprintf(fp, "\n\t.size _start, .-_start\n");
	for (i = 0; i < NFUNC; i++) {
		code(ufn, i, b);
		fprintf(fp, "\t.globl f%d\n\t.type f%d, @function\nf%d:\n",
		    i, i, i);
		for (j = 0; j < ufn[i].size; j++)
			fprintf(fp, "%s0x%02x", j % 16 ? "," : j ?
			    "\n\t.byte " : "\t.byte ", b[j]);
		fprintf(fp, "\n\t.size f%d, .-f%d\n", i, i);
	}
	return fclose(fp) == 0 ? 0 : -1;
}

/* ---- trace generation ---- */

struct gen {
	struct pt_encoder *enc;
	uint8_t *buf;
	uint64_t cap;		/* bytes to write */
	uint64_t last_psb;	/* offset of the last PSB */
	uint64_t tsc;		/* virtual clock: cycles */
	uint64_t cyc_last;	/* tsc at the last CYC */
	uint64_t ntntpk;	/* TNT packets written (-T) */
	uint64_t mtc_last;	/* -M: CTC >> MTC_FREQ at the last MTC */
	uint64_t tnt;		/* pending TNT bits, oldest highest */
	int ntnt;
	int comp;		/* returns compressible (<= RETSTACK) */
	int full;		/* the buffer is full: unwind */
	uint64_t ip;		/* next instruction (for PSB+ FUP) */
};

static uint64_t
enc_off(struct gen *g)
{
	uint64_t off = 0;

	pt_enc_get_offset(g->enc, &off);
	return off;
}

static void
emit(struct gen *g, struct pt_packet *p)
{
	if (g->full)
		return;
	/* Keep room for a TNT, a CYC and a PSB+ (about 40 bytes). */
	if (enc_off(g) + 64 > g->cap || pt_enc_next(g->enc, p) < 0)
		g->full = 1;
}

static void
flush_tnt(struct gen *g)
{
	struct pt_packet p;

	if (g->ntnt == 0)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)g->ntnt;
	p.payload.tnt.payload = g->tnt;
	emit(g, &p);
	g->ntnt = 0;
	g->tnt = 0;
	if (tsc_every > 0 && ++g->ntntpk % (uint64_t)tsc_every == 0) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = g->tsc;
		emit(g, &p);
	}
	if (with_mtc && g->tsc / CTC_RATIO >> MTC_FREQ != g->mtc_last) {
		g->mtc_last = g->tsc / CTC_RATIO >> MTC_FREQ;
		memset(&p, 0, sizeof(p));
		p.type = ppt_mtc;
		p.payload.mtc.ctc = (uint8_t)g->mtc_last;
		emit(g, &p);
	}
	if (!with_cyc)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = g->tsc - g->cyc_last;
	g->cyc_last = g->tsc;
	emit(g, &p);
}

static void
psb_plus(struct gen *g)
{
	struct pt_packet p;

	flush_tnt(g);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	emit(g, &p);
	g->last_psb = enc_off(g) - 16;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = g->tsc;
	emit(g, &p);
	if (with_mtc) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tma;
		p.payload.tma.ctc = (uint16_t)(g->tsc / CTC_RATIO);
		p.payload.tma.fc = (uint16_t)(g->tsc % CTC_RATIO);
		emit(g, &p);
		g->mtc_last = g->tsc / CTC_RATIO >> MTC_FREQ;
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	emit(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_fup;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = g->ip;
	emit(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	emit(g, &p);
	g->comp = 0;	/* no compressed return across a PSB */
}

/* After each branch: a PSB+ when the period is over. */
static void
maybe_psb(struct gen *g)
{
	if (enc_off(g) - g->last_psb >= PSB_PERIOD)
		psb_plus(g);
}

static void
bit(struct gen *g, int taken, uint64_t next, unsigned cycles)
{
	g->tsc += cycles;
	g->tnt = g->tnt << 1 | (uint64_t)(taken != 0);
	g->ntnt++;
	g->ip = next;
	if (g->ntnt == 6)
		flush_tnt(g);
	maybe_psb(g);
}

static void
tip(struct gen *g, uint64_t to)
{
	struct pt_packet p;

	flush_tnt(g);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = to;
	emit(g, &p);
	g->ip = to;
	maybe_psb(g);
}

/* Want a call at @depth?  Deep trees, bounded. */
static int
want_call(int depth)
{
	if (depth >= MAXDEPTH)
		return 0;
	return pct() < (depth < 8 ? 85u : depth < 24 ? 55u : 35u);
}

static void run(struct gen *g, int i, int depth);
static void do_syscall(struct gen *g, uint64_t ret, int depth);

/* A call to @callee whose return address is @ret. */
static void
do_call(struct gen *g, int callee, uint64_t ret, int depth)
{
	if (g->comp < RETSTACK)
		g->comp++;
	run(g, callee, depth + 1);
	if (g->full)
		return;
	if (g->comp > 0) {
		g->comp--;
		bit(g, 1, ret, 2);
	} else {
		tip(g, ret);
	}
}

/*
 * A syscall whose next instruction is @ret, user and kernel traced: far
 * branches are TIPs (SDM 3C, "Intel PT: Packet Generation": SYSCALL and
 * SYSRET are far transfers, and with both privilege levels traced no
 * TIP.PGD/PGE is made).  entry_SYSCALL_64's `call *%rax` to a kernel
 * function, its return, `sysretq`.
 */
static void
do_syscall(struct gen *g, uint64_t ret, int depth)
{
	int c = (int)(rnd() % NFUNC);

	tip(g, KENTRY);
	tip(g, kfn[c].addr);
	if (g->comp < RETSTACK)
		g->comp++;
	fn = kfn;
	/* a short call tree: a syscall is a small part of a thread's time */
	run(g, c, depth + 1 > MAXDEPTH - 2 ? depth + 1 : MAXDEPTH - 2);
	fn = ufn;
	if (g->full)
		return;
	if (g->comp > 0) {
		g->comp--;
		bit(g, 1, KENTRY + 2, 2);
	} else {
		tip(g, KENTRY + 2);
	}
	tip(g, ret);
}

static void
run(struct gen *g, int i, int depth)
{
	const struct func *f = &fn[i];
	int k, c;

	do {
		for (k = 0; k < f->nops && !g->full; k++) {
			const struct op *o = &f->ops[k];
			uint64_t at = f->addr + o->off;

			switch (o->kind) {
			case OP_COND:
				c = pct() < 50;
				bit(g, c, at + (c ? SZ_COND : 4), 3);
				break;
			case OP_CALL:
				if (!want_call(depth)) {
					bit(g, 1, at + SZ_CALL, 3);
					break;
				}
				bit(g, 0, at + 4, 3);
				do_call(g, o->target, at + SZ_CALL, depth);
				break;
			case OP_SYSCALL:
				if (!want_call(depth)) {
					bit(g, 1, at + SZ_SYSCALL, 3);
					break;
				}
				bit(g, 0, at + 4, 3);
				do_syscall(g, at + SZ_SYSCALL, depth);
				break;
			default:
				if (!want_call(depth)) {
					bit(g, 1, at + SZ_ICALL, 3);
					break;
				}
				bit(g, 0, at + 4, 3);
				c = (int)(rnd() % NFUNC);
				tip(g, fn[c].addr);
				if (g->comp < RETSTACK)
					g->comp++;
				run(g, c, depth + 1);
				if (g->full)
					break;
				if (g->comp > 0) {
					g->comp--;
					bit(g, 1, at + SZ_ICALL, 2);
				} else {
					tip(g, at + SZ_ICALL);
				}
				break;
			}
		}
		if (g->full)
			return;
		c = pct() < f->loop_pct;
		bit(g, c, c ? f->addr : f->addr + f->ret_off, 3);
	} while (c && !g->full);
}

/* One thread's trace of about @len bytes into @buf; returns bytes. */
static uint64_t
gen_thread(uint8_t *buf, uint64_t len, uint64_t seed)
{
	struct pt_config cfg;
	struct gen g;
	uint64_t n;

	memset(&g, 0, sizeof(g));
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	g.enc = pt_alloc_encoder(&cfg);
	if (g.enc == NULL)
		return 0;
	g.buf = buf;
	g.cap = len;
	g.tsc = 1000000 + seed * 1000;
	g.ip = main_addr;
	rng_state = seed * 0xbf58476d1ce4e5b9ull + 7;
	psb_plus(&g);
	while (!g.full) {
		/* thread_main: call f0 (direct), then jmp back */
		if (g.comp < RETSTACK)
			g.comp++;
		run(&g, 0, 1);
		if (g.full)
			break;
		if (g.comp > 0) {
			g.comp--;
			bit(&g, 1, main_addr + 5, 2);
		} else {
			tip(&g, main_addr + 5);
		}
	}
	g.full = 0;
	flush_tnt(&g);
	n = enc_off(&g);
	pt_free_encoder(g.enc);
	return n;
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb) < 0)
		return NULL;
	p = malloc((size_t)sb.st_size + 1);
	if (p == NULL || read(fd, p, (size_t)sb.st_size) != sb.st_size) {
		free(p);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)sb.st_size;
	return p;
}

/* The GNU build-id note of ELF @e; returns its length or 0. */
static size_t
build_id(const uint8_t *e, size_t len, uint8_t *out)
{
	const Elf64_Ehdr *h = (const void *)e;
	size_t i;

	if (len < sizeof(*h) || memcmp(e, ELFMAG, SELFMAG) != 0 ||
	    h->e_shoff + (uint64_t)h->e_shnum * sizeof(Elf64_Shdr) > len)
		return 0;
	for (i = 0; i < h->e_shnum; i++) {
		const Elf64_Shdr *s = (const void *)(e + h->e_shoff +
		    i * sizeof(Elf64_Shdr));
		const Elf64_Nhdr *n = (const void *)(e + s->sh_offset);

		if (s->sh_type != SHT_NOTE || s->sh_offset + 16 > len)
			continue;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    n->n_descsz <= MT_SNAP_BUILD_ID_MAX &&
		    s->sh_offset + 16 + n->n_descsz <= len) {
			memcpy(out, e + s->sh_offset + 16, n->n_descsz);
			return n->n_descsz;
		}
	}
	return 0;
}

static int
write_snap(const char *out, const char *prog, uint64_t mib, int nthr,
    uint64_t seed)
{
	struct mt_snap s;
	struct mt_snap_host h;
	struct mt_snap_ptcfg pc;
	struct mt_snap_timeconv tc;
	struct mt_snap_process pr;
	struct mt_snap_mmap mm;
	struct mt_snap_elf el;
	char path[4096], tmp[4200], *ksyms = NULL;
	size_t elen, i, klen = 0, kslen = 0;
	uint8_t *kimg = NULL;
	uint8_t *elf = slurp(prog, &elen);
	uint64_t per = (mib << 20) / (uint64_t)nthr;
	int fd, rc = 0;

	if (elf == NULL || realpath(prog, path) == NULL) {
		fprintf(stderr, "gen-synth: cannot read '%s'\n", prog);
		return 1;
	}
	mt_snap_init(&s);
	memset(&h, 0, sizeof(h));
	memcpy(h.vendor, "GenuineIntel", 12);
	h.family = 6;
	h.model = 85;
	h.stepping = 4;
	h.max_nonturbo_ratio = 24;
	if (with_mtc) {
		h.cpuid_15[0] = 1;	/* TSC:CTC = CTC_RATIO */
		h.cpuid_15[1] = CTC_RATIO;
	}
	h.nr_cpus = 2;
	rc |= mt_snap_set_host(&s, &h);
	memset(&pc, 0, sizeof(pc));
	pc.backend = MT_SNAP_BK_RAW;
	pc.config = MT_PT_CFG_BRANCH | MT_PT_CFG_TSC |
	    (with_cyc ? MT_PT_CFG_CYC : 0) |
	    (with_mtc ? MT_PT_CFG_MTC | (uint64_t)MTC_FREQ << 14 : 0) |
	    (3ull << 24) | (RETSTACK == 0 ? MT_PT_CFG_NORETCOMP : 0);
	pc.user = 1;
	s.ptcfg = pc;
	s.has_ptcfg = 1;
	memset(&tc, 0, sizeof(tc));
	tc.time_zero = 1000000000ull;
	tc.time_mult = 1u << 9;		/* 0.5 ns per cycle: 2 GHz */
	tc.time_shift = 10;
	tc.cap_user_time_zero = 1;
	tc.time_mask = ~0ull;
	s.timeconv = tc;
	s.has_timeconv = 1;
	memset(&pr, 0, sizeof(pr));
	pr.pid = PID;
	pr.comm = (char *)"synth";
	pr.exe = path;
	pr.cmdline = path;
	pr.cmdline_len = (uint32_t)strlen(path) + 1;
	rc |= mt_snap_add_process(&s, &pr);
	memset(&mm, 0, sizeof(mm));
	mm.pid = PID;
	mm.start = TEXT - 0x1000;
	mm.end = mm.start + ((elen + 0xfff) & ~(size_t)0xfff);
	mm.prot = 5;
	mm.flags = 2;
	mm.build_id_len = (uint8_t)build_id(elf, elen, mm.build_id);
	mm.path = path;
	rc |= mt_snap_add_mmap(&s, &mm);
	memset(&el, 0, sizeof(el));
	el.build_id_len = mm.build_id_len;
	memcpy(el.build_id, mm.build_id, sizeof(el.build_id));
	el.path = path;
	el.len = elen;
	el.data = elf;
	rc |= mt_snap_add_elf(&s, &el);
	if (with_kernel) {
		struct mt_snap_blob kb;
		struct mt_snap_text kt;

		klen = kernel_image(&kimg, &ksyms, &kslen);
		if (klen == 0)
			return 1;
		s.ptcfg.kernel = 1;
		memset(&kb, 0, sizeof(kb));
		kb.kind = MT_SNAP_BLOB_KERNEL;
		kb.addr = KTEXT;
		kb.name = (char *)"[kernel.kallsyms]";
		kb.len = klen;
		kb.data = kimg;
		rc |= mt_snap_add_blob(&s, &kb);
		memset(&kt, 0, sizeof(kt));
		kt.kind = MT_SNAP_TEXT_KALLSYMS;
		kt.len = kslen;
		kt.data = ksyms;
		rc |= mt_snap_add_text(&s, &kt);
		if (raw_dir != NULL &&
		    put_file(raw_dir, "kallsyms", ksyms, kslen) < 0)
			rc = 1;
	}
	if (raw_dir != NULL && put_pages(raw_dir, elf, elen, kimg, klen) < 0)
		rc = 1;
	if (mm.build_id_len == 0) {
		fprintf(stderr, "gen-synth: '%s' has no build-id\n", prog);
		return 1;
	}
	for (i = 0; i < (size_t)nthr && rc == 0; i++) {
		struct mt_snap_thread t = { PID, PID + (uint32_t)i,
		    (char *)"synth" };
		struct mt_snap_aux a;
		uint8_t *buf = malloc(per);

		if (buf == NULL)
			return 1;
		memset(&a, 0, sizeof(a));
		a.tid = t.tid;
		a.cpu = MT_SNAP_NONE;
		a.len = gen_thread(buf, per, seed * 131 + i);
		a.ring_size = per;
		a.head = a.len;
		a.data = buf;
		if (raw_dir != NULL) {
			char name[32];

			snprintf(name, sizeof(name), "t%zu.pt", i);
			if (put_file(raw_dir, name, buf, a.len) < 0)
				rc = 1;
		}
		rc |= mt_snap_add_thread(&s, &t);
		rc |= mt_snap_add_aux(&s, &a);
		free(buf);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (rc != 0 || fd < 0 || mt_snap_write_fd(&s, fd) < 0 ||
	    close(fd) < 0 || rename(tmp, out) < 0) {
		fprintf(stderr, "gen-synth: cannot write '%s': %s\n", out,
		    strerror(errno));
		unlink(tmp);
		rc = 1;
	}
	free(elf);
	free(kimg);
	free(ksyms);
	mt_snap_release(&s);
	return rc ? 1 : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: gen-synth asm [-k] [-S seed] -o prog.s\n"
	    "       gen-synth snap [-CkM] [-r dir] [-S seed] [-T n] "
	    "[-t threads] "
	    "-m MIB -e prog "
	    "-o out.snap\n");
}

int
main(int argc, char **argv)
{
	const char *out = NULL, *prog = NULL;
	uint64_t seed = 1, mib = 4;
	int nthr = 4, c;

	if (argc < 2) {
		usage();
		return 2;
	}
	optind = 2;
	while ((c = getopt(argc, argv, "CkMS:T:t:m:e:o:r:")) != -1) {
		switch (c) {
		case 'C': with_cyc = 0; break;
		case 'M': with_mtc = 1; break;
		case 'T': tsc_every = atoi(optarg); break;
		case 'k': with_kernel = 1; break;
		case 'r': raw_dir = optarg; break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 't': nthr = atoi(optarg); break;
		case 'm': mib = strtoull(optarg, NULL, 0); break;
		case 'e': prog = optarg; break;
		case 'o': out = optarg; break;
		default: usage(); return 2;
		}
	}
	if (out == NULL || nthr < 1 || nthr > 64 || mib == 0) {
		usage();
		return 2;
	}
	layout(seed);
	if (strcmp(argv[1], "asm") == 0) {
		if (write_asm(out) < 0) {
			fprintf(stderr, "gen-synth: cannot write '%s'\n", out);
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[1], "snap") == 0 && prog != NULL)
		return write_snap(out, prog, mib, nthr, seed);
	usage();
	return 2;
}
