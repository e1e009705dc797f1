/* SPDX-License-Identifier: MIT */
/*
 * int3 in the program itself: its SIGTRAP reaches the program's handler.
 * Once: see docs/emulate.md for a second one.
 */
#include <signal.h>
#include <string.h>

static volatile int traps;

static void
on_trap(int sig)
{
	(void)sig;
	traps++;
}

__attribute__((noinline)) static void
breakpoint(void)
{
	__asm__ volatile("int3");
}

int
main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	breakpoint();
	return traps != 1;
}
