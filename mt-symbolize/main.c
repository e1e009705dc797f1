/* SPDX-License-Identifier: MIT */
/* mt-symbolize: placeholder main until its issue lands. */
#include <stdio.h>

int
main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "mt-symbolize: not implemented yet\n");
	return 1;
}
