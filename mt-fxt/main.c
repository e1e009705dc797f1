/* SPDX-License-Identifier: MIT */
/* mt-fxt: placeholder main until its issue lands. */
#include <stdio.h>

int
main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "mt-fxt: not implemented yet\n");
	return 1;
}
