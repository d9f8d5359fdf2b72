/*
 * gsettings-probe: a GSettings program, for the GSettings part of `make bench`
 * (Sources/DefaultsBench/GSettingsComparison.swift drives it). It uses whatever backend
 * GSETTINGS_BACKEND names, so the same program measures defaultsd's module and dconf's, on the
 * schema org.defaultsd.bench (bench/org.defaultsd.bench.gschema.xml: 20 integers).
 *
 *   gsettings-probe set-to-changed COUNT   COUNT sets of k00, each the ns until a watcher process
 *                                          (its own GSettings) has its changed signal
 *   gsettings-probe get COUNT              ns per g_settings_get_int of a loaded key, over COUNT reads
 *   gsettings-probe start                  opens the schema, reads its 20 keys and exits (timed from outside)
 *   gsettings-probe memory                 the same, then prints its resident memory (VmRSS, KiB)
 *   gsettings-probe backend                the backend's type name, to prove which one ran
 */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA "org.defaultsd.bench"

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int read_all_keys(GSettings *settings) {
    char key[8];
    int sum = 0;
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "k%02d", i);
        sum += g_settings_get_int(settings, key);
    }
    return sum;
}

/* The watcher: on each change of k00 it writes the time it saw it to `report`. */
static int report_fd;
static void changed(GSettings *settings, const char *key, gpointer data) {
    int64_t seen = now_ns();
    if (write(report_fd, &seen, sizeof seen) != sizeof seen) exit(1);
}

static void watcher(int ready, int report) {
    report_fd = report;
    GSettings *settings = g_settings_new(SCHEMA);
    g_signal_connect(settings, "changed::k00", G_CALLBACK(changed), NULL);
    (void)g_settings_get_int(settings, "k00"); /* loaded and watched before the writer starts */
    char byte = 1;
    if (write(ready, &byte, 1) != 1) exit(1);
    g_main_loop_run(g_main_loop_new(NULL, FALSE));
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "set-to-changed") == 0) {
        long count = atol(argv[2]);
        int ready[2], report[2];
        if (pipe(ready) != 0 || pipe(report) != 0) return 1;
        /* Forked before this process touches GLib, so the watcher starts clean. */
        pid_t child = fork();
        if (child == 0) watcher(ready[1], report[1]);
        char byte;
        if (read(ready[0], &byte, 1) != 1) return 1;
        GSettings *settings = g_settings_new(SCHEMA);
        (void)g_settings_get_int(settings, "k00");
        for (long i = 0; i < count; i++) {
            int64_t start = now_ns(), seen;
            g_settings_set_int(settings, "k00", (int)(i % 2 == 0 ? 1000 + i : -1000 - i));
            if (read(report[0], &seen, sizeof seen) != sizeof seen) return 1;
            printf("%lld\n", (long long)(seen - start));
        }
        g_settings_sync();
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "get") == 0) {
        long count = atol(argv[2]);
        GSettings *settings = g_settings_new(SCHEMA);
        volatile int sum = g_settings_get_int(settings, "k01");
        int64_t start = now_ns();
        for (long i = 0; i < count; i++) sum += g_settings_get_int(settings, "k01");
        printf("%.1f\n", (double)(now_ns() - start) / (double)count);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "start") == 0 || strcmp(argv[1], "memory") == 0)) {
        GSettings *settings = g_settings_new(SCHEMA);
        volatile int sum = read_all_keys(settings);
        (void)sum;
        if (strcmp(argv[1], "memory") == 0) {
            char *status = NULL;
            g_file_get_contents("/proc/self/status", &status, NULL, NULL);
            const char *line = status != NULL ? strstr(status, "VmRSS:") : NULL;
            printf("%ld\n", line != NULL ? strtol(line + 6, NULL, 10) : -1L);
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "backend") == 0) {
        GSettingsBackend *backend = g_settings_backend_get_default();
        printf("%s\n", G_OBJECT_TYPE_NAME(backend));
        return 0;
    }
    fprintf(stderr, "usage: gsettings-probe set-to-changed COUNT | get COUNT | start | memory | backend\n");
    return 2;
}
