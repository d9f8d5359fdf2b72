/*
 * dconf-probe: the dconf side of `make bench` (Sources/DefaultsBench/DconfPeer.swift drives it).
 *
 * dconf's client library is C, so its half of the comparison is measured by this small program
 * built against libdconf, never by a second implementation of dconf's protocol. It talks to
 * whatever dconf-service the session bus in DBUS_SESSION_BUS_ADDRESS starts, and prints one
 * number per line (nanoseconds, or a count) for the benchmark to summarise.
 *
 *   dconf-probe service-pid                  the PIDs of dconf-service and of the bus daemon
 *   dconf-probe write-sync PATH COUNT        COUNT write_sync round trips to PATH, one latency each
 *   dconf-probe write-for PATH START END     write_sync to PATH from START until END
 *                                            (CLOCK_MONOTONIC ns), then the number done
 *   dconf-probe events PATH WATCHERS COUNT   COUNT writes to PATH, each the latency until the last
 *                                            of WATCHERS watcher processes has seen it
 *
 * Built by the Makefile: cc -O2 bench/dconf-probe.c $(pkg-config --cflags --libs dconf)
 */
#include <dconf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void write_sync(DConfClient *client, const char *key, int64_t value) {
    GError *error = NULL;
    if (!dconf_client_write_sync(client, key, g_variant_new_int64(value), NULL, NULL, &error)) {
        fprintf(stderr, "dconf-probe: write_sync %s: %s\n", key, error->message);
        exit(1);
    }
}

static uint32_t bus_pid(GDBusConnection *bus, const char *name) {
    GVariant *reply = g_dbus_connection_call_sync(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
        g_variant_new("(s)", name), G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
    if (reply == NULL) return 0;
    uint32_t pid;
    g_variant_get(reply, "(u)", &pid);
    g_variant_unref(reply);
    return pid;
}

/* One watcher process: on each change it writes the time it saw it to `report`. */
static int report_fd;
static void changed(DConfClient *client, const gchar *prefix, const gchar *const *changes, const gchar *tag, gpointer data) {
    int64_t seen = now_ns();
    if (write(report_fd, &seen, sizeof seen) != sizeof seen) exit(1);
}

static void watcher(const char *path, int ready, int report) {
    report_fd = report;
    DConfClient *client = dconf_client_new();
    g_signal_connect(client, "changed", G_CALLBACK(changed), NULL);
    dconf_client_watch_sync(client, path);
    char byte = 1;
    if (write(ready, &byte, 1) != 1) exit(1);
    g_main_loop_run(g_main_loop_new(NULL, FALSE));
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "service-pid") == 0) {
        DConfClient *client = dconf_client_new();
        write_sync(client, "/bench/start", 0); /* starts dconf-service by activation */
        GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
        printf("%u\n%u\n", bus_pid(bus, "ca.desrt.dconf"), bus_pid(bus, "org.freedesktop.DBus"));
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "write-sync") == 0) {
        DConfClient *client = dconf_client_new();
        long count = atol(argv[3]);
        for (long i = 0; i < count; i++) {
            int64_t start = now_ns();
            write_sync(client, argv[2], i);
            printf("%lld\n", (long long)(now_ns() - start));
        }
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "write-for") == 0) {
        DConfClient *client = dconf_client_new();
        int64_t start = atoll(argv[3]), end = atoll(argv[4]);
        write_sync(client, argv[2], -1); /* the connection is set up before the clock */
        while (now_ns() < start) usleep(100);
        long done = 0;
        while (now_ns() < end) write_sync(client, argv[2], done++);
        printf("%ld\n", done);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "events") == 0) {
        const char *path = argv[2];
        int watchers = atoi(argv[3]);
        long count = atol(argv[4]);
        int ready[2], report[2];
        if (pipe(ready) != 0 || pipe(report) != 0) return 1;
        pid_t *children = calloc(watchers, sizeof(pid_t));
        for (int w = 0; w < watchers; w++) {
            children[w] = fork();
            if (children[w] == 0) watcher(path, ready[1], report[1]);
        }
        for (int w = 0; w < watchers; w++) {
            char byte;
            if (read(ready[0], &byte, 1) != 1) return 1;
        }
        char key[512];
        snprintf(key, sizeof key, "%sk", path);
        DConfClient *client = dconf_client_new();
        for (long i = 0; i < count; i++) {
            int64_t start = now_ns(), last = 0;
            write_sync(client, key, i);
            for (int w = 0; w < watchers; w++) {
                int64_t seen;
                if (read(report[0], &seen, sizeof seen) != sizeof seen) return 1;
                if (seen > last) last = seen;
            }
            printf("%lld\n", (long long)(last - start));
        }
        for (int w = 0; w < watchers; w++) kill(children[w], SIGTERM);
        for (int w = 0; w < watchers; w++) waitpid(children[w], NULL, 0);
        return 0;
    }
    fprintf(stderr, "usage: dconf-probe service-pid | write-sync PATH COUNT | write-for PATH START END | events PATH WATCHERS COUNT\n");
    return 2;
}
