/* SPDX-License-Identifier: MIT */
/*
 * Loads a BPF program (a socket filter named "mt_ksym": r0 = 0; exit) so
 * that the kernel JIT-compiles it and announces it with a KSYMBOL record,
 * prints "ADDR NAME LEN" (the address and name /proc/kallsyms lists for
 * its JIT code, the length in hex the kernel gives as jited_prog_len),
 * then keeps it loaded until a byte arrives on the fifo argv[1].  Needs root (or
 * CAP_BPF) and the BPF JIT.  Its own program is the one at the address
 * the kernel gives for it (jited_ksyms): every copy of this program has
 * the same kallsyms name (bpf_prog_TAG_mt_ksym, TAG a hash of the
 * instructions), so another test's copy loaded at the same time must not
 * be taken for it.
 */
#include <linux/bpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct bpf_insn insn[2];
	struct bpf_prog_info info;
	union bpf_attr a;
	char line[512], addr[32], type[8], name[256];
	__u64 ksym = 0;
	FILE *f;
	int fd, ff, found = 0;
	char b;

	if (argc != 2)
		return 2;
	memset(insn, 0, sizeof(insn));
	insn[0].code = BPF_ALU64 | BPF_MOV | BPF_K;	/* r0 = 0 */
	insn[0].dst_reg = BPF_REG_0;
	insn[1].code = BPF_JMP | BPF_EXIT;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)insn;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	strcpy(a.prog_name, "mt_ksym");
	fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0) {
		perror("bpf");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (unsigned)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (unsigned long)&ksym;
	if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0) {
		perror("bpf info");
		return 1;
	}
	if (ksym == 0) {
		fprintf(stderr, "bpf info: no JIT address\n");
		return 1;
	}
	if ((f = fopen("/proc/kallsyms", "r")) == NULL)
		return 1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%31s %7s %255s", addr, type, name) == 3 &&
		    strtoull(addr, NULL, 16) == ksym &&
		    strstr(name, "_mt_ksym") != NULL &&
		    strncmp(name, "bpf_prog_", 9) == 0) {
			printf("%s %s %x\n", addr, name,
			    info.jited_prog_len);
			found = 1;
			break;
		}
	fclose(f);
	fflush(stdout);
	if (!found)
		return 1;
	if ((ff = open(argv[1], O_RDONLY)) < 0 || read(ff, &b, 1) != 1)
		return 1;
	close(fd);
	return 0;
}
