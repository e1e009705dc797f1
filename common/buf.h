/* SPDX-License-Identifier: MIT */
/*
 * Bounded little-endian cursor over untrusted bytes (struct mt_buf), and a
 * growable output byte buffer (struct mt_wbuf).  Every get checks the
 * remaining length first and advances only on success.
 */
#ifndef MT_BUF_H
#define MT_BUF_H

#include <stddef.h>
#include <stdint.h>

struct mt_buf {
	const uint8_t *p;	/* next unread byte; not owned */
	size_t len;		/* bytes left from p */
	size_t off;		/* bytes consumed since init (for messages) */
};

void mt_buf_init(struct mt_buf *b, const void *p, size_t len);

/* Each returns 0, or -MT_E_TRUNC (and leaves @b unchanged) on short input. */
int mt_buf_get_u8(struct mt_buf *b, uint8_t *v);
int mt_buf_get_u16le(struct mt_buf *b, uint16_t *v);
int mt_buf_get_u32le(struct mt_buf *b, uint32_t *v);
int mt_buf_get_u64le(struct mt_buf *b, uint64_t *v);
/* Points @v at the next @n bytes inside the buffer (no copy). */
int mt_buf_get_bytes(struct mt_buf *b, size_t n, const uint8_t **v);
int mt_buf_skip(struct mt_buf *b, size_t n);
/*
 * LEB128 (DWARF 5 section 7.6).  A value that does not fit in 64 bits
 * returns -MT_E_CORRUPT, one cut short -MT_E_TRUNC; both leave @b
 * unchanged.
 */
int mt_buf_get_uleb128(struct mt_buf *b, uint64_t *v);
int mt_buf_get_sleb128(struct mt_buf *b, int64_t *v);

/* Decode little-endian integers from @p (caller checked the length). */
uint16_t mt_le16(const uint8_t *p);
uint32_t mt_le32(const uint8_t *p);
uint64_t mt_le64(const uint8_t *p);
void mt_put_le16(uint8_t *p, uint16_t v);
void mt_put_le32(uint8_t *p, uint32_t v);
void mt_put_le64(uint8_t *p, uint64_t v);

struct mt_wbuf {
	uint8_t *p;	/* bytes; owned, realloc'd */
	size_t len;	/* bytes used */
	size_t cap;	/* bytes allocated */
	int err;	/* sticky: -MT_E_NOMEM after a failed growth */
};

void mt_wbuf_init(struct mt_wbuf *w);
void mt_wbuf_release(struct mt_wbuf *w);
/* Appenders never fail individually; check w->err once at the end. */
void mt_wbuf_put(struct mt_wbuf *w, const void *p, size_t n);
void mt_wbuf_u8(struct mt_wbuf *w, uint8_t v);
void mt_wbuf_u16le(struct mt_wbuf *w, uint16_t v);
void mt_wbuf_u32le(struct mt_wbuf *w, uint32_t v);
void mt_wbuf_u64le(struct mt_wbuf *w, uint64_t v);

#endif /* MT_BUF_H */
