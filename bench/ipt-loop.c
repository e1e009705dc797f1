/* SPDX-License-Identifier: MIT */
/*
 * ipt-loop: the bare libipt block-decoder loop, the baseline mt-decode's
 * speed is measured against (bench/decode-ratio).  It maps raw memory pages
 * (kAFL/Nyx dumps: a file of little-endian u64 page addresses and a file of
 * the 4 KiB pages in the same order) through one image-section cache,
 * configures the IP filter, syncs forward from the start of the PT buffer and
 * follows the documented event/next loop (libipt doc/howto_libipt.md) to the
 * end, counting instructions, blocks (pt_blk_next calls) and errors.  Nothing is printed per
 * block: this is the floor any decoder built on libipt pays.
 *
 * usage: ipt-loop [-c] -t trace -a addrfile -d dumpfile [-f lo-hi] [-n runs]
 *
 * Each page is a section of its own (the reference counts of
 * testdata/real-pt were made so); -c maps a run of pages at consecutive
 * addresses as one section, as mt-capture import-raw --pages stores it.
 *
 * Stand-alone on purpose (bench/ links nothing from common/): build with
 * cc -O2 -o ipt-loop bench/ipt-loop.c -lipt
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			uint8_t *q = realloc(p, cap = cap ? 2 * cap : 65536);
			if (q == NULL) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
		}
		r = fread(p + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	*len = n;
	return p;
}

/* The little-endian u64 at @addrs + @off. */
static uint64_t
page_addr(const uint8_t *addrs, size_t off)
{
	uint64_t a = 0;
	int b;

	for (b = 7; b >= 0; b--)
		a = a << 8 | addrs[off + (size_t)b];
	return a;
}

struct counts {
	uint64_t insns, blocks, events, errors;
};

static void
decode(struct pt_config *cfg, struct pt_image *img, struct counts *c)
{
	struct pt_block_decoder *dec = pt_blk_alloc_decoder(cfg);
	struct pt_block blk;
	struct pt_event ev;
	uint64_t off, last = UINT64_MAX;
	int st;

	if (dec == NULL)
		return;
	pt_blk_set_image(dec, img);
	for (;;) {
		st = pt_blk_sync_forward(dec);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				st = pt_blk_event(dec, &ev, sizeof(ev));
				if (st < 0)
					break;
				c->events++;
			}
			if (st < 0)
				break;
			/*
			 * Past pts_eos libipt may still decode linear code
			 * until it needs trace; the next call then says
			 * -pte_eos.  Every call counts as a block, also an
			 * empty one: that is how the reference counts in
			 * testdata/real-pt/README.md were made.
			 */
			st = pt_blk_next(dec, &blk, sizeof(blk));
			c->blocks++;
			c->insns += blk.ninsn;
			if (st < 0)
				break;
		}
		if (st >= 0 || st == -pte_eos)
			break;
		c->errors++;
		if (pt_blk_get_offset(dec, &off) < 0 || off == last)
			break;
		last = off;
	}
	pt_blk_free_decoder(dec);
}

int
main(int argc, char **argv)
{
	const char *tpath = NULL, *apath = NULL, *dpath = NULL;
	uint64_t lo = 0, hi = 0;
	size_t tlen, alen, dlen, i, j;
	uint8_t *trace, *addrs;
	struct pt_image_section_cache *isc;
	struct pt_image *img;
	struct pt_config cfg;
	struct counts c;
	struct timespec t0, t1;
	int opt, runs = 1, r, coalesce = 0;
	double best = 1e9;

	while ((opt = getopt(argc, argv, "a:cd:f:n:t:")) != -1) {
		switch (opt) {
		case 'a': apath = optarg; break;
		case 'c': coalesce = 1; break;
		case 'd': dpath = optarg; break;
		case 'f':
			if (sscanf(optarg, "%li-%li", (long *)&lo,
			    (long *)&hi) != 2)
				return 2;
			break;
		case 'n': runs = atoi(optarg); break;
		case 't': tpath = optarg; break;
		default: return 2;
		}
	}
	if (tpath == NULL || apath == NULL || dpath == NULL || runs < 1) {
		fprintf(stderr, "usage: ipt-loop [-c] -t trace -a addr -d dump "
		    "[-f lo-hi] [-n runs]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	trace = slurp(tpath, &tlen);
	addrs = slurp(apath, &alen);
	if (trace == NULL || addrs == NULL) {
		fprintf(stderr, "ipt-loop: cannot read input: %s\n",
		    strerror(errno));
		return 1;
	}
	free(slurp(dpath, &dlen));
	isc = pt_iscache_alloc(NULL);
	img = pt_image_alloc(NULL);
	/* -c: a run of pages at consecutive addresses is one section */
	for (i = 0; i + 8 <= alen; i = j) {
		uint64_t a = page_addr(addrs, i);
		int isid;

		for (j = i + 8; coalesce && j + 8 <= alen &&
		    page_addr(addrs, j) == a + (j - i) / 8 * 4096; j += 8)
			;
		isid = pt_iscache_add_file(isc, dpath, (i / 8) * 4096,
		    (j - i) / 8 * 4096, a);
		if (isid < 0 || pt_image_add_cached(img, isc, isid, NULL) < 0) {
			fprintf(stderr, "ipt-loop: cannot map page %zu\n", i / 8);
			return 1;
		}
	}
	pt_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + tlen;
	if (hi > lo) {
		cfg.addr_filter.config.ctl.addr0_cfg = 1;
		cfg.addr_filter.addr0_a = lo;
		cfg.addr_filter.addr0_b = hi;
	}
	for (r = 0; r < runs; r++) {
		double s;

		if (r > 0)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		memset(&c, 0, sizeof(c));
		decode(&cfg, img, &c);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (s < best)
			best = s;
	}
	printf("instructions: %llu\nblocks: %llu\nevents: %llu\nerrors: %llu\n"
	    "seconds: %.6f\n", (unsigned long long)c.insns,
	    (unsigned long long)c.blocks, (unsigned long long)c.events,
	    (unsigned long long)c.errors, best);
	pt_image_free(img);
	pt_iscache_free(isc);
	free(trace);
	free(addrs);
	return 0;
}
