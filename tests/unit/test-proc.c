/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/proc.c: /proc/PID/maps lines, the snapshot
 * description of a live process (this test itself), shared-object lookup
 * as the loader does it, a thread's process, and the --kernel copies (as
 * root).
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "snap.h"
#include "../../mt-capture/proc.h"

static void
maps_line_parsed(void)
{
	struct mt_proc_map m;

	CHECK(mt_proc_parse_maps_line("55d0c8a00000-55d0c8a02000 r-xp "
	    "00002000 fe:01 1234567                    /usr/bin/true\n",
	    &m) == 0);
	CHECK_EQ_U64(m.start, 0x55d0c8a00000ull);
	CHECK_EQ_U64(m.end, 0x55d0c8a02000ull);
	CHECK_EQ_U64(m.pgoff, 0x2000);
	CHECK_EQ_U64(m.prot, PROT_READ | PROT_EXEC);
	CHECK_EQ_U64(m.flags, MAP_PRIVATE);
	CHECK_STR(m.path, "/usr/bin/true");
	CHECK(mt_proc_parse_maps_line("7ffd1000-7ffd3000 r-xs 00000000 "
	    "00:00 0 [vdso]", &m) == 0);
	CHECK_STR(m.path, "[vdso]");
	CHECK_EQ_U64(m.flags, MAP_SHARED);
	CHECK(mt_proc_parse_maps_line("7f00-7e00 r-xp 0 00:00 0", &m) ==
	    -MT_E_SYNTAX);
	CHECK(mt_proc_parse_maps_line("garbage", &m) == -MT_E_SYNTAX);
	/* device and inode: which file it is, whatever its name here */
	CHECK(mt_proc_parse_maps_line("55d0c8a00000-55d0c8a02000 r-xp "
	    "00002000 fe:01 1234567  /usr/bin/true\n", &m) == 0);
	CHECK_EQ_U64(m.maj, 0xfe);
	CHECK_EQ_U64(m.min, 1);
	CHECK_EQ_U64(m.ino, 1234567);
}

static void
modules_parsed(void)
{
	char text[] =
	    "kvm_amd 208896 0 - Live 0xffffffffc0a2e000\n"
	    "kvm 1343488 1 kvm_amd, Live 0xffffffffc08c0000 (O)\n"
	    "hidden 4096 0 - Live 0x0000000000000000\n"
	    "bad line\n";
	struct mt_proc_module m[4];

	CHECK(mt_proc_parse_modules(text, m, 4) == 2);
	CHECK_STR(m[0].name, "[kvm_amd]");
	CHECK_EQ_U64(m[0].addr, 0xffffffffc0a2e000ull);
	CHECK_EQ_U64(m[0].size, 208896);
	CHECK_STR(m[1].name, "[kvm]");
	CHECK_EQ_U64(m[1].size, 1343488);
}

static void
describe_self(void)
{
	struct mt_snap s;
	size_t skipped = 0, i;
	int vdso = 0, exe = 0;

	mt_snap_init(&s);
	CHECK(mt_proc_describe(&s, getpid(), 1, 1, 1ull << 30, &skipped) ==
	    0);
	CHECK_EQ_U64(s.nprocs, 1);
	CHECK(s.nthreads >= 1);
	CHECK(s.nmmaps > 3);
	CHECK(s.ntexts == 1 && s.texts[0].kind == MT_SNAP_TEXT_MAPS);
	for (i = 0; i < s.nblobs; i++)
		vdso |= s.blobs[i].kind == MT_SNAP_BLOB_VDSO;
	CHECK(vdso);
	for (i = 0; i < s.nmmaps; i++)
		if (s.procs[0].exe != NULL &&
		    strcmp(s.mmaps[i].path, s.procs[0].exe) == 0)
			exe = s.mmaps[i].build_id_len == 20;
	CHECK(exe);
	/* Bundled: each executable file with a build-id, once. */
	CHECK(s.nelfs >= 2);
	for (i = 1; i < s.nelfs; i++)
		CHECK(memcmp(s.elfs[i].build_id, s.elfs[0].build_id, 20));
	mt_snap_release(&s);
}

static void
describe_gone_process(void)
{
	struct mt_snap s;
	size_t skipped = 0;

	mt_snap_init(&s);
	CHECK(mt_proc_describe(&s, 1073741822, 0, 0, 0, &skipped) ==
	    -MT_E_NOTFOUND);
	mt_snap_release(&s);
}

/* What a second thread sees of itself. */
struct tgid_seen {
	pid_t tid;		/* its thread id */
	pid_t tgid;		/* mt_proc_tgid() of it */
};

static void *
tgid_thread(void *arg)
{
	struct tgid_seen *s = arg;

	s->tid = gettid();
	s->tgid = mt_proc_tgid(s->tid);
	return NULL;
}

static void
tgid_of_a_thread_is_its_process(void)
{
	struct tgid_seen seen = { 0, 0 };
	pthread_t th;

	CHECK(mt_proc_tgid(getpid()) == getpid());
	CHECK(pthread_create(&th, NULL, tgid_thread, &seen) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK(seen.tid > 0 && seen.tid != getpid());
	CHECK(seen.tgid == getpid());
	CHECK(mt_proc_tgid(1073741822) == -1);
}

static void
dso_found_like_the_loader(void)
{
	char out[PATH_MAX];

	CHECK(mt_proc_find_dso(0, "libc.so.6", out, sizeof(out)) == 0);
	CHECK(strstr(out, "libc.so.6") != NULL && out[0] == '/');
	/* a mapping of the process itself wins */
	CHECK(mt_proc_find_dso(getpid(), "libc.so.6", out, sizeof(out)) ==
	    0);
	CHECK(mt_proc_find_dso(0, "libdoesnotexist.so.42", out,
	    sizeof(out)) == -MT_E_NOTFOUND);
	CHECK(mt_proc_find_dso(0, "/nonexistent/libx.so", out,
	    sizeof(out)) == -MT_E_NOTFOUND);
}

static void
kernel_copies(void)
{
	struct mt_snap s;
	char warn[256];
	size_t i;
	int blob = 0;

	struct mt_proc_krange jit[2] = {
		{ .addr = 0xffffffffc0001000ull, .len = 0x40, .type = 1,
		    .name = "bpf_prog_0123456789abcdef_a" },
		{ .addr = 0xffffffffc0002800ull, .len = 0x1c8, .type = 2,
		    .name = "kprobe_insn_page" },
	};
	static const char want[] =
	    "ffffffffc0001000 40 bpf_prog_0123456789abcdef_a\n"
	    "ffffffffc0002800 1c8 kprobe_insn_page\n";

	/*
	 * BPF programs the host has loaded (systemd's, another tool's)
	 * are listed too, after the ranges given: at most one perf map.
	 */
	mt_snap_init(&s);
	CHECK(mt_proc_kernel(&s, NULL, 0, warn, sizeof(warn)) == 0);
	CHECK(s.ntexts >= 1 && s.ntexts <= 2 &&
	    s.texts[0].kind == MT_SNAP_TEXT_KALLSYMS);
	mt_snap_release(&s);
	/* The JIT ranges: a perf map of pid 0 after kallsyms, theirs first */
	mt_snap_init(&s);
	CHECK(mt_proc_kernel(&s, jit, 2, warn, sizeof(warn)) == 0);
	CHECK(s.ntexts == 2 && s.texts[1].kind == MT_SNAP_TEXT_PERFMAP &&
	    s.texts[1].pid == 0);
	if (s.ntexts == 2)
		CHECK(s.texts[1].len >= strlen(want) &&
		    memcmp(s.texts[1].data, want, strlen(want)) == 0);
	for (i = 0; i < s.nblobs; i++)
		if (s.blobs[i].kind == MT_SNAP_BLOB_KERNEL)
			blob = s.blobs[i].len > 4096 &&
			    s.blobs[i].addr >= 0xffff800000000000ull;
	/* Where kcore is readable the text must be there; some kernels
	 * (this VM's) have no /proc/kcore at all. */
	if (access("/proc/kcore", R_OK) == 0)
		CHECK(blob);
	else
		CHECK(strstr(warn, "/proc/kcore") != NULL);
	mt_snap_release(&s);
}

static void
host_identity(void)
{
	struct mt_snap_host h;

	mt_proc_host(&h, 24);
	CHECK(h.vendor[0] != '\0');
	CHECK(h.family > 0);
	CHECK(h.nr_cpus >= 1);
	CHECK_EQ_U64(h.max_nonturbo_ratio, 24);
	CHECK(h.kernel != NULL);
	free(h.kernel);
	free(h.hostname);
}

int
main(void)
{
	TEST(maps_line_parsed);
	TEST(describe_self);
	TEST(describe_gone_process);
	TEST(tgid_of_a_thread_is_its_process);
	TEST(dso_found_like_the_loader);
	TEST(kernel_copies);
	TEST(modules_parsed);
	TEST(host_identity);
	return tap_done();
}
