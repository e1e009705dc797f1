/* SPDX-License-Identifier: MIT */
/* Bounded reads of little-endian data and a growable write buffer. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

void
mt_buf_init(struct mt_buf *b, const void *p, size_t len)
{
	b->p = p;
	b->len = len;
	b->off = 0;
}

uint16_t
mt_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

uint32_t
mt_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t
mt_le64(const uint8_t *p)
{
	return (uint64_t)mt_le32(p) | (uint64_t)mt_le32(p + 4) << 32;
}

void
mt_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void
mt_put_le32(uint8_t *p, uint32_t v)
{
	mt_put_le16(p, (uint16_t)v);
	mt_put_le16(p + 2, (uint16_t)(v >> 16));
}

void
mt_put_le64(uint8_t *p, uint64_t v)
{
	mt_put_le32(p, (uint32_t)v);
	mt_put_le32(p + 4, (uint32_t)(v >> 32));
}

int
mt_buf_get_bytes(struct mt_buf *b, size_t n, const uint8_t **v)
{
	if (n > b->len)
		return -MT_E_TRUNC;
	*v = b->p;
	b->p += n;
	b->len -= n;
	b->off += n;
	return 0;
}

int
mt_buf_skip(struct mt_buf *b, size_t n)
{
	const uint8_t *p;

	return mt_buf_get_bytes(b, n, &p);
}

/*
 * Reads one LEB128 number into *@v.  Padding bytes past bit 63 may only repeat what a 64-bit value
 * holds there: 0x00 or 0x80 for unsigned, 0x7f/0xff too for signed.
 */
static int
get_leb128(struct mt_buf *b, int is_signed, uint64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	size_t i;
	uint8_t c, hi;

	for (i = 0; i < b->len; i++) {
		c = b->p[i];
		hi = shift == 63 ? (uint8_t)(c & 0x7e) : (uint8_t)(c & 0x7f);
		if (shift >= 63 && hi != 0 &&
		    (!is_signed || hi != (shift == 63 ? 0x7e : 0x7f)))
			return -MT_E_CORRUPT;	/* more than 64 bits */
		if (shift < 64)
			r |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if ((c & 0x80) == 0) {
			if (is_signed && shift < 64 && (c & 0x40) != 0)
				r |= ~(uint64_t)0 << shift;
			*v = r;
			return mt_buf_skip(b, i + 1);
		}
	}
	return -MT_E_TRUNC;
}

int
mt_buf_get_uleb128(struct mt_buf *b, uint64_t *v)
{
	return get_leb128(b, 0, v);
}

int
mt_buf_get_sleb128(struct mt_buf *b, int64_t *v)
{
	uint64_t r;
	int rc = get_leb128(b, 1, &r);

	if (rc == 0)
		*v = (int64_t)r;
	return rc;
}

int
mt_buf_get_u8(struct mt_buf *b, uint8_t *v)
{
	const uint8_t *p;

	if (mt_buf_get_bytes(b, 1, &p) < 0)
		return -MT_E_TRUNC;
	*v = p[0];
	return 0;
}

int
mt_buf_get_u16le(struct mt_buf *b, uint16_t *v)
{
	const uint8_t *p;

	if (mt_buf_get_bytes(b, 2, &p) < 0)
		return -MT_E_TRUNC;
	*v = mt_le16(p);
	return 0;
}

int
mt_buf_get_u32le(struct mt_buf *b, uint32_t *v)
{
	const uint8_t *p;

	if (mt_buf_get_bytes(b, 4, &p) < 0)
		return -MT_E_TRUNC;
	*v = mt_le32(p);
	return 0;
}

int
mt_buf_get_u64le(struct mt_buf *b, uint64_t *v)
{
	const uint8_t *p;

	if (mt_buf_get_bytes(b, 8, &p) < 0)
		return -MT_E_TRUNC;
	*v = mt_le64(p);
	return 0;
}

void
mt_wbuf_init(struct mt_wbuf *w)
{
	memset(w, 0, sizeof(*w));
}

void
mt_wbuf_release(struct mt_wbuf *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

void
mt_wbuf_put(struct mt_wbuf *w, const void *p, size_t n)
{
	if (w->err || n == 0)
		return;
	if (n > w->cap - w->len) {
		size_t cap = w->cap ? w->cap : 256;
		uint8_t *np;

		while (cap - w->len < n) {
			if (cap > SIZE_MAX / 2) {
				w->err = -MT_E_NOMEM;
				return;
			}
			cap *= 2;
		}
		np = realloc(w->p, cap);
		if (np == NULL) {
			w->err = -MT_E_NOMEM;
			return;
		}
		w->p = np;
		w->cap = cap;
	}
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

void
mt_wbuf_u8(struct mt_wbuf *w, uint8_t v)
{
	mt_wbuf_put(w, &v, 1);
}

void
mt_wbuf_u16le(struct mt_wbuf *w, uint16_t v)
{
	uint8_t b[2];

	mt_put_le16(b, v);
	mt_wbuf_put(w, b, sizeof(b));
}

void
mt_wbuf_u32le(struct mt_wbuf *w, uint32_t v)
{
	uint8_t b[4];

	mt_put_le32(b, v);
	mt_wbuf_put(w, b, sizeof(b));
}

void
mt_wbuf_u64le(struct mt_wbuf *w, uint64_t v)
{
	uint8_t b[8];

	mt_put_le64(b, v);
	mt_wbuf_put(w, b, sizeof(b));
}
