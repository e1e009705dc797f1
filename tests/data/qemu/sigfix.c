/* SPDX-License-Identifier: MIT */
/*
 * Signals delivered right after an indirect call, deterministically:
 * each round calls through a pointer to an unmapped page, the SIGSEGV
 * handler points the saved instruction pointer at landed() and
 * returns, so the call goes on in landed(), which returns to the
 * caller.  On odd rounds the handler also writes a byte to /dev/null (a
 * system call: the qemu backend cannot wait for rt_sigreturn then,
 * docs/emulate.md "Signals").  Prints the rounds, the handler's and
 * landed()'s counts.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int handled, landings, devnull = -1;
static volatile unsigned long sink;

__attribute__((noinline)) static void
landed(void)
{
	landings++;
	sink += 7;
}

static void
handler(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;

	(void)sig;
	(void)si;
	if (handled++ & 1)
		(void)!write(devnull, "x", 1);
	u->uc_mcontext.gregs[REG_RIP] = (greg_t)(unsigned long)landed;
}

int
main(int argc, char **argv)
{
	void (*volatile fp)(void) = (void (*)(void))(unsigned long)0x1000;
	int n = argc > 1 ? atoi(argv[1]) : 10, i;
	struct sigaction sa;

	devnull = open("/dev/null", O_WRONLY);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < n; i++)
		fp();
	printf("rounds %d\nhandled %d\nlanded %d\n", n, handled, landings);
	return handled == n && landings == n ? 0 : 1;
}
