/* SPDX-License-Identifier: MIT */
/*
 * What uprobes look like to the software PT backend's stepper
 * (emu-uprobe.c), on this test's own process, and the probed mark the
 * instruction cache (emu-insn.c) sets when a fix-up undid an int3.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "tap.h"
#include "../../mt-capture/emu-insn.h"
#include "../../mt-capture/emu-uprobe.h"

/* int3 over a nop, then ret: what a uprobe makes of "nop; ret". */
static volatile uint8_t code[16] = { 0xcc, 0xc3 };

__attribute__((noinline)) static int
some_function(int x)
{
	return x * 7 + 1;
}

static void
file_byte_is_the_files(void)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)some_function;
	uint8_t b = 0;

	/* No uprobe here: the file's byte is the one in memory. */
	CHECK(mt_emu_uprobe_file_byte(getpid(), (uint64_t)(uintptr_t)p,
	    &b) == 0);
	CHECK(b == p[0]);
	CHECK(mt_emu_uprobe_file_byte(getpid(), (uint64_t)(uintptr_t)p + 3,
	    &b) == 0);
	CHECK(b == p[3]);
}

static void
file_byte_not_in_a_file(void)
{
	int on_stack = 1;
	uint8_t b;

	CHECK(mt_emu_uprobe_file_byte(getpid(), (uint64_t)(uintptr_t)
	    &on_stack, &b) == -MT_E_NOTFOUND);
	CHECK(mt_emu_uprobe_file_byte(getpid(), 0, &b) == -MT_E_NOTFOUND);
	CHECK(mt_emu_uprobe_file_byte(-1, 0x1000, &b) == -MT_E_NOTFOUND);
}

static void
page_absent_without_a_hit(void)
{
	uint64_t lo = 1, hi = 2;

	/* The kernel maps [uprobes] at a process's first uprobe hit. */
	CHECK(mt_emu_uprobe_page(getpid(), &lo, &hi) == -MT_E_NOTFOUND);
	CHECK(lo == 1 && hi == 2);
}

static void
own_trap_needs_a_trap_stop(void)
{
	/* Not a tracee in a SIGTRAP stop: no siginfo to read. */
	CHECK(mt_emu_uprobe_own_trap(getpid()) == 0);
}

static void
fix_to_nop(void *ctx, pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	(void)ctx;
	(void)pid;
	(void)addr;
	if (len > 0 && buf[0] == 0xcc)
		buf[0] = 0x90;
}

static void
code_get_marks_probed(void)
{
	struct mt_emu_code *c;
	struct mt_emu_insn in;
	uint64_t ip = (uint64_t)(uintptr_t)code;

	c = mt_emu_code_new(getpid(), fix_to_nop, NULL);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK(mt_emu_code_get(c, getpid(), ip, &in) == 0);
	CHECK(in.cls == MT_EMU_I_OTHER && in.len == 1 && in.probed);
	CHECK(mt_emu_code_get(c, getpid(), ip + 1, &in) == 0);
	CHECK(in.cls == MT_EMU_I_RET && !in.probed);
	mt_emu_code_free(c);
	/* Without the fix-up it is an int3, not probed. */
	c = mt_emu_code_new(getpid(), NULL, NULL);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK(mt_emu_code_get(c, getpid(), ip, &in) == 0);
	CHECK(in.cls == MT_EMU_I_INT && !in.probed);
	mt_emu_code_free(c);
}

int
main(void)
{
	TEST(file_byte_is_the_files);
	TEST(file_byte_not_in_a_file);
	TEST(page_absent_without_a_hit);
	TEST(own_trap_needs_a_trap_stop);
	TEST(code_get_marks_probed);
	return tap_done();
}
