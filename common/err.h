/* SPDX-License-Identifier: MIT */
/*
 * Error codes shared by every mt module.  Functions return >= 0 on success
 * and -MT_E_* on failure; mt_strerror() gives the text.  MT_EOS is a status,
 * not an error: a clean end of input.
 */
#ifndef MT_ERR_H
#define MT_ERR_H

#define MT_EOS 1	/* clean end of input (a status, returned as +1) */

enum mt_errcode {
	MT_E_OK = 0,
	MT_E_INVAL,	/* invalid argument (misuse) */
	MT_E_NOMEM,	/* out of memory */
	MT_E_IO,	/* read or write failed; see errno */
	MT_E_TRUNC,	/* input ends inside a record */
	MT_E_MAGIC,	/* not the expected file type */
	MT_E_VERSION,	/* format version not supported */
	MT_E_CHECKSUM,	/* checksum mismatch */
	MT_E_CORRUPT,	/* a field has an impossible value */
	MT_E_SYNTAX,	/* malformed text line or field */
	MT_E_UNSUPP,	/* valid but not supported (e.g. required feature) */
	MT_E_NOTFOUND,	/* no such item */
	MT_E_LIMIT,	/* a size or count limit was reached */
	MT_E_ELF,	/* libelf/libdw failure; see the object's errmsg */
	MT_E_IPT,	/* libipt failure */
	MT_E_SYS,	/* system call failed; see errno */
	MT_E_PERM,	/* permission denied */
	MT_E_NOPMU,	/* a needed PMU is not available */
	MT_E_ISDIR,	/* a file was wanted, a directory is there */
	MT_E_MAX
};

/* Static text for @rc (negative or positive code); never NULL. */
const char *mt_strerror(int rc);

#endif /* MT_ERR_H */
