/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/perf-export.c on snapshots a capture would
 * not write but a file can hold: the perf.data must still be written and
 * read back by common/perfdata (the sanitizer build checks each step).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "perfdata.h"
#include "snap.h"
#include "../../mt-capture/perf.h"

/*
 * A per-thread snapshot whose one AUX buffer names a CPU as well, with no
 * process, thread or sideband: export-perf makes no COMM or MMAP record
 * for it, and writes the AUXTRACE buffer alone (its list of records to
 * sort is empty, never allocated).
 */
static void
no_record_to_sort(void)
{
	static uint8_t pt[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
	    0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };	/* PSB */
	static uint8_t code[] = { 0xc3 };
	char dir[] = "/tmp/test-perf-export.XXXXXX", files[64], cmd[128];
	struct perf_export_opts o = { 0 };
	struct mt_snap_aux a = { .tid = 5, .cpu = 3, .ring_size = sizeof(pt),
	    .len = sizeof(pt), .data = pt };
	struct mt_snap_blob b = { .kind = MT_SNAP_BLOB_MEMORY, .addr = 0x400000,
	    .name = (char[]){ "code.bin" }, .len = sizeof(code), .data = code };
	struct perf_diag d;
	struct mt_pd_diag pdd;
	struct mt_snap s;
	struct mt_pd pd;
	FILE *f = tmpfile();

	CHECK(f != NULL && mkdtemp(dir) != NULL);
	snprintf(files, sizeof(files), "%s/files", dir);
	o.files_dir = files;
	mt_snap_init(&s);
	s.has_ptcfg = 1;
	s.ptcfg.user = 1;
	CHECK(mt_snap_add_aux(&s, &a) == 0);
	CHECK(mt_snap_add_blob(&s, &b) == 0);
	memset(&d, 0, sizeof(d));
	CHECK(f != NULL && perf_export(&o, &s, fileno(f), &d) == 0);
	CHECK_STR(d.msg, "");
	mt_pd_init(&pd);
	CHECK(f != NULL && lseek(fileno(f), 0, SEEK_SET) == 0 &&
	    mt_pd_read_fd(&pd, fileno(f), 0, &pdd) == 0);
	CHECK_EQ_U64(pd.naux, 1);
	CHECK(pd.naux == 1 && pd.aux[0].size == sizeof(pt) &&
	    memcmp(pd.aux[0].data, pt, sizeof(pt)) == 0);
	mt_pd_release(&pd);
	mt_snap_release(&s);
	if (f != NULL)
		fclose(f);
	/* the code file export-perf wrote for the blob, and the directory */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int
main(void)
{
	TEST(no_record_to_sort);
	return tap_done();
}
