/* SPDX-License-Identifier: MIT */
/*
 * Static control flow inside libipt blocks.  With its default flags the
 * block decoder follows direct calls and direct jumps without ending the
 * block, so a block can hold calls that mt-decode must report.  Which ones
 * depends only on the code: starting at a block's first IP, the walk
 * decodes instructions (ild.h) the way libipt proceeds without trace,
 * records every direct call and jump with its instruction index, and stops
 * at the first instruction that needs trace (conditional or indirect
 * branch, return, far transfer).  A block of N instructions then holds the
 * walk's transitions with index < N.  Walks are cached by (IP, isid) and
 * never freed before the cache, so the decode loop allocates nothing per
 * block once the code has been seen.
 */
#ifndef MT_DECODE_WALK_H
#define MT_DECODE_WALK_H

#include <stddef.h>
#include <stdint.h>

struct pt_image_section_cache;

/* What the last instruction of a walk (or a transition) is; the values
 * equal those of enum ild_class (ild.h). */
enum walk_kind {
	WK_NONE = 0,	/* walk stopped without a branch (limit, no bytes) */
	WK_CALL,	/* near call (direct in a transition, else indirect) */
	WK_JMP,		/* near jump (direct in a transition, else indirect) */
	WK_COND,	/* conditional branch (Jcc, JrCXZ, LOOPcc) */
	WK_RET,		/* near return */
	WK_SYSCALL,	/* SYSCALL, SYSENTER */
	WK_SYSRET,	/* SYSRET, SYSEXIT */
	WK_INT,		/* INT n, INT3, INTO, INT1 */
	WK_IRET,	/* IRET */
	WK_FAR,		/* other far transfer (far call/jmp/ret, VM*) */
};

/*
 * Where a branch goes relative to its function (walk_leaves()).  Bit 0
 * set: the branch leaves its function (a `jmp` record); bit 1 set: the
 * target is in no known function; bit 2 set: the source is in none.
 */
enum walk_dest {
	WL_INSIDE = 0,		/* target inside the source's function */
	WL_LEAVES = 1,		/* target in another known function */
	WL_UNKNOWN = 6,		/* source and target in no known function */
	WL_LEAVES_UNKNOWN = 3,	/* target outside the source's function,
				 * in no known function */
	WL_ENTERS = 5,		/* source in no known function, target in
				 * one: it leaves whatever code the source
				 * is (assembler without CFI, as glibc's
				 * __longjmp is without its FDE) */
};

/*
 * walk.quiet: WQ_COND when the walk ends in a conditional branch whose
 * taken target stays in its function (leaves without WL_LEAVES), plus
 * WQ_NO_TR when it has no transitions.
 */
enum { WQ_COND = 1, WQ_NO_TR = 2 };

/* A direct call or jump inside a walk. */
struct walk_tr {
	uint32_t idx;		/* instruction index from the walk's start */
	uint8_t kind;		/* WK_CALL or WK_JMP */
	uint8_t leaves;		/* enum walk_dest */
	uint8_t size;		/* bytes of the branch instruction */
	uint64_t from;		/* the branch instruction */
	uint64_t to;		/* its target */
};

struct walk {
	uint64_t ip;		/* first instruction */
	int isid;		/* libipt section identifier */
	uint32_t len;		/* instructions walked */
	uint32_t tr;		/* first transition (index into the cache) */
	uint32_t ntr;		/* transitions */
	uint8_t term;		/* enum walk_kind of instruction len-1 */
	uint8_t term_size;	/* its size in bytes */
	uint8_t leaves;		/* for WK_COND: taken target leaves the
				 * function (as walk_tr.leaves) */
	uint8_t quiet;		/* WQ_* */
	uint32_t tag;		/* whose succ these are (walk_link) */
	uint64_t term_ip;	/* address of instruction len-1 */
	uint64_t term_target;	/* WK_COND: taken target */
	uint64_t cont;		/* WK_NONE: where the next instruction is
				 * (0: the walk cannot go on) */
	uint32_t succ[2];	/* for the decoder of tag: walk index + 1
				 * after the branch taken [0] and not
				 * taken [1] (WK_COND), or where it went
				 * last [0] (any other; the caller checks
				 * its IP) (0: not known) */
};
/* One walk per cache line: the decode loop reads it, and the walk its
 * branch leads to, with one access each. */
_Static_assert(sizeof(struct walk) == 64, "a walk is one cache line");

/*
 * Function lookup: returns 1 and sets [*lo, *hi) when @addr is inside a
 * known function, 0 when unknown.
 */
typedef int (*walk_fn_lookup)(void *arg, uint64_t addr, uint64_t *lo,
    uint64_t *hi);

/*
 * A section's bytes in memory: returns 0 and sets *@code to the *@size
 * bytes of section @isid from address *@vaddr (libipt's section cache
 * would read the same), or -1 when they must be read through the cache.
 */
typedef int (*walk_code_fn)(void *arg, int isid, const uint8_t **code,
    uint64_t *vaddr, uint64_t *size);

struct walk_cache;

/* Returns NULL on allocation failure.  @isc is not owned. */
struct walk_cache *walk_cache_new(struct pt_image_section_cache *isc,
    walk_fn_lookup fn, void *fnarg);
/* Read code in place where @code has it (@arg: its first argument);
 * without this call everything is read through the cache. */
void walk_cache_set_code(struct walk_cache *wc, walk_code_fn code,
    void *arg);
void walk_cache_free(struct walk_cache *wc);

/*
 * The walk from @ip in section @isid, decoding in @mode (libipt's
 * enum pt_exec_mode).  Returns NULL on allocation failure.  The pointer
 * stays valid until the next walk_get().
 */
const struct walk *walk_get(struct walk_cache *wc, uint64_t ip, int isid,
    int mode);
/* Transition @i of the cache (walk->tr + k for k < walk->ntr). */
const struct walk_tr *walk_tr_at(const struct walk_cache *wc, uint32_t i);
/*
 * The cache's walks (index i: walk_array(wc) + i) and transitions as
 * arrays, for loops that index them; valid until the next walk_get().
 */
const struct walk *walk_array(const struct walk_cache *wc);
const struct walk_tr *walk_tr_array(const struct walk_cache *wc);
/*
 * Successor links (a decoder's memo of where a walk's conditional branch
 * led, valid for the image that decoder reads): a new tag, never 0 and
 * never given before by @wc; and walk @from's branch @which (0 taken,
 * 1 not) leads to walk @to for the decoder of @tag (its other link is
 * forgotten when it was another decoder's).
 */
uint32_t walk_tag_new(struct walk_cache *wc);
void walk_link(struct walk_cache *wc, uint32_t from, int which, uint32_t to,
    uint32_t tag);
/* Walks made and instructions decoded for them so far. */
void walk_cache_counts(const struct walk_cache *wc, uint64_t *walks,
    uint64_t *insns);

/*
 * Classify the one instruction in @raw[0..@size) at @ip (a block's last
 * instruction when libipt marks it truncated: its bytes span two
 * sections).  Returns its enum walk_kind (WK_NONE when it is no branch
 * or does not decode); *@target gets a direct branch's target, else 0.
 */
int walk_insn(struct walk_cache *wc, const uint8_t *raw, size_t size,
    uint64_t ip, int mode, uint64_t *target);
/* Where @to is relative to the function holding @from: enum walk_dest. */
int walk_leaves(const struct walk_cache *wc, uint64_t from, uint64_t to);

#endif /* MT_DECODE_WALK_H */
