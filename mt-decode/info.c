/* SPDX-License-Identifier: MIT */
/*
 * The --info report (info.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "decode.h"
#include "info.h"
#include "snap.h"

const char *
info_ipt_errname(int code)
{
	static const char *const names[] = {
		[pte_ok] = "ok", [pte_internal] = "internal",
		[pte_invalid] = "invalid", [pte_nosync] = "nosync",
		[pte_bad_opc] = "bad-opc", [pte_bad_packet] = "bad-packet",
		[pte_bad_context] = "bad-context", [pte_eos] = "eos",
		[pte_bad_query] = "bad-query", [pte_nomem] = "nomem",
		[pte_bad_config] = "bad-config", [pte_noip] = "noip",
		[pte_ip_suppressed] = "ip-suppressed", [pte_nomap] = "nomap",
		[pte_bad_insn] = "bad-insn", [pte_no_time] = "no-time",
		[pte_no_cbr] = "no-cbr", [pte_bad_image] = "bad-image",
		[pte_bad_lock] = "bad-lock", [pte_not_supported] =
		"not-supported", [pte_retstack_empty] = "retstack-empty",
		[pte_bad_retcomp] = "bad-retcomp", [pte_bad_status_update] =
		"bad-status-update", [pte_no_enable] = "no-enable",
		[pte_event_ignored] = "event-ignored", [pte_overflow] =
		"overflow", [pte_bad_file] = "bad-file", [pte_bad_cpu] =
		"bad-cpu",
	};

	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(names[0]) ||
	    names[code] == NULL)
		return "other";
	return names[code];
}

static const char *
backend_name(uint32_t b)
{
	static const char *const n[] = { "intel_pt", "emulate", "raw",
	    "perf" };

	return b < 4 ? n[b] : "unknown";
}

static void
hexid(FILE *fp, const uint8_t *id, size_t n)
{
	size_t i;

	if (n == 0)
		fputs("-", fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%02x", id[i]);
}

static void
info_chunks(FILE *fp, const struct mt_snap *s)
{
	size_t i;

	fprintf(fp, "snapshot format %u.%u, %zu chunks\n", s->major, s->minor,
	    s->nchunks);
	for (i = 0; i < s->nchunks; i++)
		fprintf(fp, "  chunk %-8s offset %" PRIu64 " length %" PRIu64
		    "%s\n", mt_snap_type_name(s->chunks[i].type),
		    s->chunks[i].off, s->chunks[i].len,
		    s->chunks[i].flags & 1 ? " required" : "");
	if (s->skipped)
		fprintf(fp, "  %" PRIu64 " unknown chunks skipped\n",
		    s->skipped);
}

static void
info_cpu(FILE *fp, const struct mt_snap *s)
{
	const struct mt_snap_ptcfg *p = &s->ptcfg;
	size_t i;

	if (s->has_host)
		fprintf(fp, "cpu: %s family %u model %u stepping %u, %u cpus, "
		    "nom_freq %u, cpuid 0x15 %u/%u %u Hz, kernel %s, host %s\n",
		    s->host.vendor[0] ? s->host.vendor : "?", s->host.family,
		    s->host.model, s->host.stepping, s->host.nr_cpus,
		    s->host.max_nonturbo_ratio, s->host.cpuid_15[1],
		    s->host.cpuid_15[0], s->host.cpuid_15[2],
		    s->host.kernel ? s->host.kernel : "?",
		    s->host.hostname ? s->host.hostname : "?");
	else
		fprintf(fp, "cpu: unknown (no HOST chunk)\n");
	if (!s->has_ptcfg) {
		fprintf(fp, "pt: unknown configuration (no PTCFG chunk)\n");
		return;
	}
	fprintf(fp, "pt: backend %s, config 0x%" PRIx64 " (tsc %d, mtc %d "
	    "period %u, cyc %d thresh %u, noretcomp %d, psb_period %u), "
	    "%s%s%s, %s buffers\n", backend_name(p->backend), p->config,
	    !!(p->config & MT_PT_CFG_TSC), !!(p->config & MT_PT_CFG_MTC),
	    (unsigned)MT_PT_CFG_MTC_PERIOD(p->config),
	    !!(p->config & MT_PT_CFG_CYC),
	    (unsigned)MT_PT_CFG_CYC_THRESH(p->config),
	    !!(p->config & MT_PT_CFG_NORETCOMP),
	    (unsigned)MT_PT_CFG_PSB_PERIOD(p->config),
	    p->user ? "user" : "", p->user && p->kernel ? "+" : "",
	    p->kernel ? "kernel" : "", p->per_cpu ? "per-cpu" : "per-thread");
	for (i = 0; i < p->nfilters && i < MT_SNAP_MAX_FILTERS; i++)
		fprintf(fp, "  filter %zu: 0x%" PRIx64 "-0x%" PRIx64 " %s\n", i,
		    p->filters[i].a, p->filters[i].b, p->filters[i].cfg == 2 ?
		    "tracestop" : p->filters[i].cfg == 1 ? "filter" : "off");
}

static void
info_time(FILE *fp, const struct mt_snap *s)
{
	const struct mt_snap_timeconv *t = &s->timeconv;

	if (!s->has_timeconv || !t->cap_user_time_zero) {
		fprintf(fp, "timing: no time conversion: times are relative "
		    "(instruction counts)\n");
		return;
	}
	fprintf(fp, "timing: time_zero %" PRIu64 " time_mult %u time_shift "
	    "%u%s\n", t->time_zero, t->time_mult, t->time_shift,
	    s->has_ptcfg && (s->ptcfg.config & MT_PT_CFG_TSC) ? "" :
	    " (no TSC packets configured: times are relative)");
}

int
info_print(FILE *fp, const struct mt_snap *s, const char *name)
{
	size_t i, j;

	fprintf(fp, "%s\n", name);
	info_chunks(fp, s);
	for (i = 0; i < s->nmeta; i++)
		fprintf(fp, "meta: %s = %s\n", s->meta[i].key,
		    s->meta[i].value);
	info_cpu(fp, s);
	info_time(fp, s);
	for (i = 0; i < s->nprocs; i++) {
		fprintf(fp, "process %u (parent %u) %s: %s, cmdline '",
		    s->procs[i].pid, s->procs[i].ppid, s->procs[i].comm,
		    s->procs[i].exe);
		for (j = 0; j < s->procs[i].cmdline_len; j++) {
			char c = s->procs[i].cmdline[j];

			if (c == '\0' && j + 1 < s->procs[i].cmdline_len)
				c = ' ';
			if (c != '\0')
				fputc(c, fp);
		}
		fputs("'\n", fp);
	}
	for (i = 0; i < s->nthreads; i++)
		fprintf(fp, "thread %u/%u %s\n", s->threads[i].pid,
		    s->threads[i].tid, s->threads[i].comm);
	for (i = 0; i < s->naux; i++) {
		const struct mt_snap_aux *a = &s->aux[i];

		fprintf(fp, "pt buffer %zu: ", i);
		if (a->tid != MT_SNAP_NONE)
			fprintf(fp, "thread %u", a->tid);
		else if (a->cpu != MT_SNAP_NONE)
			fprintf(fp, "cpu %u", a->cpu);
		else
			fprintf(fp, "unattributed");
		fprintf(fp, ", snapshot %u, %" PRIu64 " bytes of a %" PRIu64
		    "-byte ring, head %" PRIu64 "%s%s\n", a->index, a->len,
		    a->ring_size, a->head,
		    a->flags & MT_SNAP_AUX_WRAPPED ? ", wrapped" : "",
		    a->flags & MT_SNAP_AUX_TRUNCATED ? ", truncated" : "");
	}
	for (i = 0; i < s->nsideband; i++)
		fprintf(fp, "sideband %zu: cpu %d tid %d, %" PRIu64 " bytes, "
		    "sample_type 0x%" PRIx64 "\n", i, (int)s->sideband[i].cpu,
		    (int)s->sideband[i].tid, s->sideband[i].len,
		    s->sideband[i].sample_type);
	for (i = 0; i < s->nmmaps; i++) {
		const struct mt_snap_mmap *m = &s->mmaps[i];

		fprintf(fp, "mmap %u 0x%" PRIx64 "-0x%" PRIx64 " pgoff 0x%"
		    PRIx64 " %s build-id ", m->pid, m->start, m->end, m->pgoff,
		    m->path);
		hexid(fp, m->build_id, m->build_id_len);
		fputc('\n', fp);
	}
	if (s->nblobs > 0) {
		uint64_t bytes = 0;

		for (i = 0; i < s->nblobs; i++)
			bytes += s->blobs[i].len;
		fprintf(fp, "code blobs: %zu, %" PRIu64 " bytes\n", s->nblobs,
		    bytes);
		for (i = 0; i < s->nblobs; i++) {
			fprintf(fp, "  blob kind %u pid %u 0x%" PRIx64 " %"
			    PRIu64 " bytes %s", s->blobs[i].kind,
			    s->blobs[i].pid, s->blobs[i].addr, s->blobs[i].len,
			    s->blobs[i].name);
			/* JIT code written over other code (format 1.1) */
			if (s->blobs[i].time != 0)
				fprintf(fp, " from time %" PRIu64,
				    s->blobs[i].time);
			fputc('\n', fp);
		}
	}
	for (i = 0; i < s->nelfs; i++) {
		fprintf(fp, "bundled elf %s, %" PRIu64 " bytes, build-id ",
		    s->elfs[i].path, s->elfs[i].len);
		hexid(fp, s->elfs[i].build_id, s->elfs[i].build_id_len);
		fputc('\n', fp);
	}
	for (i = 0; i < s->ntexts; i++)
		fprintf(fp, "text kind %u pid %u, %" PRIu64 " bytes\n",
		    s->texts[i].kind, s->texts[i].pid, s->texts[i].len);
	for (i = 0; i < s->ntriggers; i++)
		fprintf(fp, "trigger %s at 0x%" PRIx64 " time %" PRIu64
		    " thread %u/%u snapshot %u\n", s->triggers[i].what,
		    s->triggers[i].ip, s->triggers[i].time, s->triggers[i].pid,
		    s->triggers[i].tid, s->triggers[i].index);
	/* uprobe sites (format 1.2) */
	for (i = 0; i < s->nprobes; i++)
		fprintf(fp, "probe %s at 0x%" PRIx64 " process %u, %s+0x%"
		    PRIx64 ", %s\n", s->probes[i].what ? s->probes[i].what :
		    "?", s->probes[i].addr, s->probes[i].pid,
		    s->probes[i].path ? s->probes[i].path : "?",
		    s->probes[i].offset, s->probes[i].origin ==
		    MT_SNAP_PROBE_TRIGGER ? "trigger" : s->probes[i].origin ==
		    MT_SNAP_PROBE_OTHER ? "another tool's" : "unknown origin");
	fflush(fp);
	return ferror(fp) ? -1 : 0;
}

void
info_print_stats(FILE *fp, const struct decode_stats *st)
{
	int i;

	fprintf(fp, "buffers: %" PRIu64 "\n", st->buffers);
	fprintf(fp, "pt-bytes: %" PRIu64 "\n", st->pt_bytes);
	fprintf(fp, "instructions: %" PRIu64 "\n", st->instructions);
	fprintf(fp, "blocks: %" PRIu64 "\n", st->blocks);
	fprintf(fp, "ipt-events: %" PRIu64 "\n", st->ipt_events);
	fprintf(fp, "events: %" PRIu64 "\n", st->events);
	fprintf(fp, "errors: %" PRIu64 "\n", st->errors);
	for (i = 1; i < DECODE_NERR; i++)
		if (st->err_by_code[i] > 0)
			fprintf(fp, "errors-%s: %" PRIu64 "\n",
			    info_ipt_errname(i), st->err_by_code[i]);
	fprintf(fp, "overflows: %" PRIu64 "\n", st->overflows);
	fprintf(fp, "bytes-before-sync: %" PRIu64 "\n",
	    st->bytes_before_sync);
	fprintf(fp, "bytes-skipped: %" PRIu64 "\n", st->bytes_skipped);
	fprintf(fp, "missing-images: %" PRIu64 "\n", st->no_image);
	fprintf(fp, "walks: %" PRIu64 "\n", st->walks);
	fprintf(fp, "walk-instructions: %" PRIu64 "\n", st->walk_insns);
	fprintf(fp, "walk-mismatches: %" PRIu64 "\n", st->walk_mismatch);
	/* The cached decoder (cfg.h): buffers it decoded, gave back. */
	if (st->cfg_buffers > 0 || st->cfg_fallbacks > 0) {
		fprintf(fp, "cache-buffers: %" PRIu64 "\n", st->cfg_buffers);
		fprintf(fp, "cache-fallbacks: %" PRIu64 "\n",
		    st->cfg_fallbacks);
	}
	if (st->cfg_full > 0)
		fprintf(fp, "cache-full: %" PRIu64 "\n", st->cfg_full);
	/* buffers mt's query layer (pq.h) left to libipt's */
	if (st->cfg_pq_refused > 0)
		fprintf(fp, "cache-libipt-query: %" PRIu64 "\n",
		    st->cfg_pq_refused);
	fprintf(fp, "jumps-unknown-source: %" PRIu64 "\n",
	    st->jmp_unknown_src);
	fprintf(fp, "jumps-unknown-target: %" PRIu64 "\n",
	    st->jmp_unknown_dst);
	if (st->seg_joins > 0)	/* -j N split a buffer at PSBs */
		fprintf(fp, "segment-joins: %" PRIu64 "\n", st->seg_joins);
}
