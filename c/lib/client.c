/* libdefaultsd's client: one connection, one reader thread, a local copy of each domain in use.
 *
 * Ownership: everything in a DefaultsClient is guarded by its `lock`. The reader thread owns
 * the reading side of the socket and nothing else; any thread may send, under the lock.
 * Callbacks never run with the lock held. Every public call has one deadline, its start plus
 * the timeout, for all it waits on; a call made on the reader thread itself (from a change
 * callback) never waits, since only that thread reads the answers.
 *
 * How a domain's copy stays right (the daemon orders changes by generation, docs/PROTOCOL.md):
 * - `values` and `forced` are the daemon's state at `generation`, from a `get` and the events
 *   after it. Events that come while a `get` is outstanding wait in `held_events`, and those
 *   above the answer's generation are applied after it: an answer can come after events that
 *   are newer than it (it may wait behind a `synchronize`).
 * - This client's own writes stand in `overlay`, newest last, over `values`, from the moment
 *   they are made until the event stream reaches the generation the daemon answered for them.
 *   A read therefore sees a write at once, never an older state after it, and never loses a
 *   change another process made meanwhile under it; when a write leaves the overlay, every key
 *   whose visible value changed with it is reported.
 *
 * How writes keep their order: a write's id is handed out under the lock, in the same section
 * that sends it or keeps it in `unsent`, so ids are the order the callers made them. A write that
 * goes back to `unsent` (refused by a stopping daemon, or lost with its connection) is put in by
 * id rather than at an end: whatever path brings it back, it is sent again before every later
 * one, and the later value of a key is the one the daemon ends with. (A stopping daemon refuses
 * every write after the first it refuses, so no later write can have taken effect before it.)
 *
 * What the client holds for the daemon is bounded: the writes kept while it is away (and with them
 * the overlay), and the events held while a domain loads. Past their bound a new write is refused
 * before it shows anywhere, and held events are dropped for a fresh load.
 */
#define _GNU_SOURCE /* struct ucred */
#include "defaultsd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The longest line the client reads from the daemon: a domain is at most 4 MiB of JSON by
 * default, and an answer holds one, with its forced keys. */
#define MAXIMUM_LINE_BYTES (64u << 20)
/* What a long send may take in before the reader reads it as lines: the answers and events of
 * every kept write resent at once, and the largest line. */
#define MAXIMUM_INBOUND_BYTES (MAXIMUM_LINE_BYTES + (64u << 20))
#define DEFAULT_TIMEOUT_MS 500
/* Reconnection waits from 50 ms, doubling, to at most 2 s, until the daemon answers `hello`. */
#define FIRST_RETRY_MS 50
#define LONGEST_RETRY_MS 2000
/* While the daemon is away at most this many writes are kept for it, and at most this many bytes
 * of their request lines; past either a write fails at once (DEFAULTS_ERROR_NOT_CONNECTED) and
 * changes nothing. Reads scan a domain's kept writes, so their number is bounded as well as their
 * size. docs/GSETTINGS.md states both. */
#define MAXIMUM_KEPT_WRITES 10000u
#define MAXIMUM_KEPT_BYTES (16u << 20)
/* Events that come while a domain's `get` is outstanding are held up to this many, or this many
 * bytes of their lines; past either they are dropped, and the domain loaded again once the answer
 * comes. A load that waits (behind a `synchronize`) while another process writes fast does not
 * grow the client. */
#define MAXIMUM_HELD_EVENTS 4096u
#define MAXIMUM_HELD_BYTES (16u << 20)

typedef enum { REQUEST_HELLO, REQUEST_SUBSCRIBE, REQUEST_UNSUBSCRIBE, REQUEST_GET, REQUEST_APPLY, REQUEST_SYNCHRONIZE } RequestKind;

/* One request: sent, or for an apply also waiting to be sent. Shared by the queues and a caller
 * that waits for it, hence counted. */
typedef struct {
  gint refs;
  RequestKind kind;
  guint64 id;
  char *domain;
  char *line;                /* the request, ending in '\n' */
  gsize length;              /* of `line` */
  gboolean done;
  gboolean abandoned;        /* its caller stopped waiting */
  GError *error;
  /* An apply's change, as it stands in its domain's overlay until the daemon has it. */
  JsonObject *set;
  char **remove;
  gint64 answered_generation; /* -1 until answered */
} Request;

/* A domain's copy. Created on first use and kept until the client is freed. */
typedef struct {
  char *name;
  JsonObject *values;
  JsonObject *forced;
  gint64 generation;
  gboolean loaded;
  gboolean loading;
  guint watchers;
  GQueue overlay;            /* Request* of this client's applies, oldest first */
  GQueue held_events;        /* JsonObject* events that came while a get was outstanding */
  gsize held_bytes;          /* the length of their lines */
  gboolean events_dropped;   /* held events were dropped: loaded again after the answer */
} Domain;

typedef struct {
  char *domain;
  char **keys;
  DefaultsOrigin origin;
  gboolean is_connection;
  gboolean connected;
} Notification;

struct _DefaultsClient {
  gint refs;                 /* the caller's, and each callback queued on a context */
  char *socket_path;
  DefaultsDispatch dispatch;
  GMainContext *context;
  guint timeout_ms;

  GMutex lock;
  GCond answered;
  int fd;
  gint64 connection_number;
  guint retry_ms;            /* the wait before the next attempt; 0 once a hello is answered */
  gint64 next_attempt;       /* monotonic µs: no attempt to connect before it */
  char *connect_problem;     /* why the last attempt to connect was refused, if it was */
  GHashTable *domains;       /* name → Domain* */
  GQueue in_flight;          /* Request* sent, answered in order */
  GQueue unsent;             /* Request* applies kept while the daemon is away, by id */
  gsize unsent_bytes;        /* the length of their lines */
  guint64 next_id;
  gboolean stopping;
  int wake_fd;               /* eventfd: wakes the reader thread */
  GThread *reader;
  /* What the connection sent and no line has taken yet. Received only with the lock held: by
   * the reader thread, and by a send waiting for room, which must read meanwhile, as the
   * daemon stops reading a client that leaves its answers unread. */
  GByteArray *inbound;
  gsize inbound_scanned;     /* bytes of `inbound` known to hold no newline */

  DefaultsChangeFunc change_func;
  gpointer change_data;
  DefaultsConnectionFunc connection_func;
  gpointer connection_data;

  int dispatch_fd;           /* eventfd, with DEFAULTS_DISPATCH_POLL */
  GQueue waiting_notifications;
};

G_DEFINE_QUARK (defaults-error-quark, defaults_error)

static const char *const code_names[] = {
  "not_connected", "timed_out", "untrusted", "protocol",
  "bad_json", "invalid_utf8", "line_too_long", "line_timed_out", "unknown_op", "missing_parameter",
  "invalid_parameter", "invalid_domain", "invalid_key", "invalid_value", "too_large", "forced",
  "no_machine_id", "invalid_plist", "not_permitted", "too_many_connections", "io_error",
  "shutting_down", "internal", "other",
};

const char *
defaults_error_code_name (DefaultsErrorCode code)
{
  return (guint) code < G_N_ELEMENTS (code_names) ? code_names[code] : "other";
}

DefaultsErrorCode
defaults_error_code_from_name (const char *name)
{
  for (guint i = DEFAULTS_ERROR_BAD_JSON; i < G_N_ELEMENTS (code_names); i++)
    if (g_strcmp0 (code_names[i], name) == 0)
      return (DefaultsErrorCode) i;
  return DEFAULTS_ERROR_OTHER;
}

/* Members read from the daemon's lines, which may lack any of them: json-glib's getters warn
 * on a missing member. */
static JsonObject *
object_member (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gint64
integer_member (JsonObject *object, const char *name, gint64 otherwise)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64
         ? json_node_get_int (node) : otherwise;
}

static const char *
string_member (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
         ? json_node_get_string (node) : NULL;
}

static gboolean
on_reader_thread (DefaultsClient *client)
{
  return client->reader != NULL && g_thread_self () == client->reader;
}

static gint64
deadline_of (DefaultsClient *client)
{
  return g_get_monotonic_time () + (gint64) client->timeout_ms * 1000;
}

/* ---- Requests ---- */

static Request *
request_ref (Request *request)
{
  g_atomic_int_inc (&request->refs);
  return request;
}

static void
request_unref (Request *request)
{
  if (!g_atomic_int_dec_and_test (&request->refs))
    return;
  g_free (request->domain);
  g_free (request->line);
  g_clear_error (&request->error);
  if (request->set != NULL)
    json_object_unref (request->set);
  g_strfreev (request->remove);
  g_free (request);
}

static char *
node_to_string (JsonNode *node)
{
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

/* A request whose line is `members` (taken over) with an id of its own. Lock held. */
static Request *
request_new (DefaultsClient *client, RequestKind kind, const char *domain, JsonObject *members)
{
  Request *request = g_new0 (Request, 1);
  request->refs = 1;
  request->kind = kind;
  request->id = ++client->next_id;
  request->domain = g_strdup (domain);
  request->answered_generation = -1;
  json_object_set_int_member (members, "id", (gint64) request->id);
  g_autoptr (JsonNode) root = json_node_init_object (json_node_alloc (), members);
  g_autofree char *text = node_to_string (root);
  request->line = g_strconcat (text, "\n", NULL);
  request->length = strlen (request->line);
  json_object_unref (members);
  return request;
}

/* ---- Domains ---- */

static void
domain_free (Domain *domain)
{
  g_free (domain->name);
  json_object_unref (domain->values);
  json_object_unref (domain->forced);
  g_queue_clear_full (&domain->overlay, (GDestroyNotify) request_unref);
  g_queue_clear_full (&domain->held_events, (GDestroyNotify) json_object_unref);
  g_free (domain);
}

static Domain *
domain_lookup (DefaultsClient *client, const char *name)
{
  Domain *domain = g_hash_table_lookup (client->domains, name);
  if (domain == NULL)
    {
      domain = g_new0 (Domain, 1);
      domain->name = g_strdup (name);
      domain->values = json_object_new ();
      domain->forced = json_object_new ();
      domain->generation = -1;
      g_queue_init (&domain->overlay);
      g_queue_init (&domain->held_events);
      g_hash_table_insert (client->domains, domain->name, domain);
    }
  return domain;
}

static void
drop_held_events (Domain *domain)
{
  g_queue_clear_full (&domain->held_events, (GDestroyNotify) json_object_unref);
  domain->held_bytes = 0;
}

/* The user's value of a key, overlay first; NULL when none. Not a new reference. */
static JsonNode *
domain_user_value (Domain *domain, const char *key)
{
  for (GList *link = domain->overlay.tail; link != NULL; link = link->prev)
    {
      Request *write = link->data;
      if (write->set != NULL && json_object_has_member (write->set, key))
        return json_object_get_member (write->set, key);
      if (write->remove != NULL && g_strv_contains ((const char *const *) write->remove, key))
        return NULL;
    }
  return json_object_get_member (domain->values, key);
}

static JsonNode *
domain_effective_value (Domain *domain, const char *key)
{
  JsonNode *forced = json_object_get_member (domain->forced, key);
  return forced != NULL ? forced : domain_user_value (domain, key);
}

/* A set of key names in order of first addition, for a notification. */
typedef struct {
  GPtrArray *names;
  GHashTable *seen;
} KeySet;

static void
keys_init (KeySet *keys)
{
  keys->names = g_ptr_array_new_with_free_func (g_free);
  keys->seen = g_hash_table_new (g_str_hash, g_str_equal);
}

static void
keys_add (KeySet *keys, const char *name)
{
  if (g_hash_table_contains (keys->seen, name))
    return;
  char *copy = g_strdup (name);
  g_ptr_array_add (keys->names, copy);
  g_hash_table_add (keys->seen, copy);
}

static void
keys_clear (KeySet *keys)
{
  g_hash_table_unref (keys->seen);
  g_ptr_array_unref (keys->names);
}

/* Every key of `a` and `b` whose value differs. */
static void
add_differences (KeySet *keys, JsonObject *a, JsonObject *b)
{
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;
  json_object_iter_init (&iter, a);
  while (json_object_iter_next (&iter, &key, &value))
    {
      JsonNode *other = json_object_get_member (b, key);
      if (other == NULL || !json_node_equal (value, other))
        keys_add (keys, key);
    }
  json_object_iter_init (&iter, b);
  while (json_object_iter_next (&iter, &key, &value))
    if (!json_object_has_member (a, key))
      keys_add (keys, key);
}

static gboolean
same_value (JsonNode *a, JsonNode *b)
{
  return a == b || (a != NULL && b != NULL && json_node_equal (a, b));
}

/* The keys a write names. */
static void
add_write_keys (KeySet *keys, Request *write)
{
  if (write->set != NULL)
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;
      json_object_iter_init (&iter, write->set);
      while (json_object_iter_next (&iter, &key, &value))
        keys_add (keys, key);
    }
  for (char **key = write->remove; key != NULL && *key != NULL; key++)
    keys_add (keys, *key);
}

static void
unref_node (gpointer node)
{
  if (node != NULL)
    json_node_unref (node);
}

/* Takes a write out of the overlay; adds to `changed` each of its keys whose visible value
 * changes with it (another process's change that it stood over). */
static void
domain_drop_write (Domain *domain, Request *write, KeySet *changed)
{
  KeySet keys;
  keys_init (&keys);
  add_write_keys (&keys, write);
  GPtrArray *before = g_ptr_array_new_with_free_func (unref_node);
  for (guint i = 0; i < keys.names->len; i++)
    {
      JsonNode *value = domain_effective_value (domain, keys.names->pdata[i]);
      g_ptr_array_add (before, value != NULL ? json_node_ref (value) : NULL);
    }
  if (g_queue_remove (&domain->overlay, write))
    request_unref (write);
  for (guint i = 0; i < keys.names->len; i++)
    if (!same_value (before->pdata[i], domain_effective_value (domain, keys.names->pdata[i])))
      keys_add (changed, keys.names->pdata[i]);
  g_ptr_array_unref (before);
  keys_clear (&keys);
}

/* Drops the overlay writes the event stream has caught up with. */
static void
domain_settle_overlay (Domain *domain, KeySet *changed)
{
  while (!g_queue_is_empty (&domain->overlay))
    {
      Request *write = g_queue_peek_head (&domain->overlay);
      if (write->answered_generation < 0 || write->answered_generation > domain->generation)
        break;
      domain_drop_write (domain, write, changed);
    }
}

/* ---- Notifications ---- */

static void
notify (GQueue *out, const char *domain, KeySet *keys, DefaultsOrigin origin)
{
  if (keys->names->len == 0)
    return;
  Notification *notification = g_new0 (Notification, 1);
  notification->domain = g_strdup (domain);
  notification->keys = g_new0 (char *, keys->names->len + 1);
  for (guint i = 0; i < keys->names->len; i++)
    notification->keys[i] = g_strdup (keys->names->pdata[i]);
  notification->origin = origin;
  g_queue_push_tail (out, notification);
}

static void
notification_free (Notification *notification)
{
  g_free (notification->domain);
  g_strfreev (notification->keys);
  g_free (notification);
}

static void client_unref (DefaultsClient *client);

static void
run_notification (DefaultsClient *client, Notification *notification)
{
  g_mutex_lock (&client->lock);
  gboolean stopping = client->stopping;
  DefaultsChangeFunc change_func = client->change_func;
  gpointer change_data = client->change_data;
  DefaultsConnectionFunc connection_func = client->connection_func;
  gpointer connection_data = client->connection_data;
  g_mutex_unlock (&client->lock);
  if (stopping)
    return;
  if (notification->is_connection)
    {
      if (connection_func != NULL)
        connection_func (client, notification->connected, connection_data);
    }
  else if (change_func != NULL)
    change_func (client, notification->domain, (const char *const *) notification->keys, notification->origin, change_data);
}

typedef struct {
  DefaultsClient *client;    /* a reference, so the call may come after defaults_client_free */
  Notification *notification;
} ContextCall;

static gboolean
run_in_context (gpointer data)
{
  ContextCall *call = data;
  run_notification (call->client, call->notification);
  return G_SOURCE_REMOVE;
}

static void
context_call_free (gpointer data)
{
  ContextCall *call = data;
  notification_free (call->notification);
  client_unref (call->client);
  g_free (call);
}

/* Runs or hands over what `out` holds, as the dispatch mode says. Called without the lock. */
static void
deliver (DefaultsClient *client, GQueue *out)
{
  Notification *notification;
  while ((notification = g_queue_pop_head (out)) != NULL)
    switch (client->dispatch)
      {
      case DEFAULTS_DISPATCH_THREAD:
        run_notification (client, notification);
        notification_free (notification);
        break;
      case DEFAULTS_DISPATCH_CONTEXT:
        {
          /* Always through the context's loop, never at once on this thread, even where
           * g_main_context_invoke would. */
          ContextCall *call = g_new0 (ContextCall, 1);
          g_atomic_int_inc (&client->refs);
          call->client = client;
          call->notification = notification;
          GSource *source = g_idle_source_new ();
          g_source_set_priority (source, G_PRIORITY_DEFAULT);
          g_source_set_callback (source, run_in_context, call, context_call_free);
          g_source_attach (source, client->context);
          g_source_unref (source);
          break;
        }
      case DEFAULTS_DISPATCH_POLL:
        {
          guint64 one = 1;
          g_mutex_lock (&client->lock);
          g_queue_push_tail (&client->waiting_notifications, notification);
          g_mutex_unlock (&client->lock);
          if (write (client->dispatch_fd, &one, sizeof one) < 0)
            g_debug ("defaultsd: cannot wake the dispatch descriptor: %s", g_strerror (errno));
          break;
        }
      }
}

void
defaults_client_dispatch (DefaultsClient *client)
{
  guint64 count;
  if (client->dispatch_fd >= 0 && read (client->dispatch_fd, &count, sizeof count) < 0 && errno != EAGAIN)
    g_debug ("defaultsd: cannot read the dispatch descriptor: %s", g_strerror (errno));
  for (;;)
    {
      g_mutex_lock (&client->lock);
      Notification *notification = g_queue_pop_head (&client->waiting_notifications);
      g_mutex_unlock (&client->lock);
      if (notification == NULL)
        return;
      run_notification (client, notification);
      notification_free (notification);
    }
}

int
defaults_client_get_fd (DefaultsClient *client)
{
  return client->dispatch_fd;
}

/* ---- Sending ---- */

/* Takes what the connection has sent, without waiting; FALSE when it has ended or failed.
 * Lock held. */
static gboolean
receive_available (DefaultsClient *client)
{
  guint8 chunk[65536];
  ssize_t count = recv (client->fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (count > 0)
    g_byte_array_append (client->inbound, chunk, (guint) count);
  return count > 0 || (count < 0 && (errno == EAGAIN || errno == EINTR));
}

static void
wake_reader (DefaultsClient *client)
{
  guint64 one = 1;
  if (write (client->wake_fd, &one, sizeof one) < 0)
    g_debug ("defaultsd: cannot wake the reader thread: %s", g_strerror (errno));
}

/* Writes a whole line, waiting for room until `deadline`. While it waits it takes in what the
 * daemon sends (answers, events), which the reader thread then reads as lines: a daemon whose
 * answers are left unread stops reading, and a long send would wait for it in vain. Lock held. */
static gboolean
send_line (DefaultsClient *client, const char *line, gint64 deadline)
{
  if (client->fd < 0)
    return FALSE;
  size_t length = strlen (line);
  size_t sent = 0;
  while (sent < length)
    {
      ssize_t count = send (client->fd, line + sent, length - sent, MSG_NOSIGNAL);
      if (count > 0)
        {
          sent += (size_t) count;
          continue;
        }
      if (count < 0 && errno == EINTR)
        continue;
      if (count < 0 && errno == EAGAIN)
        {
          gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
          struct pollfd socket = { client->fd, POLLOUT | POLLIN, 0 };
          int ready;
          do
            ready = poll (&socket, 1, (int) MAX (left, 0));
          while (ready < 0 && errno == EINTR);
          if (ready > 0 && (socket.revents & POLLIN))
            {
              if (!receive_available (client) || client->inbound->len > MAXIMUM_INBOUND_BYTES)
                ready = 0;
              wake_reader (client);
            }
          if (ready > 0)
            continue;
        }
      /* The daemon is gone or stuck: the reader thread sees the shutdown and reconnects. */
      shutdown (client->fd, SHUT_RDWR);
      return FALSE;
    }
  return TRUE;
}

/* Sends a request, to be answered in order. Lock held. */
static gboolean
send_request (DefaultsClient *client, Request *request, gint64 deadline)
{
  if (!send_line (client, request->line, deadline))
    return FALSE;
  g_queue_push_tail (&client->in_flight, request_ref (request));
  return TRUE;
}

/* Keeps a write for the next connection, taking over the caller's reference. It goes in by id,
 * which is the order the callers made their writes (see the top of this file): a write refused
 * by a stopping daemon, or lost with its connection, goes back before every later one, whether
 * that one was kept meanwhile, refused after it, or lost with the connection. Lock held. */
static void
keep_write (DefaultsClient *client, Request *write)
{
  GList *link = client->unsent.tail;
  while (link != NULL && ((Request *) link->data)->id > write->id)
    link = link->prev;
  if (link == NULL)
    g_queue_push_head (&client->unsent, write);
  else
    g_queue_insert_after (&client->unsent, link, write);
  client->unsent_bytes += write->length;
}

/* The oldest kept write, with the queue's reference; NULL when none. Lock held. */
static Request *
next_kept_write (DefaultsClient *client)
{
  Request *write = g_queue_pop_head (&client->unsent);
  if (write != NULL)
    client->unsent_bytes -= write->length;
  return write;
}

/* Waits for a request's answer until `deadline`; on the reader thread, not at all. Lock held. */
static gboolean
wait_for (DefaultsClient *client, Request *request, gint64 deadline, GError **error)
{
  while (!request->done)
    if (on_reader_thread (client) || !g_cond_wait_until (&client->answered, &client->lock, deadline))
      {
        if (request->done)
          break;
        request->abandoned = TRUE;
        g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_TIMED_OUT, "defaultsd did not answer within %u ms", client->timeout_ms);
        return FALSE;
      }
  if (request->error != NULL)
    {
      g_propagate_error (error, g_error_copy (request->error));
      return FALSE;
    }
  return TRUE;
}

static void
add_domain_members (JsonObject *members, const char *op, const char *domain)
{
  json_object_set_string_member (members, "op", op);
  if (domain != NULL)
    json_object_set_string_member (members, "domain", domain);
}

static JsonObject *
domains_request (const char *op, const char *domain)
{
  JsonObject *members = json_object_new ();
  json_object_set_string_member (members, "op", op);
  JsonArray *names = json_array_new ();
  json_array_add_string_element (names, domain);
  json_object_set_array_member (members, "domains", names);
  return members;
}

/* Subscribes to and loads a domain; the get's request, to wait for. Lock held. */
static Request *
load_domain (DefaultsClient *client, Domain *domain, gint64 deadline)
{
  Request *subscription = request_new (client, REQUEST_SUBSCRIBE, domain->name, domains_request ("subscribe", domain->name));
  gboolean sent = send_request (client, subscription, deadline);
  request_unref (subscription);
  if (!sent)
    return NULL;
  JsonObject *get = json_object_new ();
  add_domain_members (get, "get", domain->name);
  Request *request = request_new (client, REQUEST_GET, domain->name, get);
  if (!send_request (client, request, deadline))
    {
      request_unref (request);
      return NULL;
    }
  domain->loading = TRUE;
  return request;
}

/* Loads a domain again, telling whoever watches what changed when the answer comes. Lock held. */
static void
reload_domain (DefaultsClient *client, Domain *domain)
{
  Request *reload = load_domain (client, domain, deadline_of (client));
  if (reload != NULL)
    {
      reload->abandoned = TRUE;
      request_unref (reload);
    }
}

/* ---- Answers and events (reader thread, lock held) ---- */

static void
fail_request (Request *request, DefaultsErrorCode code, const char *message)
{
  if (request->error == NULL)
    request->error = g_error_new_literal (DEFAULTS_ERROR, code, message);
}

static void apply_event (DefaultsClient *client, Domain *domain, JsonObject *event, GQueue *out);

static void
take_get_answer (DefaultsClient *client, Request *request, JsonObject *answer, GQueue *out)
{
  Domain *domain = domain_lookup (client, request->domain);
  domain->loading = FALSE;
  JsonObject *values = object_member (answer, "value");
  gint64 generation = integer_member (answer, "generation", -1);
  if (values == NULL || generation < 0)
    return fail_request (request, DEFAULTS_ERROR_PROTOCOL, "a get answer without a value");
  JsonObject *forced_values = object_member (answer, "forced");
  JsonObject *forced = forced_values != NULL ? json_object_ref (forced_values) : json_object_new ();
  KeySet keys;
  keys_init (&keys);
  /* A caller that waited reads the new state itself; anyone else is told what changed. */
  if (domain->loaded || request->abandoned)
    {
      add_differences (&keys, domain->values, values);
      add_differences (&keys, domain->forced, forced);
    }
  json_object_unref (domain->values);
  json_object_unref (domain->forced);
  /* A copy: events change it, and the answer's object belongs to its parser. */
  JsonNode *copy = json_node_copy (json_object_get_member (answer, "value"));
  domain->values = json_object_ref (json_node_get_object (copy));
  json_node_unref (copy);
  domain->forced = forced;
  domain->generation = generation;
  domain->loaded = TRUE;
  domain_settle_overlay (domain, &keys);
  notify (out, domain->name, &keys, DEFAULTS_ORIGIN_RESYNC);
  keys_clear (&keys);
  if (domain->events_dropped)
    {
      /* Events newer than the answer may be among those dropped: the ones held since would
       * apply over a gap. The answer stands, whole, until the next one. */
      drop_held_events (domain);
      domain->events_dropped = FALSE;
      reload_domain (client, domain);
      return;
    }
  /* The events that came meanwhile and are newer than the answer. */
  JsonObject *event;
  while ((event = g_queue_pop_head (&domain->held_events)) != NULL)
    {
      apply_event (client, domain, event, out);
      json_object_unref (event);
    }
  domain->held_bytes = 0;
}

static void
take_apply_answer (DefaultsClient *client, Request *request, JsonObject *answer, GQueue *out)
{
  Domain *domain = domain_lookup (client, request->domain);
  KeySet keys;
  keys_init (&keys);
  if (request->error == NULL)
    {
      request->answered_generation = integer_member (answer, "generation", 0);
      domain_settle_overlay (domain, &keys);
    }
  else
    /* Refused: the write leaves the overlay, and whoever read it is told of the value under it. */
    domain_drop_write (domain, request, &keys);
  notify (out, domain->name, &keys, DEFAULTS_ORIGIN_RESYNC);
  keys_clear (&keys);
}

/* Takes one answer; FALSE when it cannot be this connection's next one. */
static gboolean
take_answer (DefaultsClient *client, JsonObject *answer, GQueue *out)
{
  Request *request = g_queue_pop_head (&client->in_flight);
  if (request == NULL || (gint64) request->id != integer_member (answer, "id", -1))
    {
      if (request != NULL)
        g_queue_push_head (&client->in_flight, request);
      return FALSE;
    }
  JsonNode *ok = json_object_get_member (answer, "ok");
  if (ok == NULL || !JSON_NODE_HOLDS_VALUE (ok) || !json_node_get_boolean (ok))
    {
      JsonObject *failure = object_member (answer, "error");
      const char *code = string_member (failure, "code");
      const char *message = string_member (failure, "message");
      DefaultsErrorCode error = defaults_error_code_from_name (code != NULL ? code : "");
      if (error == DEFAULTS_ERROR_SHUTTING_DOWN && request->kind == REQUEST_APPLY)
        {
          /* Not applied: sent again to the next daemon, as the protocol asks, in its place among
           * the writes made after it (some may still be on their way, to be refused too). */
          keep_write (client, request);
          return TRUE;
        }
      fail_request (request, error, message != NULL ? message : (code != NULL ? code : "refused"));
    }
  switch (request->kind)
    {
    case REQUEST_HELLO:
      if (request->error == NULL)
        {
          client->connection_number = integer_member (answer, "connection", -1);
          client->retry_ms = 0;
        }
      break;
    case REQUEST_GET:
      if (request->error == NULL)
        take_get_answer (client, request, answer, out);
      else
        domain_lookup (client, request->domain)->loading = FALSE;
      break;
    case REQUEST_APPLY:
      take_apply_answer (client, request, answer, out);
      break;
    default:
      break;
    }
  request->done = TRUE;
  request_unref (request);
  g_cond_broadcast (&client->answered);
  return TRUE;
}

static DefaultsOrigin
origin_of (DefaultsClient *client, JsonObject *origin)
{
  const char *source = string_member (origin, "source");
  if (g_strcmp0 (source, "file") == 0)
    return DEFAULTS_ORIGIN_FILE;
  if (g_strcmp0 (source, "managed") == 0)
    return DEFAULTS_ORIGIN_MANAGED;
  if (g_strcmp0 (source, "roaming") == 0)
    return DEFAULTS_ORIGIN_ROAMING;
  if (integer_member (origin, "connection", -2) == client->connection_number)
    return DEFAULTS_ORIGIN_THIS_CLIENT;
  return DEFAULTS_ORIGIN_ANOTHER_PROCESS;
}

/* Applies a didChange to a loaded domain's copy. */
static void
apply_event (DefaultsClient *client, Domain *domain, JsonObject *event, GQueue *out)
{
  gint64 generation = integer_member (event, "generation", -1);
  JsonObject *changes = object_member (event, "changes");
  if (generation <= domain->generation || changes == NULL)
    return;
  DefaultsOrigin origin = origin_of (client, object_member (event, "origin"));
  if (origin == DEFAULTS_ORIGIN_MANAGED)
    /* The forced layer changed: load the domain again, which reports what changed. */
    return reload_domain (client, domain);
  KeySet keys;
  keys_init (&keys);
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;
  json_object_iter_init (&iter, changes);
  while (json_object_iter_next (&iter, &key, &value))
    {
      if (JSON_NODE_HOLDS_NULL (value))
        json_object_remove_member (domain->values, key);
      else
        json_object_set_member (domain->values, key, json_node_copy (value));
      keys_add (&keys, key);
    }
  domain->generation = generation;
  KeySet settled;
  keys_init (&settled);
  domain_settle_overlay (domain, &settled);
  /* This client's own changes were reported when they were made. */
  if (origin != DEFAULTS_ORIGIN_THIS_CLIENT)
    notify (out, domain->name, &keys, origin);
  notify (out, domain->name, &settled, DEFAULTS_ORIGIN_RESYNC);
  keys_clear (&settled);
  keys_clear (&keys);
}

static void
take_event (DefaultsClient *client, JsonObject *event, gsize length, GQueue *out)
{
  if (g_strcmp0 (string_member (event, "event"), "didChange") != 0 || json_object_has_member (event, "host"))
    return;
  const char *name = string_member (event, "domain");
  Domain *domain = name != NULL ? g_hash_table_lookup (client->domains, name) : NULL;
  if (domain == NULL)
    return;
  if (domain->loading)
    {
      if (!domain->events_dropped
          && (g_queue_get_length (&domain->held_events) >= MAXIMUM_HELD_EVENTS
              || domain->held_bytes + length > MAXIMUM_HELD_BYTES))
        {
          drop_held_events (domain);
          domain->events_dropped = TRUE;
        }
      if (!domain->events_dropped)
        {
          g_queue_push_tail (&domain->held_events, json_object_ref (event));
          domain->held_bytes += length;
        }
    }
  else if (domain->loaded)
    apply_event (client, domain, event, out);
}

/* Takes one line; FALSE when the connection cannot go on (a line that is not the protocol). */
static gboolean
take_line (DefaultsClient *client, const char *line, gsize length, GQueue *out)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, line, (gssize) length, NULL))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  JsonObject *object = json_node_get_object (root);
  if (json_object_has_member (object, "event"))
    {
      take_event (client, object, length, out);
      return TRUE;
    }
  return take_answer (client, object, out);
}

/* ---- The connection ---- */

/* Every request sent and not answered: applies go back among the kept writes, in order; the
 * others fail. Lock held. */
static void
lose_connection (DefaultsClient *client, GQueue *out)
{
  if (client->fd >= 0)
    close (client->fd);
  client->fd = -1;
  client->connection_number = -1;
  Request *request;
  while ((request = g_queue_pop_head (&client->in_flight)) != NULL)
    {
      if (request->kind == REQUEST_APPLY)
        {
          keep_write (client, request);
          continue;
        }
      fail_request (request, DEFAULTS_ERROR_NOT_CONNECTED, "the connection to defaultsd was lost");
      if (request->kind == REQUEST_GET)
        domain_lookup (client, request->domain)->loading = FALSE;
      request->done = TRUE;
      request_unref (request);
    }
  GHashTableIter iter;
  Domain *domain;
  g_hash_table_iter_init (&iter, client->domains);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &domain))
    {
      drop_held_events (domain);
      domain->events_dropped = FALSE;
    }
  g_cond_broadcast (&client->answered);
  Notification *notification = g_new0 (Notification, 1);
  notification->is_connection = TRUE;
  notification->connected = FALSE;
  g_queue_push_tail (out, notification);
}

/* A connected socket whose folder and server are trusted, or -1 and why not (in `problem`).
 * Called without the lock: the trust check may look up users and groups. */
static int
open_connection (const char *socket_path, char **problem)
{
  *problem = defaults_socket_directory_problem (socket_path);
  if (*problem != NULL)
    return -1;
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen (socket_path) >= sizeof address.sun_path)
    return -1;
  strcpy (address.sun_path, socket_path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *) &address, sizeof address) != 0)
    {
      close (fd);
      return -1;
    }
  struct ucred peer;
  socklen_t peer_length = sizeof peer;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0 || (peer.uid != getuid () && peer.uid != 0))
    {
      *problem = g_strdup_printf ("the process serving %s runs as uid %u, neither you nor root", socket_path, (unsigned) peer.uid);
      close (fd);
      return -1;
    }
  return fd;
}

/* Adopts a new connection: hello, the domains in use loaded again, and the writes kept
 * meanwhile sent, in order. Lock held. */
static void
adopt_connection (DefaultsClient *client, int fd, GQueue *out)
{
  gint64 deadline = deadline_of (client);
  client->fd = fd;
  JsonObject *hello = json_object_new ();
  json_object_set_string_member (hello, "op", "hello");
  /* The program's name, as `defaults watch` and the origin of its changes show it. */
  json_object_set_string_member (hello, "client", g_get_prgname () != NULL ? g_get_prgname () : program_invocation_short_name);
  Request *request = request_new (client, REQUEST_HELLO, NULL, hello);
  send_request (client, request, deadline);
  request_unref (request);
  GHashTableIter iter;
  Domain *domain;
  g_hash_table_iter_init (&iter, client->domains);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &domain))
    if (domain->loaded || domain->watchers > 0 || !g_queue_is_empty (&domain->overlay))
      reload_domain (client, domain);
  while (client->fd >= 0 && (request = next_kept_write (client)) != NULL)
    {
      if (!send_request (client, request, deadline))
        {
          /* A failed send shut the connection down, though its descriptor stays open until the
           * reader thread sees the end: the rest waits, in order, for the next connection. */
          keep_write (client, request);
          break;
        }
      request_unref (request);
    }
  Notification *notification = g_new0 (Notification, 1);
  notification->is_connection = TRUE;
  notification->connected = TRUE;
  g_queue_push_tail (out, notification);
}

/* One attempt to connect. Lock held on entry and exit; dropped while connecting. */
static void
try_to_connect (DefaultsClient *client, GQueue *out)
{
  char *path = g_strdup (client->socket_path);
  g_mutex_unlock (&client->lock);
  char *problem = NULL;
  int fd = open_connection (path, &problem);
  g_mutex_lock (&client->lock);
  g_free (path);
  g_free (client->connect_problem);
  client->connect_problem = problem;
  if (problem != NULL)
    g_debug ("defaultsd: not connecting: %s", problem);
  if (fd >= 0 && (client->fd >= 0 || client->stopping))
    close (fd);
  else if (fd >= 0)
    adopt_connection (client, fd, out);
}

static void
drain (int fd)
{
  guint64 count;
  while (read (fd, &count, sizeof count) > 0)
    ;
}

static gpointer
reader_main (gpointer data)
{
  DefaultsClient *client = data;
  g_mutex_lock (&client->lock);
  while (!client->stopping)
    {
      GQueue out = G_QUEUE_INIT;
      if (client->fd < 0 && g_get_monotonic_time () >= client->next_attempt)
        {
          g_byte_array_set_size (client->inbound, 0);
          client->inbound_scanned = 0;
          try_to_connect (client, &out);
          /* The wait grows with every attempt, connected or not, and only an answered hello
           * resets it: a daemon that accepts and closes at once is not hammered. */
          client->retry_ms = client->retry_ms == 0 ? FIRST_RETRY_MS : MIN (client->retry_ms * 2, LONGEST_RETRY_MS);
          client->next_attempt = g_get_monotonic_time () + (gint64) client->retry_ms * 1000;
        }
      int fd = client->fd;
      gint64 wait_ms = MAX (0, (client->next_attempt - g_get_monotonic_time ()) / 1000 + 1);
      /* Lines a send took in while it waited are read before waiting for more. */
      gboolean unread = client->inbound->len > client->inbound_scanned;
      g_mutex_unlock (&client->lock);
      deliver (client, &out);

      struct pollfd watched[2] = { { client->wake_fd, POLLIN, 0 }, { fd, POLLIN, 0 } };
      int ready = poll (watched, fd >= 0 ? 2 : 1, unread ? 0 : fd >= 0 ? -1 : (int) wait_ms);
      if (ready > 0 && (watched[0].revents & POLLIN))
        drain (client->wake_fd);
      g_mutex_lock (&client->lock);
      if (fd >= 0 && fd == client->fd)
        {
          /* Every complete line is taken before an end is acted on: a send that waited may
           * have taken in answers the daemon wrote just before it closed. */
          gboolean ended = FALSE;
          if (ready > 0 && watched[1].revents != 0)
            ended = !receive_available (client);
          GByteArray *buffer = client->inbound;
          gsize start = 0;
          gboolean lost = FALSE;
          for (gsize i = client->inbound_scanned; i < buffer->len && !lost; i++)
            if (buffer->data[i] == '\n')
              {
                lost = !take_line (client, (const char *) buffer->data + start, i - start, &out);
                start = i + 1;
              }
          lost = lost || ended;
          g_byte_array_remove_range (buffer, 0, (guint) start);
          client->inbound_scanned = buffer->len;
          if (buffer->len > MAXIMUM_LINE_BYTES)
            lost = TRUE;
          if (lost)
            {
              lose_connection (client, &out);
              g_byte_array_set_size (buffer, 0);
              client->inbound_scanned = 0;
            }
        }
      if (!g_queue_is_empty (&out))
        {
          g_mutex_unlock (&client->lock);
          deliver (client, &out);
          g_mutex_lock (&client->lock);
        }
    }
  g_mutex_unlock (&client->lock);
  return NULL;
}

/* ---- The public calls ---- */

static char *
default_socket_path (void)
{
  const char *configured = g_getenv ("DEFAULTSD_SOCKET");
  if (configured != NULL && configured[0] != '\0')
    return g_strdup (configured);
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  if (runtime != NULL && runtime[0] == '/')
    return g_build_filename (runtime, "defaultsd", "socket", NULL);
  return g_strdup_printf ("/tmp/defaultsd-%u/socket", (unsigned) getuid ());
}

DefaultsClient *
defaults_client_new (const char *socket_path, DefaultsDispatch dispatch, GMainContext *context)
{
  DefaultsClient *client = g_new0 (DefaultsClient, 1);
  client->refs = 1;
  client->socket_path = socket_path != NULL ? g_strdup (socket_path) : default_socket_path ();
  client->dispatch = dispatch;
  if (dispatch == DEFAULTS_DISPATCH_CONTEXT)
    client->context = context != NULL ? g_main_context_ref (context) : g_main_context_ref_thread_default ();
  client->timeout_ms = DEFAULT_TIMEOUT_MS;
  g_mutex_init (&client->lock);
  g_cond_init (&client->answered);
  client->fd = -1;
  client->connection_number = -1;
  client->domains = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) domain_free);
  client->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  client->inbound = g_byte_array_new ();
  client->dispatch_fd = dispatch == DEFAULTS_DISPATCH_POLL ? eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  /* The first connection is made here, so that the first read can be answered at once. */
  GQueue out = G_QUEUE_INIT;
  g_mutex_lock (&client->lock);
  try_to_connect (client, &out);
  g_mutex_unlock (&client->lock);
  deliver (client, &out);
  client->reader = g_thread_new ("defaultsd-reader", reader_main, client);
  return client;
}

static void
client_unref (DefaultsClient *client)
{
  if (!g_atomic_int_dec_and_test (&client->refs))
    return;
  g_queue_clear_full (&client->in_flight, (GDestroyNotify) request_unref);
  g_queue_clear_full (&client->unsent, (GDestroyNotify) request_unref);
  g_queue_clear_full (&client->waiting_notifications, (GDestroyNotify) notification_free);
  g_hash_table_unref (client->domains);
  g_byte_array_unref (client->inbound);
  if (client->context != NULL)
    g_main_context_unref (client->context);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->answered);
  g_free (client->connect_problem);
  g_free (client->socket_path);
  g_free (client);
}

void
defaults_client_free (DefaultsClient *client)
{
  if (client == NULL)
    return;
  g_mutex_lock (&client->lock);
  client->stopping = TRUE;
  if (client->fd >= 0)
    shutdown (client->fd, SHUT_RDWR);
  g_mutex_unlock (&client->lock);
  wake_reader (client);
  g_thread_join (client->reader);
  if (client->fd >= 0)
    close (client->fd);
  client->fd = -1;
  close (client->wake_fd);
  if (client->dispatch_fd >= 0)
    close (client->dispatch_fd);
  /* Callbacks still queued on a context hold references; they see `stopping` and do nothing. */
  client_unref (client);
}

void
defaults_client_set_timeout (DefaultsClient *client, guint milliseconds)
{
  g_mutex_lock (&client->lock);
  client->timeout_ms = milliseconds;
  g_mutex_unlock (&client->lock);
}

const char *
defaults_client_get_socket_path (DefaultsClient *client)
{
  return client->socket_path;
}

void
defaults_client_set_change_func (DefaultsClient *client, DefaultsChangeFunc func, gpointer user_data)
{
  g_mutex_lock (&client->lock);
  client->change_func = func;
  client->change_data = user_data;
  g_mutex_unlock (&client->lock);
}

void
defaults_client_set_connection_func (DefaultsClient *client, DefaultsConnectionFunc func, gpointer user_data)
{
  g_mutex_lock (&client->lock);
  client->connection_func = func;
  client->connection_data = user_data;
  g_mutex_unlock (&client->lock);
}

/* The domain, loaded (waiting until `deadline` when it is not), or NULL when it cannot be now.
 * Domains are never freed before the client, so the pointer stays good across the wait. Lock
 * held. */
static Domain *
loaded_domain (DefaultsClient *client, const char *name, gboolean watch, gint64 deadline)
{
  Domain *domain = domain_lookup (client, name);
  if (watch)
    domain->watchers++;
  if (!domain->loaded && !domain->loading && client->fd >= 0)
    {
      Request *request = load_domain (client, domain, deadline);
      if (request != NULL)
        {
          wait_for (client, request, deadline, NULL);
          request_unref (request);
        }
    }
  return domain->loaded ? domain : NULL;
}

gboolean
defaults_client_watch (DefaultsClient *client, const char *domain)
{
  g_mutex_lock (&client->lock);
  gboolean loaded = loaded_domain (client, domain, TRUE, deadline_of (client)) != NULL;
  g_mutex_unlock (&client->lock);
  return loaded;
}

void
defaults_client_unwatch (DefaultsClient *client, const char *name)
{
  g_mutex_lock (&client->lock);
  Domain *domain = g_hash_table_lookup (client->domains, name);
  /* Unsubscribed once nobody watches and no write of this client's waits for its event; the
   * copy would then go stale, so it is loaded afresh when next asked for. */
  if (domain != NULL && domain->watchers > 0 && --domain->watchers == 0 && g_queue_is_empty (&domain->overlay)
      && !domain->loading)
    {
      Request *request = request_new (client, REQUEST_UNSUBSCRIBE, name, domains_request ("unsubscribe", name));
      send_request (client, request, deadline_of (client));
      request_unref (request);
      domain->loaded = FALSE;
    }
  g_mutex_unlock (&client->lock);
}

static JsonNode *
get_value (DefaultsClient *client, const char *name, const char *key, gboolean effective)
{
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE, deadline_of (client));
  JsonNode *value = NULL;
  if (domain != NULL)
    value = effective ? domain_effective_value (domain, key) : domain_user_value (domain, key);
  else
    /* Not loaded: this client's own writes, kept for the daemon, still read back. */
    value = domain_user_value (domain_lookup (client, name), key);
  if (value != NULL)
    value = json_node_ref (value);
  g_mutex_unlock (&client->lock);
  return value;
}

JsonNode *
defaults_client_get (DefaultsClient *client, const char *domain, const char *key)
{
  return get_value (client, domain, key, TRUE);
}

JsonNode *
defaults_client_get_user_value (DefaultsClient *client, const char *domain, const char *key)
{
  return get_value (client, domain, key, FALSE);
}

gboolean
defaults_client_is_forced (DefaultsClient *client, const char *name, const char *key)
{
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE, deadline_of (client));
  gboolean forced = domain != NULL && json_object_has_member (domain->forced, key);
  g_mutex_unlock (&client->lock);
  return forced;
}

gboolean
defaults_client_has_forced (DefaultsClient *client, const char *name)
{
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE, deadline_of (client));
  gboolean forced = domain != NULL && json_object_get_size (domain->forced) > 0;
  g_mutex_unlock (&client->lock);
  return forced;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

char **
defaults_client_list_keys (DefaultsClient *client, const char *name)
{
  KeySet candidates;
  keys_init (&candidates);
  GPtrArray *keys = g_ptr_array_new ();
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE, deadline_of (client));
  if (domain != NULL)
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;
      json_object_iter_init (&iter, domain->values);
      while (json_object_iter_next (&iter, &key, &value))
        keys_add (&candidates, key);
      json_object_iter_init (&iter, domain->forced);
      while (json_object_iter_next (&iter, &key, &value))
        keys_add (&candidates, key);
      for (GList *link = domain->overlay.head; link != NULL; link = link->next)
        add_write_keys (&candidates, link->data);
      for (guint i = 0; i < candidates.names->len; i++)
        if (domain_effective_value (domain, candidates.names->pdata[i]) != NULL)
          g_ptr_array_add (keys, g_strdup (candidates.names->pdata[i]));
    }
  g_mutex_unlock (&client->lock);
  keys_clear (&candidates);
  g_ptr_array_sort (keys, compare_names);
  g_ptr_array_add (keys, NULL);
  return (char **) g_ptr_array_free (keys, FALSE);
}

gboolean
defaults_client_apply (DefaultsClient *client, const char *name, JsonObject *set, const char *const *remove,
                       GError **error)
{
  JsonObject *members = json_object_new ();
  add_domain_members (members, "apply", name);
  if (set != NULL)
    json_object_set_object_member (members, "set", json_object_ref (set));
  if (remove != NULL && remove[0] != NULL)
    {
      JsonArray *names = json_array_new ();
      for (const char *const *key = remove; *key != NULL; key++)
        json_array_add_string_element (names, *key);
      json_object_set_array_member (members, "remove", names);
    }

  g_mutex_lock (&client->lock);
  gint64 deadline = deadline_of (client);
  /* Loaded and subscribed first: the events that follow settle the write's overlay. */
  loaded_domain (client, name, FALSE, deadline);
  Request *request = request_new (client, REQUEST_APPLY, name, members);
  /* Kept, not sent, while writes wait before it or there is no connection; past the bound it is
   * refused here, before any read shows it or anyone is told of it. */
  gboolean keep = !g_queue_is_empty (&client->unsent) || client->fd < 0;
  if (keep && (g_queue_get_length (&client->unsent) >= MAXIMUM_KEPT_WRITES
               || client->unsent_bytes + request->length > MAXIMUM_KEPT_BYTES))
    {
      guint kept = g_queue_get_length (&client->unsent);
      gsize kept_bytes = client->unsent_bytes;
      g_mutex_unlock (&client->lock);
      request_unref (request);
      g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED,
                   "defaultsd is not reachable, and the %u writes (%" G_GSIZE_FORMAT " bytes) waiting for it are as many as "
                   "are kept (%u writes, %u MiB): this write was not made", kept, kept_bytes, MAXIMUM_KEPT_WRITES,
                   MAXIMUM_KEPT_BYTES >> 20);
      return FALSE;
    }
  request->set = set != NULL ? json_object_ref (set) : NULL;
  request->remove = g_strdupv ((char **) remove);
  Domain *domain = domain_lookup (client, name);
  g_queue_push_tail (&domain->overlay, request_ref (request));
  KeySet keys;
  keys_init (&keys);
  add_write_keys (&keys, request);
  GError *refusal = NULL;
  if (keep || !send_request (client, request, deadline))
    keep_write (client, request_ref (request));
  else if (!wait_for (client, request, deadline, NULL) && request->done && request->error != NULL)
    refusal = g_error_copy (request->error);
  DefaultsChangeFunc change_func = client->change_func;
  gpointer change_data = client->change_data;
  g_mutex_unlock (&client->lock);
  request_unref (request);

  if (refusal != NULL)
    {
      keys_clear (&keys);
      g_propagate_error (error, refusal);
      return FALSE;
    }
  if (change_func != NULL && keys.names->len > 0)
    {
      g_ptr_array_add (keys.names, NULL);
      change_func (client, name, (const char *const *) keys.names->pdata, DEFAULTS_ORIGIN_THIS_CLIENT, change_data);
      g_ptr_array_remove_index (keys.names, keys.names->len - 1);
    }
  keys_clear (&keys);
  return TRUE;
}

gboolean
defaults_client_set (DefaultsClient *client, const char *domain, const char *key, JsonNode *value, GError **error)
{
  g_autoptr (JsonObject) set = json_object_new ();
  json_object_set_member (set, key, json_node_copy (value));
  return defaults_client_apply (client, domain, set, NULL, error);
}

gboolean
defaults_client_remove (DefaultsClient *client, const char *domain, const char *key, GError **error)
{
  const char *remove[] = { key, NULL };
  return defaults_client_apply (client, domain, NULL, remove, error);
}

gboolean
defaults_client_synchronize (DefaultsClient *client, GError **error)
{
  g_mutex_lock (&client->lock);
  if (!g_queue_is_empty (&client->unsent) || client->fd < 0)
    {
      if (client->connect_problem != NULL)
        g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_UNTRUSTED, "not connecting to defaultsd: %s", client->connect_problem);
      else
        g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED, "defaultsd is not running; writes are kept until it is");
      g_mutex_unlock (&client->lock);
      return FALSE;
    }
  JsonObject *members = json_object_new ();
  json_object_set_string_member (members, "op", "synchronize");
  Request *request = request_new (client, REQUEST_SYNCHRONIZE, NULL, members);
  gint64 deadline = deadline_of (client);
  gboolean sent = send_request (client, request, deadline);
  gboolean ok = sent && wait_for (client, request, deadline, error);
  if (!sent)
    g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED, "the connection to defaultsd was lost");
  g_mutex_unlock (&client->lock);
  request_unref (request);
  return ok;
}

gboolean
defaults_client_is_connected (DefaultsClient *client)
{
  g_mutex_lock (&client->lock);
  gboolean connected = client->fd >= 0;
  g_mutex_unlock (&client->lock);
  return connected;
}

guint
defaults_client_get_unsent_count (DefaultsClient *client)
{
  g_mutex_lock (&client->lock);
  guint count = g_queue_get_length (&client->unsent);
  g_mutex_unlock (&client->lock);
  return count;
}
