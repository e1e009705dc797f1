/* SPDX-License-Identifier: MIT */
/*
 * --kernel: the BPF programs loaded now, as the kernel gives them
 * (perf's way: bpf(BPF_PROG_GET_NEXT_ID), BPF_PROG_GET_FD_BY_ID,
 * BPF_OBJ_GET_INFO_BY_FD: jited_ksyms, jited_func_lens, prog_tags), so
 * that JIT code loaded before recording started, which no KSYMBOL record
 * announces, is described and copied too.  Without the bpf() rights
 * (CAP_SYS_ADMIN), the [bpf] symbols of /proc/kallsyms, whose lengths are
 * not known (mt_kjit_from_kallsyms).  Never prints.
 */
#ifndef MT_CAPTURE_KJIT_H
#define MT_CAPTURE_KJIT_H

#include <stddef.h>
#include <stdint.h>

struct mt_proc_krange;

/*
 * Each function of each BPF program loaded now (its JIT code's address
 * and length; name "bpf_prog_TAG[_NAME]", the main function's NAME the
 * program's, a subprogram's "F" as perf names them; /proc/kallsyms may
 * name them better, mt_kjit_name).  At most @max into @out; returns how
 * many, with *@err 0, or the errno of a refused bpf() (EPERM: not
 * privileged; then nothing is listed).
 */
size_t mt_kjit_bpf(struct mt_proc_krange *out, size_t max, int *err);

/*
 * Name the ranges @r[0..@n) by /proc/kallsyms text @syms (its "[bpf]"
 * symbols at the same address).
 */
void mt_kjit_name(const char *syms, struct mt_proc_krange *r, size_t n);

/*
 * The "[bpf]" code symbols of /proc/kallsyms text @syms (bpf_prog_*,
 * bpf_trampoline_*, ...), each taken up to the next symbol above it and
 * at most @cap bytes: kallsyms gives no length, so a range may hold the
 * next program's bytes or padding.  Returns how many (at most @max).
 */
size_t mt_kjit_from_kallsyms(const char *syms, uint32_t cap,
    struct mt_proc_krange *out, size_t max);

/*
 * The kernel JIT code to describe now: the @njit ranges @jit (the
 * KSYMBOL records') and each BPF function loaded now that they lack
 * (mt_kjit_bpf, named by kallsyms text @syms; mt_kjit_from_kallsyms, at
 * most MT_KJIT_GUESS bytes each, when bpf() is refused, saying so in
 * @warn, else @warn is "").  A malloc'ed array in *@out (NULL with 0
 * ranges); returns how many, or -MT_E_NOMEM.
 */
#define MT_KJIT_GUESS 65536u
long mt_kjit_all(const char *syms, const struct mt_proc_krange *jit,
    size_t njit, struct mt_proc_krange **out, char *warn, size_t warnsz);

#endif /* MT_CAPTURE_KJIT_H */
