#include "daemon.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static gpointer
drain (gpointer data)
{
  TestDaemon *daemon = data;
  char chunk[4096];
  ssize_t count;
  while ((count = read (daemon->stderr_fd, chunk, sizeof chunk)) > 0 || (count < 0 && errno == EINTR))
    {
      if (count <= 0)
        continue;
      g_mutex_lock (&daemon->lock);
      g_string_append_len (daemon->log, chunk, count);
      g_cond_broadcast (&daemon->grew);
      g_mutex_unlock (&daemon->lock);
    }
  return NULL;
}

char **
test_daemon_environment (TestDaemon *daemon)
{
  g_autofree char *home = g_build_filename (daemon->directory, "home", NULL);
  g_autofree char *config = g_build_filename (home, ".config", NULL);
  g_autofree char *state = g_build_filename (home, ".local", "state", NULL);
  g_autofree char *runtime = g_build_filename (home, "run", NULL);
  char **environment = g_get_environ ();
  environment = g_environ_setenv (environment, "HOME", home, TRUE);
  environment = g_environ_setenv (environment, "XDG_CONFIG_HOME", config, TRUE);
  environment = g_environ_setenv (environment, "XDG_STATE_HOME", state, TRUE);
  environment = g_environ_setenv (environment, "XDG_RUNTIME_DIR", runtime, TRUE);
  environment = g_environ_setenv (environment, "DEFAULTSD_SOCKET", daemon->socket_path, TRUE);
  return environment;
}

/* The daemon ends with the test, even one that aborts. */
static void
die_with_parent (gpointer unused)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static void
launch (TestDaemon *daemon)
{
  const char *binary = g_getenv ("DEFAULTSD_BINARY");
  g_assert_nonnull (binary);
  g_autofree char *machine_id = g_build_filename (daemon->directory, "machine-id", NULL);
  g_assert_true (g_file_set_contents (machine_id, "0123456789abcdef0123456789abcdef\n", -1, NULL));
  g_autofree char *home = g_build_filename (daemon->directory, "home", NULL);
  g_assert_cmpint (g_mkdir_with_parents (home, 0700), ==, 0);
  const char *argv[] = { binary, "--socket", daemon->socket_path, "--storage-dir", daemon->storage, "--managed-dir",
                         daemon->managed, "--machine-id-file", machine_id, NULL };
  g_auto (GStrv) environment = test_daemon_environment (daemon);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, environment, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, die_with_parent, NULL,
                                           &daemon->pid, NULL, NULL, &daemon->stderr_fd, &error));
  g_assert_no_error (error);
  g_mutex_lock (&daemon->lock);
  g_string_truncate (daemon->log, 0);
  g_mutex_unlock (&daemon->lock);
  daemon->drainer = g_thread_new ("daemon-log", drain, daemon);
  g_assert_true (test_daemon_wait_for_log (daemon, " listening", 30000));
}

TestDaemon *
test_daemon_start (const char *directory)
{
  TestDaemon *daemon = g_new0 (TestDaemon, 1);
  daemon->directory = directory != NULL ? g_strdup (directory) : g_dir_make_tmp ("defaultsd-c-test-XXXXXX", NULL);
  g_assert_nonnull (daemon->directory);
  daemon->socket_path = g_build_filename (daemon->directory, "socket", NULL);
  daemon->storage = g_build_filename (daemon->directory, "storage", NULL);
  daemon->managed = g_build_filename (daemon->directory, "managed", NULL);
  g_mkdir_with_parents (daemon->managed, 0755);
  g_mutex_init (&daemon->lock);
  g_cond_init (&daemon->grew);
  daemon->log = g_string_new (NULL);
  launch (daemon);
  return daemon;
}

void
test_daemon_stop (TestDaemon *daemon)
{
  if (daemon->pid == 0)
    return;
  kill (daemon->pid, SIGTERM);
  int status;
  waitpid (daemon->pid, &status, 0);
  g_spawn_close_pid (daemon->pid);
  daemon->pid = 0;
  g_thread_join (daemon->drainer);
  close (daemon->stderr_fd);
}

void
test_daemon_restart (TestDaemon *daemon)
{
  test_daemon_stop (daemon);
  launch (daemon);
}

void
test_daemon_free (TestDaemon *daemon)
{
  test_daemon_stop (daemon);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", daemon->directory);
  g_assert_true (g_spawn_command_line_sync (command, NULL, NULL, NULL, NULL));
  g_string_free (daemon->log, TRUE);
  g_mutex_clear (&daemon->lock);
  g_cond_clear (&daemon->grew);
  g_free (daemon->directory);
  g_free (daemon->socket_path);
  g_free (daemon->storage);
  g_free (daemon->managed);
  g_free (daemon);
}

gboolean
test_daemon_wait_for_log (TestDaemon *daemon, const char *text, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  g_mutex_lock (&daemon->lock);
  gboolean found;
  while (!(found = strstr (daemon->log->str, text) != NULL))
    if (!g_cond_wait_until (&daemon->grew, &daemon->lock, deadline))
      {
        found = strstr (daemon->log->str, text) != NULL;
        break;
      }
  g_mutex_unlock (&daemon->lock);
  return found;
}

char *
test_daemon_request (TestDaemon *daemon, const char *line)
{
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, daemon->socket_path, sizeof address.sun_path);
  g_assert_cmpint (connect (fd, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_autofree char *request = g_strconcat (line, "\n", NULL);
  g_assert_cmpint (write (fd, request, strlen (request)), ==, (gssize) strlen (request));
  GString *answer = g_string_new (NULL);
  char byte;
  struct pollfd readable = { fd, POLLIN, 0 };
  while (poll (&readable, 1, 10000) > 0 && read (fd, &byte, 1) == 1 && byte != '\n')
    g_string_append_c (answer, byte);
  close (fd);
  return g_string_free (answer, FALSE);
}

FakeDaemon *
fake_daemon_new (void)
{
  FakeDaemon *fake = g_new0 (FakeDaemon, 1);
  fake->directory = g_dir_make_tmp ("defaultsd-c-fake-XXXXXX", NULL);
  g_assert_nonnull (fake->directory);
  fake->socket_path = g_build_filename (fake->directory, "socket", NULL);
  fake->listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (fake->listener, >=, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, fake->socket_path, sizeof address.sun_path);
  g_assert_cmpint (bind (fake->listener, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (listen (fake->listener, 64), ==, 0);
  return fake;
}

int
fake_daemon_accept (FakeDaemon *fake, guint timeout_ms)
{
  struct pollfd readable = { fake->listener, POLLIN, 0 };
  int ready;
  do
    ready = poll (&readable, 1, (int) timeout_ms);
  while (ready < 0 && errno == EINTR);
  return ready > 0 ? accept (fake->listener, NULL, NULL) : -1;
}

void
fake_daemon_close (FakeDaemon *fake)
{
  if (fake->listener < 0)
    return;
  close (fake->listener);
  fake->listener = -1;
  unlink (fake->socket_path);
}

void
fake_daemon_free (FakeDaemon *fake)
{
  fake_daemon_close (fake);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", fake->directory);
  g_assert_true (g_spawn_command_line_sync (command, NULL, NULL, NULL, NULL));
  g_free (fake->directory);
  g_free (fake->socket_path);
  g_free (fake);
}

char *
fake_connection_read_line (int fd, guint timeout_ms)
{
  GString *line = g_string_new (NULL);
  for (;;)
    {
      struct pollfd readable = { fd, POLLIN, 0 };
      int ready = poll (&readable, 1, (int) timeout_ms);
      if (ready < 0 && errno == EINTR)
        continue;
      char byte;
      ssize_t count = ready > 0 ? read (fd, &byte, 1) : 0;
      if (count < 0 && errno == EINTR)
        continue;
      if (count <= 0)
        {
          g_string_free (line, TRUE);
          return NULL;
        }
      if (byte == '\n')
        return g_string_free (line, FALSE);
      g_string_append_c (line, byte);
    }
}

gboolean
fake_connection_write_line (int fd, const char *line)
{
  g_autofree char *text = g_strconcat (line, "\n", NULL);
  size_t length = strlen (text);
  size_t written = 0;
  while (written < length)
    {
      ssize_t count = send (fd, text + written, length - written, MSG_NOSIGNAL);
      if (count < 0 && errno == EINTR)
        continue;
      if (count <= 0)
        return FALSE;
      written += (size_t) count;
    }
  return TRUE;
}
