/* SPDX-License-Identifier: MIT */
/*
 * Test target of tests/mt-decode-epochs.bats: JIT code replaced at the
 * same address.  It writes function A into an anonymous RWX page and
 * calls it, then writes function B over it (other instruction
 * boundaries, another callee, no loop) and calls that, and so on for a
 * few rounds, A and B taking turns.  A calls cb_a three times in a loop;
 * B calls cb_b twice.  It counts the calls itself and prints them with
 * the addresses: a decoder that takes B's bytes for A's (or A's for B's)
 * decodes other calls, or fails.
 *
 * Usage: jitswap [-t] [-s] [N M ...]: call A N times, then B M times, ...
 * (up to 64 rounds; default 5 4 3 2).  With -t a second thread makes the
 * same calls in each round, at the same time as the first; the first
 * writes the code between rounds while the second waits.  With -s each
 * round sleeps 20 ms after its first call: a system call whose real time
 * the ptrace backend's clock jumps over (docs/emulate.md), with the same
 * code run right after it and replaced soon after.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

static int calls_a, calls_b, calls_jit;	/* updated atomically */
static int nrounds, cnt[64];	/* calls of each round */
static int sleepy;		/* -s */
static void (*fn)(void);	/* the code */
static pthread_barrier_t bar;

__attribute__((noinline)) void
cb_a(int x)
{
	__atomic_add_fetch(&calls_a, x > 0, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void
cb_b(int x)
{
	__atomic_add_fetch(&calls_b, x > 0, __ATOMIC_RELAXED);
}

static void
run_round(int i)
{
	static const struct timespec nap = { 0, 20000000 };
	int k;

	for (k = 0; k < cnt[i]; k++) {
		if (sleepy && k == 1)
			nanosleep(&nap, NULL);
		fn();
		__atomic_add_fetch(&calls_jit, 1, __ATOMIC_RELAXED);
	}
}

/* -t: the second thread, each round between two barriers */
static void *
second(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < nrounds; i++) {
		pthread_barrier_wait(&bar);
		run_round(i);
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

/* movabs $fn, %rax; call *%rax */
static unsigned char *
emit_call(unsigned char *p, void (*fn)(int))
{
	unsigned long long a = (unsigned long long)(unsigned long)fn;

	*p++ = 0x48;
	*p++ = 0xb8;
	memcpy(p, &a, 8);
	p += 8;
	*p++ = 0xff;
	*p++ = 0xd0;
	return p;
}

/* A: push %rbx; mov $3,%ebx; 1: mov %ebx,%edi; call cb_a; dec %ebx;
 * jnz 1b; pop %rbx; ret */
static void
write_a(void *code)
{
	unsigned char *p = code, *loop;

	*p++ = 0x53;
	*p++ = 0xbb;
	*p++ = 3; *p++ = 0; *p++ = 0; *p++ = 0;
	loop = p;
	*p++ = 0x89;
	*p++ = 0xdf;
	p = emit_call(p, cb_a);
	*p++ = 0xff;
	*p++ = 0xcb;
	*p++ = 0x75;
	*p = (unsigned char)(loop - (p + 1));
	p++;
	*p++ = 0x5b;
	*p++ = 0xc3;
}

/* B: xchg %ax,%ax; sub $8,%rsp; mov $7,%edi; call cb_b; call cb_b;
 * add $8,%rsp; ret */
static void
write_b(void *code)
{
	static const unsigned char sub[] = { 0x66, 0x90, 0x48, 0x83, 0xec,
	    0x08, 0xbf, 7, 0, 0, 0 };
	static const unsigned char add[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	unsigned char *p = code;

	memcpy(p, sub, sizeof(sub));
	p = emit_call(p + sizeof(sub), cb_b);
	p = emit_call(p, cb_b);
	memcpy(p, add, sizeof(add));
}

int
main(int argc, char **argv)
{
	static const char *const dflt[] = { "5", "4", "3", "2" };
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE |
	    PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int threaded = 0, opts = 1, i, k;
	const char *const *rounds;
	static uint64_t img[2][8];	/* A's and B's 64 bytes */
	pthread_t th;

	for (; opts < argc && argv[opts][0] == '-'; opts++)
		if (strcmp(argv[opts], "-t") == 0)
			threaded = 1;
		else if (strcmp(argv[opts], "-s") == 0)
			sleepy = 1;
		else
			return 2;
	rounds = argc > opts ? (const char *const *)argv + opts : dflt;
	nrounds = argc > opts ? argc - opts : 4;
	if (code == MAP_FAILED || nrounds > 64)
		return 1;
	for (i = 0; i < nrounds; i++)
		cnt[i] = atoi(rounds[i]);
	*(void **)&fn = code;
	if (threaded && (pthread_barrier_init(&bar, NULL, 2) != 0 ||
	    pthread_create(&th, NULL, second, NULL) != 0))
		return 1;
	memset(img, 0xcc, sizeof(img));
	write_a(img[0]);
	write_b(img[1]);
	for (i = 0; i < nrounds; i++) {
		/*
		 * Plain stores, no call: from the old code's last branch
		 * to the new code's first the trace has no other packet
		 * (without -t).
		 */
		for (k = 0; k < 8; k++)
			((volatile uint64_t *)code)[k] = img[i % 2][k];
		if (threaded)
			pthread_barrier_wait(&bar);
		run_round(i);
		if (threaded)
			pthread_barrier_wait(&bar);
	}
	if (threaded)
		pthread_join(th, NULL);
	printf("calls-jit %d\ncalls-a %d\ncalls-b %d\njit %p\ncb-a %p\n"
	    "cb-b %p\n", calls_jit, calls_a, calls_b, (void *)code,
	    (void *)cb_a, (void *)cb_b);
	return 0;
}
