/* The real defaultsd, started by a C test on a private socket and folder. */
#ifndef DEFAULTSD_TEST_DAEMON_H
#define DEFAULTSD_TEST_DAEMON_H

#include <glib.h>

typedef struct {
  GPid pid;
  char *directory;     /* the test's folder: socket, storage, managed, home */
  char *socket_path;
  char *storage;       /* the storage directory: <domain>.plist files */
  char *managed;       /* the managed preferences directory (empty unless the test fills it) */
  GMutex lock;
  GCond grew;
  GString *log;        /* everything the daemon wrote to standard error */
  GThread *drainer;
  int stderr_fd;
} TestDaemon;

/* Starts $DEFAULTSD_BINARY in a new folder, or again in `directory`; returns once it listens. */
TestDaemon *test_daemon_start (const char *directory);
/* SIGTERM, and waits for its end; the folder stays. */
void        test_daemon_stop (TestDaemon *daemon);
/* Stops the daemon and starts it again in the same folder. */
void        test_daemon_restart (TestDaemon *daemon);
/* Stops the daemon if it runs, removes its folder and frees it. */
void        test_daemon_free (TestDaemon *daemon);
/* Waits until the log holds `text`; FALSE after `timeout_ms`. */
gboolean    test_daemon_wait_for_log (TestDaemon *daemon, const char *text, guint timeout_ms);
/* One request on a connection of its own; the answer line, without its newline. */
char       *test_daemon_request (TestDaemon *daemon, const char *line);
/* The environment a client of this daemon runs with. */
char      **test_daemon_environment (TestDaemon *daemon);

/* A stand-in for the daemon, to play one that misbehaves: it listens on `socket` in a new folder
 * (the folder a TestDaemon can later be started in), and the test accepts, reads and answers
 * each connection itself. */
typedef struct {
  char *directory;
  char *socket_path;
  int listener;        /* -1 once closed */
} FakeDaemon;

FakeDaemon *fake_daemon_new (void);
/* The next connection, or -1 after `timeout_ms`. */
int         fake_daemon_accept (FakeDaemon *fake, guint timeout_ms);
/* Stops listening and removes the socket: a real daemon can take the folder. */
void        fake_daemon_close (FakeDaemon *fake);
/* Closes it if it listens, removes its folder and frees it. */
void        fake_daemon_free (FakeDaemon *fake);
/* The next line of a connection, without its newline; NULL at its end or after `timeout_ms`
 * without a byte. */
char       *fake_connection_read_line (int fd, guint timeout_ms);
/* Writes `line` and a newline; FALSE when the other side is gone. */
gboolean    fake_connection_write_line (int fd, const char *line);

#endif
