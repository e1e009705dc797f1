/* SPDX-License-Identifier: MIT */
/*
 * The guest's signal handlers (qsig.h).  The struct sigaction is read
 * with process_vm_readv on the plugin's own process, which fails
 * (EFAULT) rather than faulting when the guest unmapped it in between.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "qsig.h"

#define SIG_RESTORER_FLAG	0x04000000ull	/* SA_RESTORER */

unsigned qs_nhandlers;
static uint64_t g_handlers[QS_MAX];
static uint64_t g_restorers[QS_MAX];
static unsigned g_nrestorers;
static uint64_t g_base;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void
qs_set_base(uint64_t base)
{
	__atomic_store_n(&g_base, base, __ATOMIC_RELAXED);
}

/* Append @a to @set of *@n entries unless it is there or full; the
 * entry is written before the count that publishes it. */
static void
add(uint64_t *set, unsigned *n, uint64_t a)
{
	unsigned i, k = __atomic_load_n(n, __ATOMIC_RELAXED);

	for (i = 0; i < k; i++)
		if (set[i] == a)
			return;
	if (k == QS_MAX)
		return;
	__atomic_store_n(&set[k], a, __ATOMIC_RELAXED);
	__atomic_store_n(n, k + 1, __ATOMIC_RELEASE);
}

void
qs_sigaction(uint64_t act)
{
	uint64_t sa[3];	/* handler, flags, restorer */
	struct iovec local = { sa, sizeof(sa) }, remote;

	if (act == 0)
		return;
	remote.iov_base = (void *)(uintptr_t)(act +
	    __atomic_load_n(&g_base, __ATOMIC_RELAXED));
	remote.iov_len = sizeof(sa);
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)sizeof(sa))
		return;
	pthread_mutex_lock(&g_lock);
	if (sa[0] > 1)	/* not SIG_DFL (0) nor SIG_IGN (1) */
		add(g_handlers, &qs_nhandlers, sa[0]);
	if (sa[0] > 1 && (sa[1] & SIG_RESTORER_FLAG))
		add(g_restorers, &g_nrestorers, sa[2]);
	pthread_mutex_unlock(&g_lock);
}

static int
member(const uint64_t *set, const unsigned *n, uint64_t a)
{
	unsigned i, k = __atomic_load_n(n, __ATOMIC_ACQUIRE);

	for (i = 0; i < k; i++)
		if (__atomic_load_n(&set[i], __ATOMIC_RELAXED) == a)
			return 1;
	return 0;
}

int
qs_is_handler(uint64_t pc)
{
	return member(g_handlers, &qs_nhandlers, pc);
}

int
qs_is_restorer(uint64_t pc)
{
	return member(g_restorers, &g_nrestorers, pc);
}
