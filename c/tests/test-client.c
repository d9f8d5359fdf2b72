/* libdefaultsd against the real daemon: the cache, events, every dispatch mode, errors, a
 * missing daemon, and reconnection after a restart; and against stand-ins that misbehave (a
 * daemon that stops while writes are on their way, one that closes right after `hello`, a load
 * answered behind a flood of events). */
#include "daemon.h"
#include "defaultsd.h"

#include <glib/gstdio.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>

#define DOMAIN "com.example.c"

typedef struct {
  GMutex lock;
  GCond told;
  GPtrArray *changes;   /* "domain key origin" */
  guint connects, disconnects;
} Recorder;

static void
record_change (DefaultsClient *client, const char *domain, const char *const *keys, DefaultsOrigin origin, gpointer data)
{
  Recorder *recorder = data;
  g_mutex_lock (&recorder->lock);
  for (const char *const *key = keys; *key != NULL; key++)
    g_ptr_array_add (recorder->changes, g_strdup_printf ("%s %s %d", domain, *key, origin));
  g_cond_broadcast (&recorder->told);
  g_mutex_unlock (&recorder->lock);
}

static void
record_connection (DefaultsClient *client, gboolean connected, gpointer data)
{
  Recorder *recorder = data;
  g_mutex_lock (&recorder->lock);
  if (connected)
    recorder->connects++;
  else
    recorder->disconnects++;
  g_cond_broadcast (&recorder->told);
  g_mutex_unlock (&recorder->lock);
}

static Recorder *
recorder_new (void)
{
  Recorder *recorder = g_new0 (Recorder, 1);
  g_mutex_init (&recorder->lock);
  g_cond_init (&recorder->told);
  recorder->changes = g_ptr_array_new_with_free_func (g_free);
  return recorder;
}

static void
recorder_free (Recorder *recorder)
{
  g_ptr_array_unref (recorder->changes);
  g_mutex_clear (&recorder->lock);
  g_cond_clear (&recorder->told);
  g_free (recorder);
}

/* Waits until `entry` was recorded (told on the reader thread); FALSE after 10 s. */
static gboolean
wait_for_change (Recorder *recorder, const char *entry)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&recorder->lock);
  gboolean found;
  while (!(found = g_ptr_array_find_with_equal_func (recorder->changes, entry, g_str_equal, NULL)))
    if (!g_cond_wait_until (&recorder->told, &recorder->lock, deadline))
      break;
  g_mutex_unlock (&recorder->lock);
  return found;
}

static gboolean
wait_for_connects (Recorder *recorder, guint connects, guint disconnects)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&recorder->lock);
  gboolean reached;
  while (!(reached = recorder->connects >= connects && recorder->disconnects >= disconnects))
    if (!g_cond_wait_until (&recorder->told, &recorder->lock, deadline))
      break;
  g_mutex_unlock (&recorder->lock);
  return reached;
}

static char *
json_text (JsonNode *node)
{
  if (node == NULL)
    return g_strdup ("(none)");
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

static void
assert_value (DefaultsClient *client, const char *key, const char *expected)
{
  g_autoptr (JsonNode) node = defaults_client_get (client, DOMAIN, key);
  g_autofree char *text = json_text (node);
  g_assert_cmpstr (text, ==, expected);
}

static void
set_integer (DefaultsClient *client, const char *key, gint64 number)
{
  g_autoptr (JsonNode) value = json_node_init_int (json_node_alloc (), number);
  g_autoptr (GError) error = NULL;
  g_assert_true (defaults_client_set (client, DOMAIN, key, value, &error));
  g_assert_no_error (error);
}

/* Waits until `count` writes are kept for the daemon; FALSE after 10 s. */
static gboolean
wait_for_unsent (DefaultsClient *client, guint count)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (defaults_client_get_unsent_count (client) != count && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  return defaults_client_get_unsent_count (client) == count;
}

/* Synchronizes as soon as the client is connected and has sent what it kept; at most `seconds`. */
static void
synchronize_within (DefaultsClient *client, guint seconds)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) seconds * G_TIME_SPAN_SECOND;
  g_autoptr (GError) error = NULL;
  while (!defaults_client_synchronize (client, &error) && g_get_monotonic_time () < deadline)
    {
      g_clear_error (&error);
      g_usleep (20000);
    }
  g_assert_no_error (error);
}

/* A Unix socket listening at `socket_path`. */
static int
listen_at (const char *socket_path)
{
  int listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (listener, >=, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, socket_path, sizeof address.sun_path);
  g_assert_cmpint (bind (listener, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (listen (listener, 64), ==, 0);
  return listener;
}

/* For a fake daemon: the next request of a connection, which must be an `op`. */
static JsonObject *
expect_request (int fd, const char *op)
{
  g_autofree char *line = fake_connection_read_line (fd, 10000);
  g_assert_nonnull (line);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) root = json_from_string (line, &error);
  g_assert_no_error (error);
  g_assert_nonnull (root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  JsonObject *request = json_object_ref (json_node_get_object (root));
  g_assert_true (json_object_has_member (request, "op") && json_object_has_member (request, "id"));
  g_assert_cmpstr (json_object_get_string_member (request, "op"), ==, op);
  return request;
}

/* Answers a request with `members`: the answer's members after its id. */
static void
answer_request (int fd, JsonObject *request, const char *members)
{
  g_autofree char *line = g_strdup_printf ("{\"id\":%" G_GINT64_FORMAT ",%s}", json_object_get_int_member (request, "id"), members);
  g_assert_true (fake_connection_write_line (fd, line));
}

#define HELLO_ANSWERED "\"ok\":true,\"protocol\":1,\"connection\":1"
#define SHUTTING_DOWN "\"ok\":false,\"error\":{\"code\":\"shutting_down\",\"message\":\"defaultsd is shutting down\"}"

/* The integer an apply request sets `key` to. */
static gint64
set_value (JsonObject *apply, const char *key)
{
  JsonObject *set = json_object_get_object_member (apply, "set");
  g_assert_nonnull (set);
  g_assert_true (json_object_has_member (set, key));
  return json_object_get_int_member (set, key);
}

static void
test_reads_come_from_the_cache (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  g_free (test_daemon_request (daemon, "{\"op\":\"apply\",\"domain\":\"" DOMAIN "\",\"set\":{\"a\":1,\"b\":2.5,\"c\":\"x\"}}"));
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  assert_value (client, "a", "1");
  /* Loaded: with the daemon stopped in its tracks, every read still answers, at once. */
  kill (daemon->pid, SIGSTOP);
  gint64 started = g_get_monotonic_time ();
  for (int i = 0; i < 1000; i++)
    {
      assert_value (client, "b", "2.5");
      assert_value (client, "c", "\"x\"");
      assert_value (client, "missing", "(none)");
    }
  g_assert_cmpint (g_get_monotonic_time () - started, <, G_TIME_SPAN_SECOND / 2);
  g_auto (GStrv) keys = defaults_client_list_keys (client, DOMAIN);
  g_autofree char *joined = g_strjoinv (",", keys);
  g_assert_cmpstr (joined, ==, "a,b,c");
  kill (daemon->pid, SIGCONT);
  defaults_client_free (client);
  test_daemon_free (daemon);
}

static void
test_writes_and_events (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  Recorder *recorder = recorder_new ();
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (client, record_change, recorder);
  g_assert_true (defaults_client_watch (client, DOMAIN));

  /* Its own write: read back at once, told before the call returns, on disk after synchronize. */
  g_autoptr (JsonNode) seven = json_node_init_int (json_node_alloc (), 7);
  g_autoptr (GError) error = NULL;
  g_assert_true (defaults_client_set (client, DOMAIN, "warp", seven, &error));
  g_assert_no_error (error);
  g_assert_true (g_ptr_array_find_with_equal_func (recorder->changes, DOMAIN " warp 0", g_str_equal, NULL));
  assert_value (client, "warp", "7");
  g_assert_true (defaults_client_synchronize (client, &error));
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"warp\"}");
  g_assert_cmpstr (stored, ==, "{\"ok\":true,\"value\":7,\"generation\":1}");

  /* Another process's write: told with its origin, and read from the cache afterwards. */
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"rank\",\"value\":\"Ensign\"}"));
  g_assert_true (wait_for_change (recorder, DOMAIN " rank 1"));
  assert_value (client, "rank", "\"Ensign\"");
  /* A hand edit of the domain's file. */
  g_autofree char *path = g_build_filename (daemon->storage, DOMAIN ".plist", NULL);
  g_autofree char *temporary = g_strconcat (path, ".new", NULL);
  g_assert_true (g_file_set_contents (temporary,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>rank</key><string>Captain</string>"
      "<key>warp</key><integer>7</integer></dict></plist>", -1, NULL));
  g_assert_cmpint (rename (temporary, path), ==, 0);
  g_assert_true (wait_for_change (recorder, DOMAIN " rank 2"));
  assert_value (client, "rank", "\"Captain\"");

  /* Removal, and one atomic change of several keys. */
  g_assert_true (defaults_client_remove (client, DOMAIN, "rank", &error));
  assert_value (client, "rank", "(none)");
  g_autoptr (JsonObject) set = json_object_new ();
  json_object_set_boolean_member (set, "shields", TRUE);
  json_object_set_double_member (set, "warp", 9.5);
  g_assert_true (defaults_client_apply (client, DOMAIN, set, NULL, &error));
  g_autofree char *both = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\"}");
  g_assert_cmpstr (both, ==, "{\"ok\":true,\"value\":{\"shields\":true,\"warp\":9.5},\"generation\":5}");

  defaults_client_free (client);
  recorder_free (recorder);
  test_daemon_free (daemon);
}

static void
test_refusals_name_the_daemons_codes (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  Recorder *recorder = recorder_new ();
  defaults_client_set_change_func (client, record_change, recorder);
  g_autoptr (JsonNode) value = json_node_init_int (json_node_alloc (), 1);
  g_autoptr (GError) error = NULL;
  g_assert_false (defaults_client_set (client, "../etc", "k", value, &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_INVALID_DOMAIN);
  g_clear_error (&error);
  g_assert_false (defaults_client_set (client, DOMAIN, "", value, &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_INVALID_KEY);
  g_clear_error (&error);
  assert_value (client, "", "(none)");
  g_assert_cmpstr (defaults_error_code_name (DEFAULTS_ERROR_FORCED), ==, "forced");
  g_assert_cmpint (defaults_error_code_from_name ("too_large"), ==, DEFAULTS_ERROR_TOO_LARGE);
  g_assert_cmpint (defaults_error_code_from_name ("no_such_code"), ==, DEFAULTS_ERROR_OTHER);

  /* A daemon that does not answer: the call gives up after the timeout, and says so. */
  defaults_client_set_timeout (client, 200);
  kill (daemon->pid, SIGSTOP);
  gint64 started = g_get_monotonic_time ();
  g_assert_false (defaults_client_synchronize (client, &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_TIMED_OUT);
  g_assert_cmpint (g_get_monotonic_time () - started, <, G_TIME_SPAN_SECOND);
  kill (daemon->pid, SIGCONT);
  defaults_client_free (client);
  recorder_free (recorder);
  test_daemon_free (daemon);
}

static void
test_a_missing_daemon_keeps_writes_until_it_comes (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-missing-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  Recorder *recorder = recorder_new ();
  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_connection_func (client, record_connection, recorder);
  gint64 started = g_get_monotonic_time ();
  assert_value (client, "warp", "(none)");
  g_assert_cmpint (g_get_monotonic_time () - started, <, G_TIME_SPAN_SECOND / 10);
  g_assert_false (defaults_client_is_connected (client));

  g_autoptr (JsonNode) value = json_node_init_string (json_node_alloc (), "kept");
  g_autoptr (GError) error = NULL;
  g_assert_true (defaults_client_set (client, DOMAIN, "note", value, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 1);
  assert_value (client, "note", "\"kept\"");

  TestDaemon *daemon = test_daemon_start (directory);
  g_assert_true (wait_for_connects (recorder, 1, 0));
  g_assert_true (defaults_client_synchronize (client, &error));
  g_assert_no_error (error);
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"note\"}");
  g_assert_cmpstr (stored, ==, "{\"ok\":true,\"value\":\"kept\",\"generation\":1}");
  defaults_client_free (client);
  recorder_free (recorder);
  test_daemon_free (daemon);
}

static void
test_a_restart_reconnects_and_reloads (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  Recorder *recorder = recorder_new ();
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (client, record_change, recorder);
  defaults_client_set_connection_func (client, record_connection, recorder);
  g_assert_true (defaults_client_watch (client, DOMAIN));
  g_autoptr (JsonNode) one = json_node_init_int (json_node_alloc (), 1);
  g_assert_true (defaults_client_set (client, DOMAIN, "count", one, NULL));
  g_assert_true (defaults_client_synchronize (client, NULL));

  test_daemon_stop (daemon);
  g_assert_true (wait_for_connects (recorder, 0, 1));
  /* Changed while the daemon was away: read at its next start, and told as a resync. */
  g_autofree char *path = g_build_filename (daemon->storage, DOMAIN ".plist", NULL);
  g_assert_true (g_file_set_contents (path,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>count</key><integer>2</integer></dict></plist>",
      -1, NULL));
  test_daemon_restart (daemon);
  g_assert_true (wait_for_connects (recorder, 1, 1));
  g_assert_true (wait_for_change (recorder, DOMAIN " count 5"));
  assert_value (client, "count", "2");
  /* Events flow again on the new connection. */
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"count\",\"value\":3}"));
  g_assert_true (wait_for_change (recorder, DOMAIN " count 1"));
  assert_value (client, "count", "3");
  defaults_client_free (client);
  recorder_free (recorder);
  test_daemon_free (daemon);
}

typedef struct {
  gboolean told;
  GThread *thread;
} ContextRecord;

static void
record_in_context (DefaultsClient *client, const char *domain, const char *const *keys, DefaultsOrigin origin, gpointer data)
{
  ContextRecord *record = data;
  if (origin == DEFAULTS_ORIGIN_THIS_CLIENT)
    return;
  record->told = TRUE;
  record->thread = g_thread_self ();
}

static gboolean
give_up (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_context_and_poll_dispatch (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  /* On a main context: told there, by its loop. */
  GMainContext *context = g_main_context_new ();
  ContextRecord record = { FALSE, NULL };
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_CONTEXT, context);
  defaults_client_set_change_func (client, record_in_context, &record);
  g_assert_true (defaults_client_watch (client, DOMAIN));
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"k\",\"value\":1}"));
  gboolean expired = FALSE;
  GSource *timeout = g_timeout_source_new_seconds (10);
  g_source_set_callback (timeout, give_up, &expired, NULL);
  g_source_attach (timeout, context);
  while (!record.told && !expired)
    g_main_context_iteration (context, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
  g_assert_true (record.told);
  g_assert_true (record.thread == g_thread_self ());
  defaults_client_free (client);
  g_main_context_unref (context);

  /* With a descriptor to poll: told only when the program dispatches. */
  ContextRecord polled = { FALSE, NULL };
  client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_POLL, NULL);
  defaults_client_set_change_func (client, record_in_context, &polled);
  g_assert_true (defaults_client_watch (client, DOMAIN));
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"k\",\"value\":2}"));
  /* The descriptor turns readable for the connection's notice and for the change; nothing is
   * told until the program dispatches. */
  struct pollfd readable = { defaults_client_get_fd (client), POLLIN, 0 };
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (!polled.told && g_get_monotonic_time () < deadline && poll (&readable, 1, 10000) == 1)
    {
      g_assert_false (polled.told);
      defaults_client_dispatch (client);
    }
  g_assert_true (polled.told);
  g_assert_true (polled.thread == g_thread_self ());
  defaults_client_free (client);
  test_daemon_free (daemon);
}

static void
test_the_socket_folder_must_be_trusted (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-trust-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  g_assert_null (defaults_socket_directory_problem (socket_path));
  g_assert_cmpint (g_chmod (directory, 0777), ==, 0);
  g_autofree char *problem = defaults_socket_directory_problem (socket_path);
  g_assert_nonnull (problem);
  g_assert_true (strstr (problem, "can be written by its group or others (mode 777)") != NULL);
  /* A sticky folder above is fine: /tmp is one. */
  g_assert_cmpint (g_chmod (directory, 01777), ==, 0);
  g_autofree char *inner = g_build_filename (directory, "inner", NULL);
  g_assert_cmpint (g_mkdir (inner, 0700), ==, 0);
  g_autofree char *inner_socket = g_build_filename (inner, "socket", NULL);
  g_assert_null (defaults_socket_directory_problem (inner_socket));
  g_rmdir (inner);
  g_rmdir (directory);
}

/* A change callback on the reader thread that writes: the write does not wait for an answer
 * only that thread could read. */
typedef struct {
  DefaultsClient *client;
  gint64 write_took;
  gboolean wrote;
} Reentrant;

static void
write_from_callback (DefaultsClient *client, const char *domain, const char *const *keys, DefaultsOrigin origin, gpointer data)
{
  Reentrant *reentrant = data;
  if (origin != DEFAULTS_ORIGIN_ANOTHER_PROCESS || reentrant->wrote)
    return;
  g_autoptr (JsonNode) value = json_node_init_string (json_node_alloc (), "seen");
  gint64 started = g_get_monotonic_time ();
  g_assert_true (defaults_client_set (client, DOMAIN, "echo", value, NULL));
  reentrant->write_took = g_get_monotonic_time () - started;
  g_atomic_int_set (&reentrant->wrote, TRUE);
}

static void
test_a_callback_may_write_without_waiting (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_timeout (client, 2000);
  Reentrant reentrant = { client, 0, FALSE };
  defaults_client_set_change_func (client, write_from_callback, &reentrant);
  g_assert_true (defaults_client_watch (client, DOMAIN));
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"k\",\"value\":1}"));
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (!g_atomic_int_get (&reentrant.wrote) && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_true (reentrant.wrote);
  g_assert_cmpint (reentrant.write_took, <, G_TIME_SPAN_SECOND / 10);
  g_assert_true (defaults_client_synchronize (client, NULL));
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"echo\"}");
  g_assert_true (g_str_has_prefix (stored, "{\"ok\":true,\"value\":\"seen\","));
  defaults_client_free (client);
  test_daemon_free (daemon);
}

/* On the default context, a change is told only when that context's loop runs, on its thread,
 * never at once on the reader thread. */
static void
test_context_dispatch_waits_for_the_loop (void)
{
  TestDaemon *daemon = test_daemon_start (NULL);
  ContextRecord record = { FALSE, NULL };
  DefaultsClient *client = defaults_client_new (daemon->socket_path, DEFAULTS_DISPATCH_CONTEXT, NULL);
  defaults_client_set_change_func (client, record_in_context, &record);
  g_assert_true (defaults_client_watch (client, DOMAIN));
  g_free (test_daemon_request (daemon, "{\"op\":\"set\",\"domain\":\"" DOMAIN "\",\"key\":\"k\",\"value\":5}"));
  /* The copy has the change once a synchronize on the same connection is answered. */
  g_assert_true (defaults_client_synchronize (client, NULL));
  assert_value (client, "k", "5");
  g_assert_false (record.told);
  gboolean expired = FALSE;
  guint timeout = g_timeout_add_seconds (10, give_up, &expired);
  while (!record.told && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (timeout);
  g_assert_true (record.told);
  g_assert_true (record.thread == g_thread_self ());
  defaults_client_free (client);
  test_daemon_free (daemon);
}

typedef struct {
  int listener;
  gint accepted;
  gboolean stop;
  gboolean answer_hello;     /* reads the client's hello and answers it before closing */
} Slammer;

/* Reads a connection's hello and answers it, as the daemon does. */
static void
answer_hello (int fd)
{
  g_autofree char *line = fake_connection_read_line (fd, 1000);
  g_autoptr (JsonNode) root = line != NULL ? json_from_string (line, NULL) : NULL;
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  g_autofree char *answer = g_strdup_printf ("{\"id\":%" G_GINT64_FORMAT ",\"ok\":true,\"protocol\":1,\"connection\":1}",
                                             json_object_get_int_member (json_node_get_object (root), "id"));
  fake_connection_write_line (fd, answer);
}

/* Accepts every connection and closes it at once, as a daemon at its connection limit does
 * (or right after answering its hello). */
static gpointer
slam (gpointer data)
{
  Slammer *slammer = data;
  while (!g_atomic_int_get (&slammer->stop))
    {
      struct pollfd readable = { slammer->listener, POLLIN, 0 };
      if (poll (&readable, 1, 50) <= 0)
        continue;
      int fd = accept (slammer->listener, NULL, NULL);
      if (fd >= 0)
        {
          g_atomic_int_inc (&slammer->accepted);
          if (slammer->answer_hello)
            answer_hello (fd);
          close (fd);
        }
    }
  return NULL;
}

static void
test_a_server_that_closes_at_once_is_not_hammered (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-slam-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  Slammer slammer = { socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), 0, FALSE, FALSE };
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, socket_path, sizeof address.sun_path);
  g_assert_cmpint (bind (slammer.listener, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (listen (slammer.listener, 64), ==, 0);
  GThread *thread = g_thread_new ("slammer", slam, &slammer);
  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  g_usleep (2 * G_USEC_PER_SEC);
  defaults_client_free (client);
  g_atomic_int_set (&slammer.stop, TRUE);
  g_thread_join (thread);
  close (slammer.listener);
  /* 50, 100, 200, 400, 800 ms... : a handful in two seconds, not thousands. */
  g_assert_cmpint (g_atomic_int_get (&slammer.accepted), <=, 8);
  g_assert_cmpint (g_atomic_int_get (&slammer.accepted), >=, 2);
  g_unlink (socket_path);
  g_rmdir (directory);
}

static void
test_an_untrusted_folder_is_named_by_synchronize (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-untrusted-XXXXXX", NULL);
  g_assert_cmpint (g_chmod (directory, 0777), ==, 0);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_false (defaults_client_synchronize (client, &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_UNTRUSTED);
  g_assert_true (strstr (error->message, "can be written by its group or others") != NULL);
  defaults_client_free (client);
  g_rmdir (directory);
}

static void
die_with_parent (gpointer unused)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* A socket-activated daemon (systemd-socket-activate standing in for systemd): the client
 * connects to the socket before the daemon runs, its first write starts the daemon, and the
 * write lands. */
static void
test_a_socket_activated_daemon_takes_the_first_write (void)
{
  g_autofree char *activate = g_find_program_in_path ("systemd-socket-activate");
  if (activate == NULL)
    {
      g_test_skip ("needs systemd-socket-activate");
      return;
    }
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-activated-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "activated.socket", NULL);
  g_autofree char *listen = g_strconcat ("--listen=", socket_path, NULL);
  g_autofree char *storage = g_build_filename (directory, "storage", NULL);
  g_autofree char *unused = g_build_filename (directory, "unused.socket", NULL);
  g_autofree char *managed = g_build_filename (directory, "managed", NULL);
  g_assert_cmpint (g_mkdir_with_parents (managed, 0755), ==, 0);
  const char *argv[] = { activate, listen, g_getenv ("DEFAULTSD_BINARY"), "--storage-dir", storage, "--socket", unused,
                         "--managed-dir", managed, NULL };
  GPid pid;
  int errors;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                           die_with_parent, NULL, &pid, NULL, NULL, &errors, NULL));
  /* Listening once it says so. */
  GString *said = g_string_new (NULL);
  char byte;
  struct pollfd readable = { errors, POLLIN, 0 };
  while (strstr (said->str, "Listening on") == NULL && poll (&readable, 1, 10000) == 1 && read (errors, &byte, 1) == 1)
    g_string_append_c (said, byte);
  g_assert_true (strstr (said->str, "Listening on") != NULL);
  g_string_free (said, TRUE);

  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_timeout (client, 30000);
  g_autoptr (JsonNode) value = json_node_init_string (json_node_alloc (), "activated");
  g_autoptr (GError) error = NULL;
  g_assert_true (defaults_client_set (client, DOMAIN, "k", value, &error));
  g_assert_no_error (error);
  g_assert_true (defaults_client_synchronize (client, &error));
  g_assert_no_error (error);
  defaults_client_free (client);
  g_autofree char *file = g_build_filename (storage, DOMAIN ".plist", NULL);
  g_autofree char *contents = NULL;
  g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
  g_assert_true (strstr (contents, "<string>activated</string>") != NULL);
  kill (pid, SIGTERM);
  waitpid (pid, NULL, 0);
  g_spawn_close_pid (pid);
  close (errors);
  g_autofree char *remove = g_strdup_printf ("rm -rf '%s'", directory);
  g_spawn_command_line_sync (remove, NULL, NULL, NULL, NULL);
}

/* A stopping daemon refuses writes with `shutting_down` one at a time, answers a later write
 * only after the program made another, and closes with one still unanswered. The writes go to
 * the next daemon in the order the program made them, and the key ends with its last value. */
static void
test_writes_a_stopping_daemon_refused_keep_their_order (void)
{
  FakeDaemon *fake = fake_daemon_new ();
  DefaultsClient *client = defaults_client_new (fake->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  /* Each write soon stops waiting for its answer, so that several are on their way at once. */
  defaults_client_set_timeout (client, 200);
  int connection = fake_daemon_accept (fake, 10000);
  g_assert_cmpint (connection, >=, 0);
  g_autoptr (JsonObject) hello = expect_request (connection, "hello");
  for (gint64 value = 1; value <= 3; value++)
    set_integer (client, "k", value);
  g_autoptr (JsonObject) subscribe = expect_request (connection, "subscribe");
  g_autoptr (JsonObject) get = expect_request (connection, "get");
  JsonObject *writes[3];
  for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
    {
      writes[i] = expect_request (connection, "apply");
      g_assert_cmpint (set_value (writes[i], "k"), ==, (gint64) i + 1);
    }
  answer_request (connection, hello, HELLO_ANSWERED);
  answer_request (connection, subscribe, "\"ok\":true,\"generations\":{\"" DOMAIN "\":0}");
  answer_request (connection, get, "\"ok\":true,\"value\":{},\"generation\":0");
  /* The first is refused while the next two are on their way; a write made now waits behind it. */
  answer_request (connection, writes[0], SHUTTING_DOWN);
  g_assert_true (wait_for_unsent (client, 1));
  set_integer (client, "k", 4);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 2);
  /* The second is refused after that write was made, and the third is lost with the connection:
   * each goes back before it. */
  answer_request (connection, writes[1], SHUTTING_DOWN);
  g_assert_true (wait_for_unsent (client, 3));
  assert_value (client, "k", "4");
  close (connection);
  for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
    json_object_unref (writes[i]);

  /* The next daemon (the stand-in again) receives them as they were made... */
  connection = fake_daemon_accept (fake, 10000);
  g_assert_cmpint (connection, >=, 0);
  g_autoptr (JsonObject) second_hello = expect_request (connection, "hello");
  g_autoptr (JsonObject) second_subscribe = expect_request (connection, "subscribe");
  g_autoptr (JsonObject) second_get = expect_request (connection, "get");
  for (gint64 value = 1; value <= 4; value++)
    {
      g_autoptr (JsonObject) resent = expect_request (connection, "apply");
      g_assert_cmpint (set_value (resent, "k"), ==, value);
    }
  /* ...and when it goes too, with none of them answered, the real daemon ends with the last. */
  close (connection);
  fake_daemon_close (fake);
  defaults_client_set_timeout (client, 10000);
  TestDaemon *daemon = test_daemon_start (fake->directory);
  synchronize_within (client, 60);
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"k\"}");
  g_assert_true (g_str_has_prefix (stored, "{\"ok\":true,\"value\":4,"));
  assert_value (client, "k", "4");
  defaults_client_free (client);
  test_daemon_free (daemon);
  fake_daemon_free (fake);
}

/* While the daemon is away at most 10,000 writes, and 16 MiB of them, are kept (client.c's
 * MAXIMUM_KEPT_WRITES and MAXIMUM_KEPT_BYTES): past either, a write fails at once, and no read
 * shows it nor is anyone told of it. */
static void
test_the_writes_kept_for_a_missing_daemon_are_bounded (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-bounded-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  Recorder *recorder = recorder_new ();
  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (client, record_change, recorder);
  for (gint64 count = 0; count < 10000; count++)
    set_integer (client, "count", count);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 10000);
  g_assert_cmpuint (recorder->changes->len, ==, 10000);

  g_autoptr (JsonNode) refused = json_node_init_int (json_node_alloc (), -1);
  g_autoptr (GError) error = NULL;
  gint64 started = g_get_monotonic_time ();
  g_assert_false (defaults_client_set (client, DOMAIN, "count", refused, &error));
  g_assert_cmpint (g_get_monotonic_time () - started, <, G_TIME_SPAN_SECOND / 10);
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED);
  g_assert_true (strstr (error->message, "10000 writes") != NULL);
  g_clear_error (&error);
  /* A removal too, and a write to another domain: the bound is the client's. */
  g_assert_false (defaults_client_remove (client, DOMAIN, "count", &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED);
  g_clear_error (&error);
  g_assert_false (defaults_client_set (client, "com.example.other", "count", refused, &error));
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED);
  g_clear_error (&error);
  assert_value (client, "count", "9999");
  g_assert_cmpuint (recorder->changes->len, ==, 10000);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 10000);

  /* The daemon comes: it receives every kept write, and the last one stands; writes go through
   * again. */
  defaults_client_set_timeout (client, 30000);
  TestDaemon *daemon = test_daemon_start (directory);
  synchronize_within (client, 60);
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"count\"}");
  g_assert_true (g_str_has_prefix (stored, "{\"ok\":true,\"value\":9999,"));
  set_integer (client, "count", 10000);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 0);

  /* Away again, with writes of nearly 1 MB (within the daemon's 1 MiB line): 16 of them fit in
   * 16 MiB, the 17th does not, and reads show the 16th. */
  test_daemon_stop (daemon);
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (defaults_client_is_connected (client) && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_false (defaults_client_is_connected (client));
  guint kept = 0;
  for (char letter = 'a'; letter <= 'z'; letter++)
    {
      g_autofree char *text = g_strnfill (1000000, letter);
      g_autoptr (JsonNode) big = json_node_init_string (json_node_alloc (), text);
      if (!defaults_client_set (client, DOMAIN, "big", big, &error))
        break;
      kept++;
    }
  g_assert_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED);
  g_assert_cmpuint (kept, ==, 16);
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 16);
  g_autoptr (JsonNode) shown = defaults_client_get (client, DOMAIN, "big");
  g_assert_nonnull (shown);
  g_assert_cmpint (json_node_get_string (shown)[0], ==, 'a' + 15);
  assert_value (client, "count", "10000");

  defaults_client_free (client);
  recorder_free (recorder);
  test_daemon_free (daemon);
}

typedef struct {
  DefaultsClient *client;
  gint64 longest;            /* µs, the longest a call took */
  gint done;
} LockProbe;

/* Calls that need nothing but the client's lock, for about a second. */
static gpointer
probe_the_lock (gpointer data)
{
  LockProbe *probe = data;
  for (int i = 0; i < 20; i++)
    {
      gint64 started = g_get_monotonic_time ();
      defaults_client_get_unsent_count (probe->client);
      defaults_client_is_connected (probe->client);
      gint64 took = g_get_monotonic_time () - started;
      if (took > probe->longest)
        probe->longest = took;
      g_usleep (50000);
    }
  g_atomic_int_set (&probe->done, TRUE);
  return NULL;
}

/* A server that answers `hello` and closes right away, with more kept writes than its socket
 * takes unread: the send of the kept writes fails on each connection. The client puts them
 * back, in order, and waits for the next connection, rather than resending for ever with its
 * lock held; nothing is lost. */
static void
test_a_failed_resend_waits_for_the_next_connection (void)
{
  g_autofree char *directory = g_dir_make_tmp ("defaultsd-c-resend-XXXXXX", NULL);
  g_autofree char *socket_path = g_build_filename (directory, "socket", NULL);
  DefaultsClient *client = defaults_client_new (socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  /* 8 writes of 512 KiB (each within the daemon's 1 MiB line): 4 MiB. */
  for (char letter = 'a'; letter < 'a' + 8; letter++)
    {
      g_autofree char *text = g_strnfill (512 * 1024, letter);
      g_autoptr (JsonNode) value = json_node_init_string (json_node_alloc (), text);
      g_assert_true (defaults_client_set (client, DOMAIN, "big", value, NULL));
    }
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 8);

  Slammer slammer = { listen_at (socket_path), 0, FALSE, TRUE };
  GThread *thread = g_thread_new ("hello-and-close", slam, &slammer);
  /* It connects again and again: its reader thread is not stuck in a resend. */
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (g_atomic_int_get (&slammer.accepted) < 3 && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  g_assert_cmpint (g_atomic_int_get (&slammer.accepted), >=, 3);
  /* Meanwhile another thread takes the client's lock at once, and the connections come no
   * faster than one per 50 ms (FIRST_RETRY_MS: each answered hello resets the wait to it). */
  LockProbe probe = { client, 0, FALSE };
  gint64 window_start = g_get_monotonic_time ();
  gint accepted_before = g_atomic_int_get (&slammer.accepted);
  GThread *prober = g_thread_new ("lock-probe", probe_the_lock, &probe);
  deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (!g_atomic_int_get (&probe.done) && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  /* A stuck probe would hang the join: the test ends here instead. */
  g_assert_true (g_atomic_int_get (&probe.done));
  g_thread_join (prober);
  gint64 window = g_get_monotonic_time () - window_start;
  gint accepted = g_atomic_int_get (&slammer.accepted) - accepted_before;
  g_assert_cmpint (probe.longest, <, G_TIME_SPAN_SECOND);
  g_assert_cmpint (accepted, <=, window / (50 * 1000) + 2);

  g_atomic_int_set (&slammer.stop, TRUE);
  g_thread_join (thread);
  close (slammer.listener);
  g_unlink (socket_path);
  /* Between connections, every write is kept again, once. */
  deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while ((defaults_client_is_connected (client) || defaults_client_get_unsent_count (client) != 8)
         && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_false (defaults_client_is_connected (client));
  g_assert_cmpuint (defaults_client_get_unsent_count (client), ==, 8);

  /* The real daemon gets them all, in order: the last stands. (A call's timeout is also how
   * long a resend may take.) */
  defaults_client_set_timeout (client, 30000);
  TestDaemon *daemon = test_daemon_start (directory);
  synchronize_within (client, 60);
  g_autofree char *stored = test_daemon_request (daemon, "{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"big\"}");
  g_assert_true (g_str_has_prefix (stored, "{\"ok\":true,\"value\":\"hhhh"));
  defaults_client_free (client);
  test_daemon_free (daemon);
}

/* Events that come while a domain loads are held up to 4,096 (client.c's MAXIMUM_HELD_EVENTS);
 * past that they are dropped, none is applied over the gap, and the domain is loaded again
 * once the answer comes. */
static void
test_events_held_while_a_domain_loads_are_bounded (void)
{
  FakeDaemon *fake = fake_daemon_new ();
  Recorder *recorder = recorder_new ();
  DefaultsClient *client = defaults_client_new (fake->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (client, record_change, recorder);
  defaults_client_set_timeout (client, 200);
  int connection = fake_daemon_accept (fake, 10000);
  g_assert_cmpint (connection, >=, 0);
  g_autoptr (JsonObject) hello = expect_request (connection, "hello");
  /* Not answered in time: the load goes on without its caller. */
  g_assert_false (defaults_client_watch (client, DOMAIN));
  g_autoptr (JsonObject) subscribe = expect_request (connection, "subscribe");
  g_autoptr (JsonObject) get = expect_request (connection, "get");
  answer_request (connection, hello, HELLO_ANSWERED);
  answer_request (connection, subscribe, "\"ok\":true,\"generations\":{\"" DOMAIN "\":0}");
  for (int generation = 1; generation <= 5000; generation++)
    {
      g_autofree char *event = g_strdup_printf ("{\"event\":\"didChange\",\"domain\":\"" DOMAIN "\",\"generation\":%d,"
                                                "\"changes\":{\"k\":%d,\"k%d\":true},\"origin\":{\"connection\":2}}",
                                                generation, generation, generation);
      g_assert_true (fake_connection_write_line (connection, event));
    }
  /* The answer is older than the events: some were dropped, so the domain is asked for again. */
  answer_request (connection, get, "\"ok\":true,\"value\":{},\"generation\":0");
  g_autoptr (JsonObject) again = expect_request (connection, "subscribe");
  g_autoptr (JsonObject) reload = expect_request (connection, "get");
  answer_request (connection, again, "\"ok\":true,\"generations\":{\"" DOMAIN "\":5000}");
  answer_request (connection, reload, "\"ok\":true,\"value\":{\"k\":5000},\"generation\":5000");
  g_assert_true (wait_for_change (recorder, DOMAIN " k 5"));
  assert_value (client, "k", "5000");
  assert_value (client, "k1", "(none)");
  g_mutex_lock (&recorder->lock);
  g_assert_false (g_ptr_array_find_with_equal_func (recorder->changes, DOMAIN " k 1", g_str_equal, NULL));
  g_ptr_array_set_size (recorder->changes, 0);
  g_mutex_unlock (&recorder->lock);
  /* Loaded, it takes events as they come. */
  g_assert_true (fake_connection_write_line (connection, "{\"event\":\"didChange\",\"domain\":\"" DOMAIN "\",\"generation\":5001,"
                                                         "\"changes\":{\"k\":5001},\"origin\":{\"connection\":2}}"));
  g_assert_true (wait_for_change (recorder, DOMAIN " k 1"));
  assert_value (client, "k", "5001");
  close (connection);
  defaults_client_free (client);
  recorder_free (recorder);
  fake_daemon_free (fake);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/client/reads-come-from-the-cache", test_reads_come_from_the_cache);
  g_test_add_func ("/client/writes-and-events", test_writes_and_events);
  g_test_add_func ("/client/refusals-name-the-daemons-codes", test_refusals_name_the_daemons_codes);
  g_test_add_func ("/client/a-missing-daemon-keeps-writes", test_a_missing_daemon_keeps_writes_until_it_comes);
  g_test_add_func ("/client/a-restart-reconnects-and-reloads", test_a_restart_reconnects_and_reloads);
  g_test_add_func ("/client/context-and-poll-dispatch", test_context_and_poll_dispatch);
  g_test_add_func ("/client/the-socket-folder-must-be-trusted", test_the_socket_folder_must_be_trusted);
  g_test_add_func ("/client/a-callback-may-write-without-waiting", test_a_callback_may_write_without_waiting);
  g_test_add_func ("/client/context-dispatch-waits-for-the-loop", test_context_dispatch_waits_for_the_loop);
  g_test_add_func ("/client/a-server-that-closes-at-once-is-not-hammered", test_a_server_that_closes_at_once_is_not_hammered);
  g_test_add_func ("/client/an-untrusted-folder-is-named-by-synchronize", test_an_untrusted_folder_is_named_by_synchronize);
  g_test_add_func ("/client/a-socket-activated-daemon-takes-the-first-write", test_a_socket_activated_daemon_takes_the_first_write);
  g_test_add_func ("/client/writes-a-stopping-daemon-refused-keep-their-order", test_writes_a_stopping_daemon_refused_keep_their_order);
  g_test_add_func ("/client/the-writes-kept-for-a-missing-daemon-are-bounded", test_the_writes_kept_for_a_missing_daemon_are_bounded);
  g_test_add_func ("/client/a-failed-resend-waits-for-the-next-connection", test_a_failed_resend_waits_for_the_next_connection);
  g_test_add_func ("/client/events-held-while-a-domain-loads-are-bounded", test_events_held_while_a_domain_loads_are_bounded);
  return g_test_run ();
}
