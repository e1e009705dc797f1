/* SPDX-License-Identifier: MIT */
/* mt-decode: placeholder main until its issue lands. */
#include <stdio.h>

int
main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "mt-decode: not implemented yet\n");
	return 1;
}
