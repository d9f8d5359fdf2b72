/* libdefaultsd's client: one connection, one reader thread, a local copy of each domain in use.
 *
 * Ownership: everything in a DefaultsClient is guarded by its `lock`. The reader thread owns
 * the reading side of the socket and nothing else; any thread may send, under the lock.
 * Callbacks are never run with the lock held.
 *
 * How a domain's copy stays right (the daemon orders changes by generation, docs/PROTOCOL.md):
 * - `values` and `forced` are the daemon's state at `generation`, from a `get` or the events
 *   after it (an event at or below `generation` is already in it).
 * - This client's own writes stand in `overlay`, newest last, over `values`, from the moment
 *   they are made until the event stream reaches the generation the daemon answered for them.
 *   A read therefore sees a write at once, never an older state after it, and never loses a
 *   change another process made meanwhile under it.
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
#define DEFAULT_TIMEOUT_MS 500
/* Reconnection waits from 50 ms, doubling, to at most 2 s. */
#define FIRST_RETRY_MS 50
#define LONGEST_RETRY_MS 2000

typedef enum { REQUEST_HELLO, REQUEST_SUBSCRIBE, REQUEST_UNSUBSCRIBE, REQUEST_GET, REQUEST_APPLY, REQUEST_SYNCHRONIZE } RequestKind;

typedef struct _Domain Domain;

/* One request: sent, or for an apply also waiting to be sent. Shared by the queues and a caller
 * that waits for it, hence counted. */
typedef struct {
  gint refs;
  RequestKind kind;
  guint64 id;
  char *domain;
  char *line;                /* the request, ending in '\n' */
  gboolean done;
  gboolean abandoned;        /* its caller stopped waiting */
  GError *error;
  /* An apply's change, as it stands in its domain's overlay until the daemon has it. */
  JsonObject *set;
  char **remove;
  gint64 answered_generation; /* -1 until answered */
} Request;

struct _Domain {
  char *name;
  JsonObject *values;
  JsonObject *forced;
  gint64 generation;
  gboolean loaded;
  gboolean loading;
  guint watchers;
  GQueue overlay;            /* Request* of this client's applies, oldest first */
};

typedef struct {
  char *domain;
  char **keys;
  DefaultsOrigin origin;
  gboolean is_connection;
  gboolean connected;
} Notification;

struct _DefaultsClient {
  char *socket_path;
  DefaultsDispatch dispatch;
  GMainContext *context;
  guint timeout_ms;

  GMutex lock;
  GCond answered;
  int fd;
  gint64 connection_number;
  GHashTable *domains;       /* name → Domain* */
  GQueue in_flight;          /* Request* sent, answered in order */
  GQueue unsent;             /* Request* applies kept while the daemon is away */
  guint64 next_id;
  gboolean stopping;
  int wake_fd;               /* eventfd: wakes the reader thread */
  GThread *reader;

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
  json_object_unref (members);
  return request;
}

/* ---- Domains ---- */

static void
domain_free (Domain *domain)
{
  g_free (domain->name);
  if (domain->values != NULL)
    json_object_unref (domain->values);
  if (domain->forced != NULL)
    json_object_unref (domain->forced);
  g_queue_clear_full (&domain->overlay, (GDestroyNotify) request_unref);
  g_free (domain);
}

static Domain *
domain_lookup (DefaultsClient *client, const char *name, gboolean create)
{
  Domain *domain = g_hash_table_lookup (client->domains, name);
  if (domain == NULL && create)
    {
      domain = g_new0 (Domain, 1);
      domain->name = g_strdup (name);
      domain->values = json_object_new ();
      domain->forced = json_object_new ();
      domain->generation = -1;
      g_queue_init (&domain->overlay);
      g_hash_table_insert (client->domains, domain->name, domain);
    }
  return domain;
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
  return json_object_has_member (domain->values, key) ? json_object_get_member (domain->values, key) : NULL;
}

static JsonNode *
domain_effective_value (Domain *domain, const char *key)
{
  if (json_object_has_member (domain->forced, key))
    return json_object_get_member (domain->forced, key);
  return domain_user_value (domain, key);
}

/* Every key of `a` and `b` whose value differs. */
static void
add_differences (GPtrArray *keys, JsonObject *a, JsonObject *b)
{
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;
  json_object_iter_init (&iter, a);
  while (json_object_iter_next (&iter, &key, &value))
    {
      JsonNode *other = json_object_has_member (b, key) ? json_object_get_member (b, key) : NULL;
      if (other == NULL || !json_node_equal (value, other))
        if (!g_ptr_array_find_with_equal_func (keys, key, g_str_equal, NULL))
          g_ptr_array_add (keys, g_strdup (key));
    }
  json_object_iter_init (&iter, b);
  while (json_object_iter_next (&iter, &key, &value))
    if (!json_object_has_member (a, key) && !g_ptr_array_find_with_equal_func (keys, key, g_str_equal, NULL))
      g_ptr_array_add (keys, g_strdup (key));
}

/* Drops the overlay writes the event stream has caught up with. */
static void
domain_settle_overlay (Domain *domain)
{
  while (!g_queue_is_empty (&domain->overlay))
    {
      Request *write = g_queue_peek_head (&domain->overlay);
      if (write->answered_generation < 0 || write->answered_generation > domain->generation)
        break;
      request_unref (g_queue_pop_head (&domain->overlay));
    }
}

/* ---- Notifications ---- */

static void
notify (GQueue *out, const char *domain, GPtrArray *keys, DefaultsOrigin origin)
{
  if (keys->len == 0)
    return;
  Notification *notification = g_new0 (Notification, 1);
  notification->domain = g_strdup (domain);
  g_ptr_array_add (keys, NULL);
  notification->keys = g_strdupv ((char **) keys->pdata);
  g_ptr_array_remove_index (keys, keys->len - 1);
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

static void
run_notification (DefaultsClient *client, Notification *notification)
{
  DefaultsChangeFunc change_func;
  DefaultsConnectionFunc connection_func;
  gpointer change_data, connection_data;
  g_mutex_lock (&client->lock);
  change_func = client->change_func;
  change_data = client->change_data;
  connection_func = client->connection_func;
  connection_data = client->connection_data;
  g_mutex_unlock (&client->lock);
  if (notification->is_connection)
    {
      if (connection_func != NULL)
        connection_func (client, notification->connected, connection_data);
    }
  else if (change_func != NULL)
    change_func (client, notification->domain, (const char *const *) notification->keys, notification->origin, change_data);
}

typedef struct {
  DefaultsClient *client;
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
          ContextCall *call = g_new0 (ContextCall, 1);
          call->client = client;
          call->notification = notification;
          g_main_context_invoke_full (client->context, G_PRIORITY_DEFAULT, run_in_context, call, context_call_free);
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

/* Writes a whole line, waiting for room at most the timeout. Lock held. */
static gboolean
send_line (DefaultsClient *client, const char *line)
{
  if (client->fd < 0)
    return FALSE;
  size_t length = strlen (line);
  size_t sent = 0;
  gint64 deadline = g_get_monotonic_time () + (gint64) client->timeout_ms * 1000;
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
          struct pollfd writable = { client->fd, POLLOUT, 0 };
          if (left > 0 && poll (&writable, 1, (int) left) > 0)
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
send_request (DefaultsClient *client, Request *request)
{
  if (!send_line (client, request->line))
    return FALSE;
  g_queue_push_tail (&client->in_flight, request_ref (request));
  return TRUE;
}

/* Waits for a request's answer, at most the timeout. Lock held. */
static gboolean
wait_for (DefaultsClient *client, Request *request, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) client->timeout_ms * 1000;
  while (!request->done)
    if (!g_cond_wait_until (&client->answered, &client->lock, deadline))
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

/* Subscribes to and loads a domain. Lock held; the get's request is answered for waiting. */
static Request *
load_domain (DefaultsClient *client, Domain *domain)
{
  JsonObject *subscribe = json_object_new ();
  json_object_set_string_member (subscribe, "op", "subscribe");
  JsonArray *names = json_array_new ();
  json_array_add_string_element (names, domain->name);
  json_object_set_array_member (subscribe, "domains", names);
  Request *subscription = request_new (client, REQUEST_SUBSCRIBE, domain->name, subscribe);
  gboolean sent = send_request (client, subscription);
  request_unref (subscription);
  if (!sent)
    return NULL;
  JsonObject *get = json_object_new ();
  add_domain_members (get, "get", domain->name);
  Request *request = request_new (client, REQUEST_GET, domain->name, get);
  if (!send_request (client, request))
    {
      request_unref (request);
      return NULL;
    }
  domain->loading = TRUE;
  return request;
}

/* ---- Answers and events (reader thread, lock held) ---- */

static void
fail_request (Request *request, DefaultsErrorCode code, const char *message)
{
  if (request->error == NULL)
    request->error = g_error_new_literal (DEFAULTS_ERROR, code, message);
}

static void
take_get_answer (DefaultsClient *client, Request *request, JsonObject *answer, GQueue *out)
{
  Domain *domain = domain_lookup (client, request->domain, TRUE);
  domain->loading = FALSE;
  JsonNode *value = json_object_get_member (answer, "value");
  if (value == NULL || !JSON_NODE_HOLDS_OBJECT (value) || !json_object_has_member (answer, "generation"))
    return fail_request (request, DEFAULTS_ERROR_PROTOCOL, "a get answer without a value");
  JsonNode *forced_node = json_object_get_member (answer, "forced");
  JsonObject *forced = forced_node != NULL && JSON_NODE_HOLDS_OBJECT (forced_node)
                       ? json_object_ref (json_node_get_object (forced_node)) : json_object_new ();
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  /* A caller that waited reads the new state itself; anyone else is told what changed. */
  if (domain->loaded || request->abandoned)
    {
      add_differences (keys, domain->values, json_node_get_object (value));
      add_differences (keys, domain->forced, forced);
    }
  json_object_unref (domain->values);
  json_object_unref (domain->forced);
  domain->values = json_object_ref (json_node_get_object (value));
  domain->forced = forced;
  domain->generation = json_object_get_int_member (answer, "generation");
  domain->loaded = TRUE;
  domain_settle_overlay (domain);
  notify (out, domain->name, keys, DEFAULTS_ORIGIN_RESYNC);
}

static void
take_apply_answer (DefaultsClient *client, Request *request, JsonObject *answer, GQueue *out)
{
  Domain *domain = domain_lookup (client, request->domain, FALSE);
  if (request->error == NULL)
    {
      request->answered_generation = json_object_has_member (answer, "generation")
                                     ? json_object_get_int_member (answer, "generation") : 0;
      if (domain != NULL)
        domain_settle_overlay (domain);
      return;
    }
  /* Refused: the write leaves the overlay, and whoever read it is told of the value under it. */
  if (domain == NULL || !g_queue_remove (&domain->overlay, request))
    return;
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  if (request->set != NULL)
    {
      g_autoptr (GList) names = json_object_get_members (request->set);
      for (GList *name = names; name != NULL; name = name->next)
        g_ptr_array_add (keys, g_strdup (name->data));
    }
  for (char **name = request->remove; name != NULL && *name != NULL; name++)
    g_ptr_array_add (keys, g_strdup (*name));
  request_unref (request);
  notify (out, domain->name, keys, DEFAULTS_ORIGIN_RESYNC);
}

static void
take_answer (DefaultsClient *client, JsonObject *answer, GQueue *out)
{
  gint64 id = json_object_has_member (answer, "id") ? json_object_get_int_member (answer, "id") : -1;
  Request *request = g_queue_pop_head (&client->in_flight);
  if (request == NULL)
    return;
  if ((gint64) request->id != id)
    fail_request (request, DEFAULTS_ERROR_PROTOCOL, "an answer out of order");
  else if (!json_object_get_boolean_member_with_default (answer, "ok", FALSE))
    {
      JsonObject *failure = json_object_get_object_member (answer, "error");
      const char *code = failure != NULL ? json_object_get_string_member_with_default (failure, "code", "") : "";
      const char *message = failure != NULL ? json_object_get_string_member_with_default (failure, "message", code) : code;
      fail_request (request, defaults_error_code_from_name (code), message);
    }
  switch (request->kind)
    {
    case REQUEST_HELLO:
      if (request->error == NULL)
        client->connection_number = json_object_get_int_member_with_default (answer, "connection", -1);
      break;
    case REQUEST_GET:
      if (request->error == NULL)
        take_get_answer (client, request, answer, out);
      else if (domain_lookup (client, request->domain, FALSE) != NULL)
        domain_lookup (client, request->domain, FALSE)->loading = FALSE;
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
}

static DefaultsOrigin
origin_of (DefaultsClient *client, JsonObject *origin)
{
  if (origin == NULL)
    return DEFAULTS_ORIGIN_ANOTHER_PROCESS;
  const char *source = json_object_get_string_member_with_default (origin, "source", NULL);
  if (g_strcmp0 (source, "file") == 0)
    return DEFAULTS_ORIGIN_FILE;
  if (g_strcmp0 (source, "managed") == 0)
    return DEFAULTS_ORIGIN_MANAGED;
  if (g_strcmp0 (source, "roaming") == 0)
    return DEFAULTS_ORIGIN_ROAMING;
  if (json_object_get_int_member_with_default (origin, "connection", -2) == client->connection_number)
    return DEFAULTS_ORIGIN_THIS_CLIENT;
  return DEFAULTS_ORIGIN_ANOTHER_PROCESS;
}

static void
take_event (DefaultsClient *client, JsonObject *event, GQueue *out)
{
  if (g_strcmp0 (json_object_get_string_member_with_default (event, "event", ""), "didChange") != 0
      || json_object_has_member (event, "host"))
    return;
  const char *name = json_object_get_string_member_with_default (event, "domain", "");
  Domain *domain = domain_lookup (client, name, FALSE);
  gint64 generation = json_object_get_int_member_with_default (event, "generation", -1);
  if (domain == NULL || !domain->loaded || generation <= domain->generation)
    return;
  DefaultsOrigin origin = origin_of (client, json_object_get_object_member (event, "origin"));
  JsonObject *changes = json_object_get_object_member (event, "changes");
  if (changes == NULL)
    return;
  if (origin == DEFAULTS_ORIGIN_MANAGED)
    {
      /* The forced layer changed: load the domain again, which reports what changed. */
      Request *reload = load_domain (client, domain);
      if (reload != NULL)
        {
          reload->abandoned = TRUE;
          request_unref (reload);
        }
      return;
    }
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
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
      g_ptr_array_add (keys, g_strdup (key));
    }
  domain->generation = generation;
  domain_settle_overlay (domain);
  /* This client's own changes were reported when they were made. */
  if (origin != DEFAULTS_ORIGIN_THIS_CLIENT)
    notify (out, domain->name, keys, origin);
}

static void
take_line (DefaultsClient *client, const char *line, gsize length, GQueue *out)
{
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, line, (gssize) length, NULL))
    return;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  JsonObject *object = json_node_get_object (root);
  if (json_object_has_member (object, "event"))
    take_event (client, object, out);
  else
    take_answer (client, object, out);
}

/* ---- The connection (reader thread) ---- */

/* Every request sent and not answered: applies go back, in order, before those not yet sent;
 * the others fail. Lock held. */
static void
lose_connection (DefaultsClient *client, GQueue *out)
{
  if (client->fd >= 0)
    close (client->fd);
  client->fd = -1;
  client->connection_number = -1;
  GQueue requeued = G_QUEUE_INIT;
  Request *request;
  while ((request = g_queue_pop_head (&client->in_flight)) != NULL)
    {
      if (request->kind == REQUEST_APPLY)
        {
          g_queue_push_tail (&requeued, request);
          continue;
        }
      fail_request (request, DEFAULTS_ERROR_NOT_CONNECTED, "the connection to defaultsd was lost");
      if (request->kind == REQUEST_GET && domain_lookup (client, request->domain, FALSE) != NULL)
        domain_lookup (client, request->domain, FALSE)->loading = FALSE;
      request->done = TRUE;
      request_unref (request);
    }
  while ((request = g_queue_pop_tail (&requeued)) != NULL)
    g_queue_push_head (&client->unsent, request);
  g_cond_broadcast (&client->answered);
  Notification *notification = g_new0 (Notification, 1);
  notification->is_connection = TRUE;
  notification->connected = FALSE;
  g_queue_push_tail (out, notification);
}

/* Connects, checks whom it talks to, says hello, loads the domains in use again and sends the
 * writes kept meanwhile. Lock held. */
static gboolean
connect_now (DefaultsClient *client, GQueue *out)
{
  g_autofree char *problem = defaults_socket_directory_problem (client->socket_path);
  if (problem != NULL)
    {
      g_debug ("defaultsd: not connecting: %s", problem);
      return FALSE;
    }
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen (client->socket_path) >= sizeof address.sun_path)
    return FALSE;
  strcpy (address.sun_path, client->socket_path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return FALSE;
  if (connect (fd, (struct sockaddr *) &address, sizeof address) != 0)
    {
      close (fd);
      return FALSE;
    }
  struct ucred peer;
  socklen_t peer_length = sizeof peer;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0 || (peer.uid != getuid () && peer.uid != 0))
    {
      g_debug ("defaultsd: the socket's server is neither this user nor root; not talking to it");
      close (fd);
      return FALSE;
    }
  client->fd = fd;
  JsonObject *hello = json_object_new ();
  json_object_set_string_member (hello, "op", "hello");
  json_object_set_string_member (hello, "client", g_get_prgname () != NULL ? g_get_prgname () : "libdefaultsd");
  Request *request = request_new (client, REQUEST_HELLO, NULL, hello);
  send_request (client, request);
  request_unref (request);
  GHashTableIter iter;
  Domain *domain;
  g_hash_table_iter_init (&iter, client->domains);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &domain))
    if (domain->loaded || domain->watchers > 0 || !g_queue_is_empty (&domain->overlay))
      {
        Request *reload = load_domain (client, domain);
        if (reload != NULL)
          {
            reload->abandoned = TRUE;
            request_unref (reload);
          }
      }
  while ((request = g_queue_pop_head (&client->unsent)) != NULL)
    {
      send_request (client, request);
      request_unref (request);
    }
  if (client->fd < 0)
    return FALSE;
  Notification *notification = g_new0 (Notification, 1);
  notification->is_connection = TRUE;
  notification->connected = TRUE;
  g_queue_push_tail (out, notification);
  return TRUE;
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
  GByteArray *buffer = g_byte_array_new ();
  guint retry_ms = 0;
  g_mutex_lock (&client->lock);
  while (!client->stopping)
    {
      GQueue out = G_QUEUE_INIT;
      if (client->fd < 0)
        {
          if (connect_now (client, &out))
            retry_ms = 0;
          else
            retry_ms = retry_ms == 0 ? FIRST_RETRY_MS : MIN (retry_ms * 2, LONGEST_RETRY_MS);
          g_byte_array_set_size (buffer, 0);
        }
      int fd = client->fd;
      g_mutex_unlock (&client->lock);
      deliver (client, &out);

      struct pollfd watched[2] = { { client->wake_fd, POLLIN, 0 }, { fd, POLLIN, 0 } };
      int ready = poll (watched, fd >= 0 ? 2 : 1, fd >= 0 ? -1 : (int) retry_ms);
      if (ready > 0 && (watched[0].revents & POLLIN))
        drain (client->wake_fd);
      gboolean lost = FALSE;
      if (ready > 0 && fd >= 0 && watched[1].revents != 0)
        {
          guint8 chunk[65536];
          ssize_t count = recv (fd, chunk, sizeof chunk, 0);
          if (count > 0)
            g_byte_array_append (buffer, chunk, (guint) count);
          else if (count == 0 || (errno != EAGAIN && errno != EINTR))
            lost = TRUE;
        }
      g_mutex_lock (&client->lock);
      if (fd >= 0 && fd == client->fd)
        {
          gsize start = 0;
          for (gsize i = 0; i < buffer->len; i++)
            if (buffer->data[i] == '\n')
              {
                take_line (client, (const char *) buffer->data + start, i - start, &out);
                start = i + 1;
              }
          g_byte_array_remove_range (buffer, 0, (guint) start);
          if (buffer->len > MAXIMUM_LINE_BYTES)
            lost = TRUE;
          if (lost)
            lose_connection (client, &out);
        }
      if (!g_queue_is_empty (&out))
        {
          g_mutex_unlock (&client->lock);
          deliver (client, &out);
          g_mutex_lock (&client->lock);
        }
    }
  g_mutex_unlock (&client->lock);
  g_byte_array_unref (buffer);
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
  client->dispatch_fd = dispatch == DEFAULTS_DISPATCH_POLL ? eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  /* The first connection is made here, so that the first read can be answered at once. */
  GQueue out = G_QUEUE_INIT;
  g_mutex_lock (&client->lock);
  connect_now (client, &out);
  g_mutex_unlock (&client->lock);
  deliver (client, &out);
  client->reader = g_thread_new ("defaultsd-reader", reader_main, client);
  return client;
}

void
defaults_client_free (DefaultsClient *client)
{
  if (client == NULL)
    return;
  guint64 one = 1;
  g_mutex_lock (&client->lock);
  client->stopping = TRUE;
  if (client->fd >= 0)
    shutdown (client->fd, SHUT_RDWR);
  g_mutex_unlock (&client->lock);
  if (write (client->wake_fd, &one, sizeof one) < 0)
    g_debug ("defaultsd: cannot wake the reader: %s", g_strerror (errno));
  g_thread_join (client->reader);
  if (client->fd >= 0)
    close (client->fd);
  g_queue_clear_full (&client->in_flight, (GDestroyNotify) request_unref);
  g_queue_clear_full (&client->unsent, (GDestroyNotify) request_unref);
  g_queue_clear_full (&client->waiting_notifications, (GDestroyNotify) notification_free);
  g_hash_table_unref (client->domains);
  close (client->wake_fd);
  if (client->dispatch_fd >= 0)
    close (client->dispatch_fd);
  if (client->context != NULL)
    g_main_context_unref (client->context);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->answered);
  g_free (client->socket_path);
  g_free (client);
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

/* The loaded domain, loading it (and waiting at most the timeout) when it is not. Lock held. */
static Domain *
loaded_domain (DefaultsClient *client, const char *name, gboolean watch)
{
  Domain *domain = domain_lookup (client, name, TRUE);
  if (watch)
    domain->watchers++;
  if (domain->loaded)
    return domain;
  if (!domain->loading && client->fd >= 0)
    {
      Request *request = load_domain (client, domain);
      if (request != NULL)
        {
          wait_for (client, request, NULL);
          request_unref (request);
        }
    }
  return domain->loaded ? domain : NULL;
}

gboolean
defaults_client_watch (DefaultsClient *client, const char *domain)
{
  g_mutex_lock (&client->lock);
  gboolean loaded = loaded_domain (client, domain, TRUE) != NULL;
  g_mutex_unlock (&client->lock);
  return loaded;
}

void
defaults_client_unwatch (DefaultsClient *client, const char *name)
{
  g_mutex_lock (&client->lock);
  Domain *domain = domain_lookup (client, name, FALSE);
  if (domain != NULL && domain->watchers > 0 && --domain->watchers == 0)
    {
      JsonObject *members = json_object_new ();
      json_object_set_string_member (members, "op", "unsubscribe");
      JsonArray *names = json_array_new ();
      json_array_add_string_element (names, name);
      json_object_set_array_member (members, "domains", names);
      Request *request = request_new (client, REQUEST_UNSUBSCRIBE, name, members);
      send_request (client, request);
      request_unref (request);
      /* Its copy would go stale unwatched: it is loaded afresh when next asked for. */
      if (g_queue_is_empty (&domain->overlay))
        g_hash_table_remove (client->domains, name);
    }
  g_mutex_unlock (&client->lock);
}

static JsonNode *
get_value (DefaultsClient *client, const char *name, const char *key, gboolean effective)
{
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE);
  JsonNode *value = NULL;
  if (domain != NULL)
    value = effective ? domain_effective_value (domain, key) : domain_user_value (domain, key);
  else if ((domain = domain_lookup (client, name, FALSE)) != NULL)
    /* Not loaded: this client's own writes, kept for the daemon, still read back. */
    value = domain_user_value (domain, key);
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
  Domain *domain = loaded_domain (client, name, FALSE);
  gboolean forced = domain != NULL && json_object_has_member (domain->forced, key);
  g_mutex_unlock (&client->lock);
  return forced;
}

gboolean
defaults_client_has_forced (DefaultsClient *client, const char *name)
{
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE);
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
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  g_mutex_lock (&client->lock);
  Domain *domain = loaded_domain (client, name, FALSE);
  if (domain != NULL)
    {
      g_autoptr (GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_autoptr (GList) members = json_object_get_members (domain->values);
      for (GList *link = members; link != NULL; link = link->next)
        if (domain_user_value (domain, link->data) != NULL)
          g_hash_table_add (names, g_strdup (link->data));
      g_autoptr (GList) forced = json_object_get_members (domain->forced);
      for (GList *link = forced; link != NULL; link = link->next)
        g_hash_table_add (names, g_strdup (link->data));
      for (GList *link = domain->overlay.head; link != NULL; link = link->next)
        {
          Request *write = link->data;
          g_autoptr (GList) set = write->set != NULL ? json_object_get_members (write->set) : NULL;
          for (GList *name_link = set; name_link != NULL; name_link = name_link->next)
            if (domain_user_value (domain, name_link->data) != NULL)
              g_hash_table_add (names, g_strdup (name_link->data));
        }
      GHashTableIter iter;
      char *key;
      g_hash_table_iter_init (&iter, names);
      while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
        g_ptr_array_add (keys, g_strdup (key));
    }
  g_mutex_unlock (&client->lock);
  g_ptr_array_sort (keys, compare_names);
  g_ptr_array_add (keys, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&keys), FALSE);
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
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  if (set != NULL)
    {
      g_autoptr (GList) names = json_object_get_members (set);
      for (GList *link = names; link != NULL; link = link->next)
        g_ptr_array_add (keys, g_strdup (link->data));
    }
  for (const char *const *key = remove; key != NULL && *key != NULL; key++)
    g_ptr_array_add (keys, g_strdup (*key));

  g_mutex_lock (&client->lock);
  /* Loaded and subscribed first: the events that follow settle the write's overlay. */
  loaded_domain (client, name, FALSE);
  Request *request = request_new (client, REQUEST_APPLY, name, members);
  request->set = set != NULL ? json_object_ref (set) : NULL;
  request->remove = g_strdupv ((char **) remove);
  Domain *domain = domain_lookup (client, name, TRUE);
  g_queue_push_tail (&domain->overlay, request_ref (request));
  gboolean answered = FALSE;
  if (!g_queue_is_empty (&client->unsent) || !send_request (client, request))
    g_queue_push_tail (&client->unsent, request_ref (request));
  else
    answered = wait_for (client, request, NULL) || request->done;
  GError *refusal = answered && request->error != NULL ? g_error_copy (request->error) : NULL;
  DefaultsChangeFunc change_func = client->change_func;
  gpointer change_data = client->change_data;
  g_mutex_unlock (&client->lock);
  request_unref (request);

  if (refusal != NULL)
    {
      g_propagate_error (error, refusal);
      return FALSE;
    }
  if (change_func != NULL && keys->len > 0)
    {
      g_ptr_array_add (keys, NULL);
      change_func (client, name, (const char *const *) keys->pdata, DEFAULTS_ORIGIN_THIS_CLIENT, change_data);
    }
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
  JsonObject *members = json_object_new ();
  json_object_set_string_member (members, "op", "synchronize");
  g_mutex_lock (&client->lock);
  if (!g_queue_is_empty (&client->unsent) || client->fd < 0)
    {
      g_mutex_unlock (&client->lock);
      json_object_unref (members);
      g_set_error (error, DEFAULTS_ERROR, DEFAULTS_ERROR_NOT_CONNECTED,
                   "defaultsd is not running; writes are kept until it is");
      return FALSE;
    }
  Request *request = request_new (client, REQUEST_SYNCHRONIZE, NULL, members);
  gboolean ok = send_request (client, request) && wait_for (client, request, error);
  if (!ok && error != NULL && *error == NULL)
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
