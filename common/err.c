/* SPDX-License-Identifier: MIT */
/* Error texts for the codes in err.h. */
#include <stddef.h>

#include "err.h"

static const char *const msgs[MT_E_MAX] = {
	[MT_E_OK] = "success",
	[MT_E_INVAL] = "invalid argument",
	[MT_E_NOMEM] = "out of memory",
	[MT_E_IO] = "input/output error",
	[MT_E_TRUNC] = "truncated input",
	[MT_E_MAGIC] = "bad magic number",
	[MT_E_VERSION] = "unsupported format version",
	[MT_E_CHECKSUM] = "checksum mismatch",
	[MT_E_CORRUPT] = "corrupt data",
	[MT_E_SYNTAX] = "syntax error",
	[MT_E_UNSUPP] = "unsupported feature",
	[MT_E_NOTFOUND] = "not found",
	[MT_E_LIMIT] = "limit exceeded",
	[MT_E_ELF] = "ELF or DWARF error",
	[MT_E_IPT] = "Intel PT decoder error",
	[MT_E_SYS] = "system call failed",
	[MT_E_PERM] = "permission denied",
	[MT_E_NOPMU] = "PMU not available",
	[MT_E_ISDIR] = "is a directory",
};

const char *
mt_strerror(int rc)
{
	if (rc == MT_EOS)
		return "end of stream";
	if (rc < 0)
		rc = -rc;
	if (rc >= MT_E_MAX || msgs[rc] == NULL)
		return "unknown error";
	return msgs[rc];
}
