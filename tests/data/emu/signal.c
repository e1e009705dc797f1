/* SPDX-License-Identifier: MIT */
/* A signal handler entered from nested calls (asynchronous transfer). */
#include <signal.h>
#include <string.h>

static volatile int hits;

__attribute__((noinline)) static void
count(void)
{
	hits++;
}

static void
handler(int sig)
{
	(void)sig;
	count();
}

__attribute__((noinline)) static void
fire(void)
{
	raise(SIGUSR1);
	count();
}

int
main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	fire();
	fire();
	return hits != 4;
}
