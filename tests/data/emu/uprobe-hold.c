/* SPDX-License-Identifier: MIT */
/*
 * Another tool's uprobes, for the ptrace backend's tests: opens a uprobe
 * perf event on every CPU (system-wide, as bpftrace and USDT agents do) at
 * each file OFFSET of FILE, enabled, writes its pid and "ready" to stdout,
 * and holds them until it is killed.  The kernel writes an int3 at each
 * probed instruction of every process that maps FILE.
 *
 * usage: uprobe-hold FILE [r]OFFSET...   (hex or decimal; r: a return
 * probe, a uretprobe, on the function at OFFSET)
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int
main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), c;
	int type, i, n = 0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: uprobe-hold FILE [r]OFFSET...\n");
		return 2;
	}
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (f == NULL || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "uprobe-hold: no uprobe PMU\n");
		return 1;
	}
	fclose(f);
	for (i = 2; i < argc; i++)
		for (c = 0; c < ncpu; c++) {
			struct perf_event_attr a;
			const char *o = argv[i];
			int fd;

			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = (uint32_t)type;
			a.config1 = (uint64_t)(uintptr_t)argv[1];
			if (*o == 'r') {
				a.config = 1;	/* format/retprobe: config:0 */
				o++;
			}
			a.config2 = strtoull(o, NULL, 0);
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_IP;
			fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)c,
			    -1, 0);
			if (fd < 0 && errno == ENODEV)
				continue;	/* offline CPU */
			if (fd < 0) {
				fprintf(stderr, "uprobe-hold: %s+%s: %s\n",
				    argv[1], argv[i], strerror(errno));
				return 1;
			}
			n++;
		}
	printf("%d\nready %d\n", (int)getpid(), n);
	fflush(stdout);
	for (;;)
		pause();
}
