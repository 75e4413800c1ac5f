// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sandbox_exec - the seccomp part of rtsnapd.service's sandbox, for machines where systemd
 * cannot run the unit (tests/integration/pkg_sandbox.t). Not a test by itself.
 *
 *   sandbox_exec SYSCALLS-FILE FAMILIES -- CMD [ARG...]
 *
 * SYSCALLS-FILE: the names allowed, one per line (the test computes them with
 * `systemd-analyze syscall-filter` from the unit's SystemCallFilter= lines); every other
 * system call fails with EPERM (SystemCallErrorNumber=EPERM). FAMILIES: comma-separated
 * address family numbers socket() may create (RestrictAddressFamilies=). Also, as systemd
 * does: MemoryDenyWriteExecute= (no mapping both writable and executable, no mprotect to
 * executable), RestrictNamespaces= (clone/unshare without CLONE_NEW*, no setns), and
 * SystemCallArchitectures=native (libseccomp's default: other ABIs are killed). The caller
 * must have set no_new_privs (setpriv --no-new-privs).
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NS_FLAGS                                                                                   \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |                \
	 CLONE_NEWNET | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */)

static int special(const char *name)
{
	static const char *const s[] = { "socket", "mmap", "mprotect", "pkey_mprotect", "clone",
					 "unshare", "setns", "clone3", NULL };

	for (int i = 0; s[i]; i++)
		if (strcmp(s[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	char line[128], *fam, *save = NULL;
	FILE *f;
	int n = 0, rc = 0;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: sandbox_exec SYSCALLS-FILE FAMILIES -- CMD [ARG...]\n");
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	f = fopen(argv[1], "r");
	if (!ctx || !f) {
		perror("sandbox_exec");
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		int nr;

		line[strcspn(line, "\n")] = 0;
		if (!line[0] || special(line))
			continue;
		nr = seccomp_syscall_resolve_name(line);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		n++;
	}
	fclose(f);
	for (fam = strtok_r(argv[2], ",", &save); fam; fam = strtok_r(NULL, ",", &save))
		rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)atoi(fam)));
	/* MemoryDenyWriteExecute: W without X, X without W, or neither */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, 0));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_EXEC));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
			       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pkey_mprotect), 1,
			       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* RestrictNamespaces: threads yes, namespaces no; clone3 hides its flags: ENOSYS makes
	 * glibc fall back to clone (what systemd does too) */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0));
	if (rc || n < 100) {
		fprintf(stderr, "sandbox_exec: cannot build the filter (%d system calls)\n", n);
		return 2;
	}
	if (seccomp_load(ctx)) {
		perror("sandbox_exec: seccomp_load");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[4], argv + 4);
	perror("sandbox_exec: exec");
	return 127;
}
