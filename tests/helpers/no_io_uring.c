// SPDX-License-Identifier: MIT
/*
 * no_io_uring: run a program where io_uring is refused, as under a
 * container's seccomp policy.
 *
 *   no_io_uring PROGRAM [ARG]...
 *
 * Installs a seccomp filter (raw BPF, no libseccomp) that makes
 * io_uring_setup, io_uring_enter and io_uring_register fail with EPERM and
 * allows everything else, then execs PROGRAM. The filter is inherited
 * across exec and by every thread. Exit 2 when the filter cannot be
 * installed, 127 when PROGRAM cannot be run.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/exit.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#else
#error "no_io_uring: add this architecture's AUDIT_ARCH"
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif

#define DENY(nr)                                                               \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                       \
		BPF_STMT(BPF_RET | BPF_K,                                      \
			 SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		/* another architecture's calls (x32, compat): let them be */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		DENY(__NR_io_uring_setup),
		DENY(__NR_io_uring_enter),
		DENY(__NR_io_uring_register),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
		.filter = filter,
	};

	if (argc < 2) {
		fprintf(stderr, "usage: no_io_uring PROGRAM [ARG]...\n");
		return EXIT_USAGE;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "no_io_uring: PR_SET_NO_NEW_PRIVS: %s\n",
			strerror(errno));
		return EXIT_USAGE;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		fprintf(stderr, "no_io_uring: PR_SET_SECCOMP: %s\n",
			strerror(errno));
		return EXIT_USAGE;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no_io_uring: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
