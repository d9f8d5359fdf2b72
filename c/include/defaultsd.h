/* libdefaultsd: the C client of defaultsd, the user-defaults daemon.
 *
 * A DefaultsClient keeps a local copy of each domain it was asked about, loaded with one round
 * trip and kept current by the daemon's didChange events, so a read never waits on the socket
 * once its domain is loaded. Writes are applied to that copy at once and sent to the daemon;
 * while the daemon is away (stopped, restarting, socket-activated and still starting) they are
 * kept in order and sent when it comes back, and the domains are loaded again.
 *
 * Every call that talks to the daemon waits at most the client's timeout (500 ms unless set),
 * one deadline for the whole call, and a call made from a change callback on the client's own
 * thread does not wait at all: nothing here can hang a GUI thread.
 *
 *   DefaultsClient *client = defaults_client_new (NULL, DEFAULTS_DISPATCH_CONTEXT, NULL);
 *   JsonNode *value = defaults_client_get (client, "com.example.app", "warpFactor");
 *   JsonNode *seven = json_node_init_int (json_node_alloc (), 7);
 *   defaults_client_set (client, "com.example.app", "warpFactor", seven, NULL);
 *   json_node_unref (seven);
 *
 * Values are JsonNodes in the daemon's wire form (docs/PROTOCOL.md, "Values"): an integer node
 * is a property-list integer, a double node a real, {"$date": ...} a date, {"$data": ...} data.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef DEFAULTSD_H
#define DEFAULTSD_H

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct _DefaultsClient DefaultsClient;

/* The errors of this library: the daemon's own codes, and the client's. */
#define DEFAULTS_ERROR (defaults_error_quark ())
GQuark defaults_error_quark (void);

typedef enum {
  /* The client's own. */
  DEFAULTS_ERROR_NOT_CONNECTED,     /* the daemon is not reachable; a write is kept and sent later,
                                     * unless as many as are kept already wait (then it is refused) */
  DEFAULTS_ERROR_TIMED_OUT,         /* no answer within the client's timeout */
  DEFAULTS_ERROR_UNTRUSTED,         /* the socket's folder or its server could be someone else's */
  DEFAULTS_ERROR_PROTOCOL,          /* an answer that is not the protocol */
  /* The daemon's codes (docs/PROTOCOL.md, "Errors"), in its order. */
  DEFAULTS_ERROR_BAD_JSON,
  DEFAULTS_ERROR_INVALID_UTF8,
  DEFAULTS_ERROR_LINE_TOO_LONG,
  DEFAULTS_ERROR_LINE_TIMED_OUT,
  DEFAULTS_ERROR_UNKNOWN_OP,
  DEFAULTS_ERROR_MISSING_PARAMETER,
  DEFAULTS_ERROR_INVALID_PARAMETER,
  DEFAULTS_ERROR_INVALID_DOMAIN,
  DEFAULTS_ERROR_INVALID_KEY,
  DEFAULTS_ERROR_INVALID_VALUE,
  DEFAULTS_ERROR_TOO_LARGE,
  DEFAULTS_ERROR_FORCED,
  DEFAULTS_ERROR_NO_MACHINE_ID,
  DEFAULTS_ERROR_INVALID_PLIST,
  DEFAULTS_ERROR_NOT_PERMITTED,
  DEFAULTS_ERROR_TOO_MANY_CONNECTIONS,
  DEFAULTS_ERROR_IO_ERROR,
  DEFAULTS_ERROR_SHUTTING_DOWN,
  DEFAULTS_ERROR_INTERNAL,
  DEFAULTS_ERROR_OTHER              /* a code this library does not know yet */
} DefaultsErrorCode;

/* The daemon's name of a code ("forced"), or the client's own ("not_connected"). */
const char *defaults_error_code_name (DefaultsErrorCode code);
/* The code of a daemon's error name; DEFAULTS_ERROR_OTHER for one not known. */
DefaultsErrorCode defaults_error_code_from_name (const char *name);

/* Who made a change that a DefaultsChangeFunc is told of. */
typedef enum {
  DEFAULTS_ORIGIN_THIS_CLIENT,      /* a write of this client's (told at once, before the write returns) */
  DEFAULTS_ORIGIN_ANOTHER_PROCESS,  /* a write over the socket by another connection */
  DEFAULTS_ORIGIN_FILE,             /* the domain's file was edited */
  DEFAULTS_ORIGIN_MANAGED,          /* the administrator's managed preferences changed */
  DEFAULTS_ORIGIN_ROAMING,          /* another machine of the user's */
  DEFAULTS_ORIGIN_RESYNC,           /* the domain was loaded again (after a reconnect, or a refused write) */
} DefaultsOrigin;

/* Told which keys of a domain changed. `keys` ends with NULL; the values are read with
 * defaults_client_get(), which already answers the new ones. */
typedef void (*DefaultsChangeFunc) (DefaultsClient     *client,
                                    const char         *domain,
                                    const char * const *keys,
                                    DefaultsOrigin      origin,
                                    gpointer            user_data);

/* Told when the connection to the daemon is made (again) or lost. */
typedef void (*DefaultsConnectionFunc) (DefaultsClient *client,
                                        gboolean        connected,
                                        gpointer        user_data);

/* Where the change and connection callbacks run. */
typedef enum {
  /* On `context` (the thread-default context at creation when NULL), through its main loop. */
  DEFAULTS_DISPATCH_CONTEXT,
  /* On the client's own reader thread, as soon as a change arrives: for callers that dispatch
   * further themselves (GLib's GSettingsBackend does). */
  DEFAULTS_DISPATCH_THREAD,
  /* When the caller calls defaults_client_dispatch(), which it does once the descriptor of
   * defaults_client_get_fd() is readable: for programs with a poll loop and no GLib loop. */
  DEFAULTS_DISPATCH_POLL,
} DefaultsDispatch;

/* A client of the daemon at `socket_path`: NULL for $DEFAULTSD_SOCKET, else the daemon's
 * default ($XDG_RUNTIME_DIR/defaultsd/socket, else /tmp/defaultsd-<uid>/socket). Never NULL:
 * a daemon that is not running yet is connected to as soon as it is. */
DefaultsClient *defaults_client_new (const char       *socket_path,
                                     DefaultsDispatch  dispatch,
                                     GMainContext     *context);
/* Stops the reader thread, closes the connection and frees the client. Writes not yet sent
 * are dropped: call defaults_client_synchronize() first to keep them. */
void            defaults_client_free (DefaultsClient *client);

/* How long a call waits for the daemon, in milliseconds. */
void            defaults_client_set_timeout (DefaultsClient *client, guint milliseconds);
const char     *defaults_client_get_socket_path (DefaultsClient *client);

void            defaults_client_set_change_func (DefaultsClient    *client,
                                                 DefaultsChangeFunc func,
                                                 gpointer           user_data);
void            defaults_client_set_connection_func (DefaultsClient        *client,
                                                     DefaultsConnectionFunc func,
                                                     gpointer               user_data);

/* Loads the domain (one round trip, at most the timeout) and subscribes to its changes.
 * Watching a domain twice needs two unwatches. FALSE when it could not be loaded now (it is
 * loaded once the daemon answers, and its keys reported as changed then). */
gboolean        defaults_client_watch (DefaultsClient *client, const char *domain);
void            defaults_client_unwatch (DefaultsClient *client, const char *domain);

/* A key's value as a program sees it: the administrator's forced value if there is one, else
 * the user's. NULL when there is none, or when the domain cannot be loaded now. A new
 * reference; loads (and watches) the domain on first use. */
JsonNode       *defaults_client_get (DefaultsClient *client, const char *domain, const char *key);
/* The user's own value, ignoring a forced one. */
JsonNode       *defaults_client_get_user_value (DefaultsClient *client, const char *domain, const char *key);
/* Whether the administrator forces the key: a write to it is refused (`forced`). */
gboolean        defaults_client_is_forced (DefaultsClient *client, const char *domain, const char *key);
/* Whether any key of the domain is forced. */
gboolean        defaults_client_has_forced (DefaultsClient *client, const char *domain);
/* The keys of the domain that have a value, user's or forced, sorted; free with g_strfreev(). */
char          **defaults_client_list_keys (DefaultsClient *client, const char *domain);

/* One atomic change of a domain: `set` maps keys to values (may be NULL), `remove` is a
 * NULL-terminated list (may be NULL). Put in the local copy at once, sent, and its answer waited
 * for (at most the timeout); then reported to the change function with
 * DEFAULTS_ORIGIN_THIS_CLIENT before it returns. Answers the daemon's refusal when it comes in
 * time (the write then leaves the local copy, and its keys are reported as changed). A write
 * that cannot be sent now, or that the daemon refused with `shutting_down`, is kept, in order,
 * and sent when the daemon is back: it answers TRUE, with no error. At most 10,000 writes, and
 * 16 MiB of them, are kept: past that a write answers FALSE with DEFAULTS_ERROR_NOT_CONNECTED at
 * once, and changes nothing (no read shows it, nobody is told of it). */
gboolean        defaults_client_apply (DefaultsClient     *client,
                                       const char         *domain,
                                       JsonObject         *set,
                                       const char * const *remove,
                                       GError            **error);
gboolean        defaults_client_set (DefaultsClient *client, const char *domain, const char *key,
                                     JsonNode *value, GError **error);
gboolean        defaults_client_remove (DefaultsClient *client, const char *domain, const char *key,
                                        GError **error);

/* Waits until every write made so far is durable on disk (the daemon's `synchronize`), at most
 * the timeout. DEFAULTS_ERROR_NOT_CONNECTED while writes wait for the daemon, and
 * DEFAULTS_ERROR_UNTRUSTED, with the reason, while the socket fails the trust check. */
gboolean        defaults_client_synchronize (DefaultsClient *client, GError **error);

/* Whether the client is connected to the daemon now. */
gboolean        defaults_client_is_connected (DefaultsClient *client);
/* How many writes wait for the daemon to come back. */
guint           defaults_client_get_unsent_count (DefaultsClient *client);

/* With DEFAULTS_DISPATCH_POLL: a descriptor that is readable while callbacks wait, and the call
 * that runs them. -1 with the other dispatch modes. */
int             defaults_client_get_fd (DefaultsClient *client);
void            defaults_client_dispatch (DefaultsClient *client);

/* The check every client makes before its first request: nobody but this user and root can
 * change the socket's folder or any folder above it. NULL when it holds, else why not
 * (free it). docs/RELIABILITY.md states the rule; PathTrust in the Swift code is its other
 * statement. */
char           *defaults_socket_directory_problem (const char *socket_path);

G_END_DECLS

#endif
