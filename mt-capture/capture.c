/* SPDX-License-Identifier: MIT */
/*
 * The capture framework: the run/attach lifecycle of backend.h, shared by
 * the live PT, emulate and qemu backends.  mt_cap_main starts or finds the
 * targets, opens the sideband event and the uprobe triggers
 * (capture-setup.c), drives the backend (capture-poll.c), and writes each
 * snapshot (capture-snap.c).  It is the body of the run and attach
 * commands, so it reports progress and errors on stderr.
 *
 * Lifecycle guarantees: every path out of mt_cap_main goes through
 * cleanup(), which calls ops->detach (targets left running, untraced),
 * closes every event and, in run mode, never leaves the child gated.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "proc.h"
#include "ptattr.h"
#include "sbevent.h"
#include "snapout.h"
#include "sysfs.h"
#include "trigev.h"
#include "capture.h"

/* ---- lifecycle ---- */

static void
cleanup(struct mt_cap *c)
{
	size_t i;

	if (c->ops != NULL && !c->detached) {
		c->ops->detach(c);
		c->detached = 1;
	}
	if (c->gate_w >= 0) {
		/* The child never exec'd: EOF at the gate makes it exit. */
		close(c->gate_w);
		c->gate_w = -1;
	}
	if (c->exec_r >= 0) {
		close(c->exec_r);
		c->exec_r = -1;
	}
	mt_trig_free(c->trig);
	c->trig = NULL;
	mt_sbev_free(c->sb);
	c->sb = NULL;
	if (c->ops != NULL && c->ops->close != NULL)
		c->ops->close(c);
	c->ops = NULL;
	for (i = 0; i < c->nbufs; i++) {
		mt_ring_release(&c->bufs[i]->ring);
		free(c->bufs[i]);
	}
	free(c->bufs);
	c->bufs = NULL;
	c->nbufs = 0;
	for (i = 0; i < c->ntargets; i++) {
		if (c->pidfd[i] >= 0)
			close(c->pidfd[i]);
		c->pidfd[i] = -1;
		if (c->desc[i] != NULL) {
			mt_snap_release(c->desc[i]);
			free(c->desc[i]);
			c->desc[i] = NULL;
		}
	}
	if (c->kdesc != NULL) {
		mt_snap_release(c->kdesc);
		free(c->kdesc);
		c->kdesc = NULL;
	}
	free(c->hits);
	c->hits = NULL;
	free(c->pfd);
	c->pfd = NULL;
	c->npfd = 0;
	free(c->fork_off);
	c->fork_off = NULL;
	c->nfork_off = 0;
	free(c->fix);
	c->fix = NULL;
}

/* Every attach pid exists (else mt_cap_setup_targets names the missing one). */
static int
pids_exist(const struct mt_cap_opts *o)
{
	size_t i;

	for (i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) < 0 && errno == ESRCH)
			return 0;
	return 1;
}

static const struct mt_cap_backend_ops *
choose_backend(const struct mt_cap_opts *o, int *why_auto)
{
	int has_pt = mt_pmu_exists(o->sysfs_root, "intel_pt");

	*why_auto = o->backend == MT_CAP_BK_AUTO;
	if (o->backend == MT_CAP_BK_PT ||
	    (o->backend == MT_CAP_BK_AUTO && has_pt))
		return &mt_cap_backend_pt;
	if (o->backend == MT_CAP_BK_QEMU || (o->backend == MT_CAP_BK_AUTO &&
	    !o->attach && mt_cap_qemu_available()))
		return &mt_cap_backend_qemu;
	return &mt_cap_backend_emulate;
}

static int
setup_ptcfg(struct mt_cap *c, const struct mt_pmu *pmu)
{
	char warn[256], msg[256];
	uint64_t v;
	int rc;

	memset(&c->ptcfg, 0, sizeof(c->ptcfg));
	c->ptcfg.backend = c->ops->snap_backend;
	c->ptcfg.pmu_type = pmu->canonical ? 0 : pmu->type;
	c->ptcfg.user = 1;
	c->ptcfg.kernel = c->o->kernel ? 1 : 0;
	c->ptcfg.per_cpu = c->ops == &mt_cap_backend_pt && c->o->all_threads;
	rc = mt_ptattr_config(pmu, c->o->timing, &c->o->terms,
	    &c->ptcfg.config, warn, sizeof(warn), msg, sizeof(msg));
	if (rc < 0) {
		warnx("--timing: %s", msg);
		return rc;
	}
	if (warn[0] != '\0')
		warnx("%s", warn);
	if (!pmu->canonical && mt_pmu_cap(pmu, "max_nonturbo_ratio", &v) == 0)
		c->max_nonturbo_ratio = (uint32_t)v;
	return 0;
}

static int
ready(struct mt_cap *c)
{
	if (c->o->ready_fd >= 0) {
		if (write(c->o->ready_fd, "r", 1) != 1)
			warn("cannot write to --ready-fd %d", c->o->ready_fd);
		close(c->o->ready_fd);
	}
	if (!c->o->quiet)
		fprintf(stderr, "mt-capture: recording with the %s backend. "
		    "Press Ctrl-C to stop.\n", c->ops->name);
	return 0;
}

int
mt_cap_main(const struct mt_cap_opts *o)
{
	struct mt_cap cap, *c = &cap;
	struct mt_pmu pmu;
	char msg[512];
	int why_auto, rc, ev = 0, status = 1, e;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->gate_w = c->exec_r = -1;
	/* Before any fd is opened: a closed fd 1 would be reused. */
	c->to_stdout = strcmp(o->output, "-") == 0;
	if (c->to_stdout && mt_cap_stdout_gone()) {
		warnx("-o -: standard output is closed or nobody reads it");
		return 1;
	}
	if (mt_cap_install_signals() < 0)
		err(1, "cannot set up signal handling");
	if (o->ready_fd >= 0)
		(void)fcntl(o->ready_fd, F_SETFD, FD_CLOEXEC);
	if (o->attach && o->backend == MT_CAP_BK_AUTO &&
	    !mt_pmu_exists(o->sysfs_root, "intel_pt") && pids_exist(o)) {
		/* Never single-step a live process unasked (issue 19). */
		warnx("attach: no intel_pt PMU on this machine (%s/sys/bus/"
		    "event_source/devices/intel_pt is missing); the emulate "
		    "backend would single-step process %d with ptrace, about "
		    "100000 times slower, so not unasked: use --backend "
		    "emulate to do that anyway", o->sysfs_root,
		    (int)o->pids[0]);
		return 1;
	}
	c->ops = choose_backend(o, &why_auto);
	if (c->ops == NULL) {
		warnx("no intel_pt PMU here, and this build has no emulate "
		    "backend");
		return 1;
	}
	if (why_auto && !o->quiet)
		fprintf(stderr, "mt-capture: %s\n", c->ops ==
		    &mt_cap_backend_pt ? "using Intel PT (the intel_pt PMU "
		    "exists)" : c->ops == &mt_cap_backend_qemu ? "no intel_pt "
		    "PMU: using the qemu backend (software PT under "
		    "qemu-x86_64)" : "no intel_pt PMU: using the emulate "
		    "backend (software PT, much slower)");
	if (c->ops == &mt_cap_backend_pt) {
		rc = mt_pmu_read(&pmu, o->sysfs_root, "intel_pt", msg,
		    sizeof(msg));
		if (rc == -MT_E_NOPMU)
			mt_pmu_canonical_pt(&pmu);	/* probe explains */
		else if (rc < 0) {
			warnx("%s", msg);
			c->ops = NULL;
			return 1;
		}
	} else {
		mt_pmu_canonical_pt(&pmu);
	}
	if (setup_ptcfg(c, &pmu) < 0) {
		c->ops = NULL;
		return 1;
	}
	msg[0] = '\0';
	rc = c->ops->probe(c, &c->ptcfg, msg, sizeof(msg));
	if (rc < 0) {
		warnx("%s", msg[0] ? msg : mt_strerror(rc));
		c->ops->close(c);
		c->ops = NULL;
		return 1;
	}
	if ((rc = mt_cap_check_output(o->output)) == -MT_E_ISDIR) {
		warnx("'%s' is a directory (-o names the output file)",
		    o->output);
		goto out;
	} else if (rc < 0) {
		warnx("cannot write snapshot '%s': %s", o->output,
		    rc == -MT_E_IO ? strerror(errno) : mt_strerror(rc));
		goto out;
	}
	if (mt_cap_setup_targets(c) < 0 || mt_cap_plan_rings(c) < 0 ||
	    mt_cap_setup_triggers(c) < 0 || mt_cap_setup_sideband(c) < 0 ||
	    mt_cap_bind_new_threads(c) < 0)
		goto out;
	for (i = 0; i < c->ntargets; i++) {
		msg[0] = '\0';
		if (c->ops->attach(c, c->targets[i], msg, sizeof(msg)) < 0) {
			warnx("cannot attach to process %d: %s",
			    (int)c->targets[i], msg);
			goto out;
		}
	}
	if (mt_cap_setup_buffers(c) < 0)
		goto out;
	msg[0] = '\0';
	if (c->ops->start(c, msg, sizeof(msg)) < 0) {
		warnx("cannot start recording: %s", msg);
		goto out;
	}
	/*
	 * Triggers are opened disabled (issue 19): enabled only once PT
	 * records.  run: before the program runs (PT starts at its exec);
	 * attach: after the slow description and copies, below.
	 */
	if (!o->attach && mt_trig_enable(c->trig, 1, 1) < 0) {
		warn("cannot enable the triggers");
		goto out;
	}
	if ((e = mt_cap_open_gate(c)) != 0) {
		warnx("cannot run '%s': %s", o->argv[0], strerror(e));
		goto out;
	}
	if (o->duration > 0) {
		clock_gettime(CLOCK_MONOTONIC, &c->deadline);
		c->deadline.tv_sec += (time_t)o->duration;
		c->deadline.tv_nsec += (long)((o->duration -
		    (double)(time_t)o->duration) * 1e9);
		if (c->deadline.tv_nsec >= 1000000000L) {
			c->deadline.tv_sec++;
			c->deadline.tv_nsec -= 1000000000L;
		}
		c->has_deadline = 1;
	}
	for (i = 0; i < c->ntargets; i++)
		mt_cap_describe(c, i);
	if (mt_cap_arm_hw_triggers(c) < 0)
		goto out;
	if (o->kernel && (c->kdesc = calloc(1, sizeof(*c->kdesc))) != NULL) {
		mt_snap_init(c->kdesc);
		if (mt_proc_kernel(c->kdesc, NULL, 0, msg, sizeof(msg)) < 0)
			goto out;
		if (msg[0] != '\0')
			warnx("%s", msg);
	}
	/* run: also the hw: breakpoints armed above; keep uprobe hits. */
	if (mt_trig_enable(c->trig, 1, o->attach) < 0) {
		warn("cannot enable the triggers");
		goto out;
	}
	ready(c);
	for (;;) {
		ev = c->ops->run(c);
		if (ev < 0) {
			warnx("recording failed: %s", mt_strerror(ev));
			goto out;
		}
		if (ev == MT_CAP_EV_TRIGGER) {
			int more = o->multi_snapshot && (o->max_snapshots ==
			    0 || c->nsnapshots + 1 < o->max_snapshots) &&
			    c->ops->resume != NULL;

			if (mt_cap_take_snapshot(c, ev, more) < 0)
				goto out;
			if (more)
				continue;
			break;
		}
		if (ev == MT_CAP_EV_NONE)
			continue;
		if (ev == MT_CAP_EV_OUTPUT_GONE) {
			warnx("nothing reads standard output any more: "
			    "stopping without a snapshot");
			goto out;
		}
		/* signal, duration, exit: end, with a snapshot if none
		 * was written yet (a trigger that never fired). */
		if (c->nsnapshots == 0 && mt_cap_take_snapshot(c, ev, 0) < 0)
			goto out;
		break;
	}
	status = 0;
out:
	if (ev == MT_CAP_EV_SIGNAL && !o->quiet)
		fprintf(stderr, "mt-capture: got signal %d, detaching\n",
		    (int)mt_cap_signal());
	cleanup(c);
	if (c->child > 0) {
		if (c->gate_w < 0 && !c->child_reaped)
			mt_cap_finish_child(c, ev, status != 0);
	}
	return status;
}
