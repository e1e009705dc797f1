/* SPDX-License-Identifier: MIT */
/*
 * The part of QEMU's TCG plugin interface, version 1 (QEMU 7.2), that mt's
 * plugin uses.  Debian packages no qemu-plugin.h: these declarations are
 * written from QEMU's documentation (docs/devel/tcg-plugins.rst and the
 * comments of include/qemu/qemu-plugin.h, read as documentation) and
 * checked against the symbols /usr/bin/qemu-x86_64 exports (nm -D).
 * The functions are defined by the QEMU binary that loads the plugin.
 */
#ifndef MT_QEMU_QPLUGIN_H
#define MT_QEMU_QPLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QP_EXPORT __attribute__((visibility("default")))
#define QP_API_VERSION 1	/* what 7.2 accepts as current */

typedef uint64_t qp_id_t;	/* the plugin's handle, given at install */

/* What QEMU tells the plugin at install (7.2 layout). */
struct qp_info {
	const char *target_name;	/* "x86_64" */
	struct {
		int min;		/* oldest API version supported */
		int cur;		/* newest */
	} version;
	bool system_emulation;		/* false for qemu-user */
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	} u;
};

/* Whether a callback reads or writes guest registers. */
enum qp_cb_flags {
	QP_CB_NO_REGS = 0,
	QP_CB_R_REGS,
	QP_CB_RW_REGS,
};

struct qemu_plugin_tb;		/* opaque: a block being translated */
struct qemu_plugin_insn;	/* opaque: one of its instructions */

typedef void (*qp_simple_cb)(qp_id_t id, unsigned int vcpu);
typedef void (*qp_udata_cb)(qp_id_t id, void *udata);
typedef void (*qp_vcpu_udata_cb)(unsigned int vcpu, void *udata);
typedef void (*qp_tb_trans_cb)(qp_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qp_syscall_cb)(qp_id_t id, unsigned int vcpu, int64_t num,
    uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
    uint64_t a6, uint64_t a7, uint64_t a8);
typedef void (*qp_syscall_ret_cb)(qp_id_t id, unsigned int vcpu,
    int64_t num, int64_t ret);

/* Registration: callbacks run on the guest thread (vCPU) concerned. */
void qemu_plugin_register_vcpu_init_cb(qp_id_t id, qp_simple_cb cb);
void qemu_plugin_register_vcpu_exit_cb(qp_id_t id, qp_simple_cb cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qp_id_t id, qp_tb_trans_cb cb);
void qemu_plugin_register_vcpu_syscall_cb(qp_id_t id, qp_syscall_cb cb);
void qemu_plugin_register_vcpu_syscall_ret_cb(qp_id_t id,
    qp_syscall_ret_cb cb);
void qemu_plugin_register_atexit_cb(qp_id_t id, qp_udata_cb cb,
    void *udata);

/* At translation time: run @cb with @udata each time @tb (or @insn)
 * executes, before its first instruction. */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
    qp_vcpu_udata_cb cb, enum qp_cb_flags flags, void *udata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
    qp_vcpu_udata_cb cb, enum qp_cb_flags flags, void *udata);

/* A block's instructions, and an instruction's guest address, length,
 * bytes (valid during the translation callback) and host address. */
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(
    const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

/* Defined by the plugin: QEMU calls it once, after loading, with the
 * plugin's arguments (the KEY=VALUE parts of -plugin FILE,KEY=VALUE).
 * Returns 0, or non-zero to refuse to run. */
QP_EXPORT int qemu_plugin_install(qp_id_t id, const struct qp_info *info,
    int argc, char **argv);

#endif /* MT_QEMU_QPLUGIN_H */
