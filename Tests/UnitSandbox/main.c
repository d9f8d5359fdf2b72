// Runs a command under the seccomp sandbox a systemd unit asks for, for the tests that run the
// daemon as its user unit would, on machines without a systemd manager to apply it
// (`systemd-run --user -p …` needs one). The test reads the unit's properties and passes them
// here; this program applies each as systemd does (src/shared/seccomp-util.c), then execs.
//
//   defaultsd-unit-sandbox [--families AF_UNIX,AF_INET,…] [--syscalls name,name,…] [--errno N] [--umask 0077]
//                          [--memory-deny-write-execute] [--restrict-namespaces]
//                          [--restrict-realtime] [--restrict-suid-sgid] [--lock-personality]
//                          -- command [arguments…]
//
// Written in C with libseccomp, loaded at run time (Debian installs its library with systemd but
// not its header): libseccomp turns syscall names into numbers and compares 64-bit arguments,
// which hand-written BPF would have to repeat.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

// libseccomp's ABI (seccomp.h), stable since 2.x.
typedef void *scmp_filter_ctx;
enum scmp_compare { SCMP_CMP_NE = 1, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_GT, SCMP_CMP_MASKED_EQ };
struct scmp_arg_cmp { unsigned int arg; enum scmp_compare op; uint64_t datum_a; uint64_t datum_b; };
#define SCMP_ACT_ALLOW 0x7fff0000U
#define SCMP_ACT_ERRNO(x) (0x00050000U | ((x) & 0x0000ffffU))

static scmp_filter_ctx (*seccomp_init)(uint32_t);
static int (*seccomp_rule_add_array)(scmp_filter_ctx, uint32_t, int, unsigned int, const struct scmp_arg_cmp *);
static int (*seccomp_load)(scmp_filter_ctx);
static int (*seccomp_syscall_resolve_name)(const char *);

static void fail(const char *what) {
    fprintf(stderr, "defaultsd-unit-sandbox: %s\n", what);
    exit(70);
}

static void load_libseccomp(void) {
    void *library = dlopen("libseccomp.so.2", RTLD_NOW);
    if (!library) fail(dlerror());
    seccomp_init = dlsym(library, "seccomp_init");
    seccomp_rule_add_array = dlsym(library, "seccomp_rule_add_array");
    seccomp_load = dlsym(library, "seccomp_load");
    seccomp_syscall_resolve_name = dlsym(library, "seccomp_syscall_resolve_name");
    if (!seccomp_init || !seccomp_rule_add_array || !seccomp_load || !seccomp_syscall_resolve_name) fail("libseccomp lacks a function");
}

// Adds a rule on a syscall by name; a syscall this architecture lacks is skipped, as systemd does.
static void rule(scmp_filter_ctx filter, uint32_t action, const char *name, unsigned count, const struct scmp_arg_cmp *arguments) {
    int number = seccomp_syscall_resolve_name(name);
    if (number < 0) return;
    if (seccomp_rule_add_array(filter, action, number, count, arguments) < 0) {
        fprintf(stderr, "defaultsd-unit-sandbox: cannot add a rule for %s\n", name);
        exit(70);
    }
}

static void load(scmp_filter_ctx filter) {
    if (seccomp_load(filter) < 0) fail("cannot load a seccomp filter");
}

static int family_number(const char *name) {
    static const struct { const char *name; int number; } families[] = {
        {"AF_UNIX", AF_UNIX}, {"AF_LOCAL", AF_LOCAL}, {"AF_INET", AF_INET}, {"AF_INET6", AF_INET6},
        {"AF_NETLINK", AF_NETLINK}, {"AF_PACKET", AF_PACKET},
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].name, name) == 0) return families[i].number;
    fprintf(stderr, "defaultsd-unit-sandbox: unknown address family %s\n", name);
    exit(64);
}

// RestrictAddressFamilies=: socket() of any other family fails with EAFNOSUPPORT.
static void restrict_families(char *list) {
    int allowed[AF_MAX] = {0};
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) allowed[family_number(name)] = 1;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    for (int family = 0; family < AF_MAX; family++) {
        if (allowed[family]) continue;
        struct scmp_arg_cmp equal = {0, SCMP_CMP_EQ, (uint64_t)family, 0};
        rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &equal);
    }
    struct scmp_arg_cmp beyond = {0, SCMP_CMP_GE, AF_MAX, 0};
    rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &beyond);
    load(filter);
}

// SystemCallFilter= (an allow-list, groups already expanded) with SystemCallErrorNumber=.
static void allow_only(char *list, int error) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ERRNO(error));
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) rule(filter, SCMP_ACT_ALLOW, name, 0, NULL);
    load(filter);
}

// MemoryDenyWriteExecute=: no mapping both writable and executable, none made executable later.
static void deny_write_execute(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    struct scmp_arg_cmp write_and_execute = {2, SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC};
    rule(filter, SCMP_ACT_ERRNO(EPERM), "mmap", 1, &write_and_execute);
    struct scmp_arg_cmp execute = {2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC};
    rule(filter, SCMP_ACT_ERRNO(EPERM), "mprotect", 1, &execute);
    rule(filter, SCMP_ACT_ERRNO(EPERM), "pkey_mprotect", 1, &execute);
    struct scmp_arg_cmp shared_execute = {2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC};
    rule(filter, SCMP_ACT_ERRNO(EPERM), "shmat", 1, &shared_execute);
    load(filter);
}

// RestrictNamespaces=yes: no new namespace by clone, unshare or setns (clone3 hides its flags,
// so it answers ENOSYS and the C library falls back to clone).
static void restrict_namespaces(void) {
    static const uint64_t kinds[] = {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct scmp_arg_cmp kind = {0, SCMP_CMP_MASKED_EQ, kinds[i], kinds[i]};
        rule(filter, SCMP_ACT_ERRNO(EPERM), "clone", 1, &kind);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "unshare", 1, &kind);
    }
    rule(filter, SCMP_ACT_ERRNO(EPERM), "setns", 0, NULL);
    rule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
    load(filter);
}

// RestrictRealtime=: no real-time scheduling policy.
static void restrict_realtime(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    static const uint64_t policies[] = {SCHED_FIFO, SCHED_RR, 6 /* SCHED_DEADLINE */};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        struct scmp_arg_cmp policy = {1, SCMP_CMP_EQ, policies[i], 0};
        rule(filter, SCMP_ACT_ERRNO(EPERM), "sched_setscheduler", 1, &policy);
    }
    load(filter);
}

// RestrictSUIDSGID=: no file made set-user-ID or set-group-ID.
static void restrict_suid_sgid(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    static const uint64_t bits[] = {S_ISUID, S_ISGID};
    for (size_t i = 0; i < 2; i++) {
        struct scmp_arg_cmp second = {1, SCMP_CMP_MASKED_EQ, bits[i], bits[i]};
        struct scmp_arg_cmp third = {2, SCMP_CMP_MASKED_EQ, bits[i], bits[i]};
        rule(filter, SCMP_ACT_ERRNO(EPERM), "chmod", 1, &second);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "fchmod", 1, &second);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "fchmodat", 1, &third);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "open", 1, &third);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "creat", 1, &second);
        struct scmp_arg_cmp fourth = {3, SCMP_CMP_MASKED_EQ, bits[i], bits[i]};
        rule(filter, SCMP_ACT_ERRNO(EPERM), "openat", 1, &fourth);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "mknodat", 1, &third);
        rule(filter, SCMP_ACT_ERRNO(EPERM), "mknod", 1, &second);
    }
    load(filter);
}

// LockPersonality=: the execution domain stays PER_LINUX; any other call is refused, as systemd
// refuses it.
static void lock_personality(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    struct scmp_arg_cmp other = {0, SCMP_CMP_NE, 0 /* PER_LINUX */, 0};
    rule(filter, SCMP_ACT_ERRNO(EPERM), "personality", 1, &other);
    load(filter);
}

int main(int argc, char **argv) {
    load_libseccomp();
    // NoNewPrivileges=: also what lets an unprivileged process load a filter.
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("cannot set no_new_privs");
    char *families = NULL, *syscalls = NULL;
    int error = EPERM;
    int index = 1;
    for (; index < argc && strcmp(argv[index], "--") != 0; index++) {
        const char *option = argv[index];
        if (strcmp(option, "--families") == 0 && index + 1 < argc) families = argv[++index];
        else if (strcmp(option, "--syscalls") == 0 && index + 1 < argc) syscalls = argv[++index];
        else if (strcmp(option, "--errno") == 0 && index + 1 < argc) error = atoi(argv[++index]);
        else if (strcmp(option, "--umask") == 0 && index + 1 < argc) umask((mode_t)strtol(argv[++index], NULL, 8));
        else if (strcmp(option, "--memory-deny-write-execute") == 0) deny_write_execute();
        else if (strcmp(option, "--restrict-namespaces") == 0) restrict_namespaces();
        else if (strcmp(option, "--restrict-realtime") == 0) restrict_realtime();
        else if (strcmp(option, "--restrict-suid-sgid") == 0) restrict_suid_sgid();
        else if (strcmp(option, "--lock-personality") == 0) lock_personality();
        else {
            fprintf(stderr, "defaultsd-unit-sandbox: unknown option %s\n", option);
            return 64;
        }
    }
    if (index + 1 >= argc) {
        fprintf(stderr, "usage: defaultsd-unit-sandbox [options] -- command [arguments]\n");
        return 64;
    }
    if (families) restrict_families(families);
    // Last: the allow-list must still let the other filters load.
    if (syscalls) allow_only(syscalls, error);
    execv(argv[index + 1], argv + index + 1);
    perror("defaultsd-unit-sandbox: exec");
    return 127;
}
