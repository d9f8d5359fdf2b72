/* The GIO module that makes defaultsd a GSettings backend, named "defaultsd":
 * GSETTINGS_BACKEND=defaultsd chooses it. Every GSettings program then stores its settings in
 * defaultsd's domains, unmodified (docs/GSETTINGS.md).
 *
 * Ownership: the backend owns one DefaultsClient, whose copy of each domain answers every read
 * without a round trip once the domain is loaded; the client's reader thread tells the backend
 * of other processes' changes, and GLib's GSettingsBackend hands each change to its watchers on
 * their own main contexts. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>

#include <string.h>

#include "defaultsd.h"
#include "mapping.h"

typedef struct {
  GSettingsBackend parent_instance;
  DefaultsClient *client;
} DefaultsdSettingsBackend;

typedef struct {
  GSettingsBackendClass parent_class;
} DefaultsdSettingsBackendClass;

GType defaultsd_settings_backend_get_type (void);
G_DEFINE_DYNAMIC_TYPE (DefaultsdSettingsBackend, defaultsd_settings_backend, G_TYPE_SETTINGS_BACKEND)

#define BACKEND(object) ((DefaultsdSettingsBackend *) (object))

/* Other processes' changes, from the client's reader thread: GSettings reads the new values. */
static void
changed (DefaultsClient *client, const char *domain, const char *const *keys, DefaultsOrigin origin, gpointer user_data)
{
  GSettingsBackend *backend = user_data;
  if (origin == DEFAULTS_ORIGIN_THIS_CLIENT)
    return; /* told by write() itself, with its origin tag */
  g_autofree char *path = defaultsd_path_from_domain (domain);
  if (path == NULL)
    return;
  g_settings_backend_keys_changed (backend, path, keys, NULL);
  if (origin == DEFAULTS_ORIGIN_MANAGED || origin == DEFAULTS_ORIGIN_RESYNC)
    g_settings_backend_path_writable_changed (backend, path);
}

static void
connection_changed (DefaultsClient *client, gboolean connected, gpointer user_data)
{
  g_debug ("defaultsd: %s %s", connected ? "connected to" : "lost the connection to",
           defaults_client_get_socket_path (client));
}

static GVariant *
read_value (DefaultsdSettingsBackend *self, const char *key_path, const GVariantType *type, gboolean user_only)
{
  g_autofree char *domain = NULL, *key = NULL;
  if (!defaultsd_split_key (key_path, &domain, &key))
    return NULL;
  JsonNode *node = user_only ? defaults_client_get_user_value (self->client, domain, key)
                             : defaults_client_get (self->client, domain, key);
  if (node == NULL)
    return NULL;
  GVariant *value = defaultsd_variant_from_json (node, type);
  json_node_unref (node);
  return value;
}

static GVariant *
backend_read (GSettingsBackend *backend, const char *key, const GVariantType *expected_type, gboolean default_value)
{
  /* defaultsd has no default layer of its own for GSettings: the schema's defaults apply. */
  if (default_value)
    return NULL;
  return read_value (BACKEND (backend), key, expected_type, FALSE);
}

static GVariant *
backend_read_user_value (GSettingsBackend *backend, const char *key, const GVariantType *expected_type)
{
  return read_value (BACKEND (backend), key, expected_type, TRUE);
}

static gboolean
backend_get_writable (GSettingsBackend *backend, const char *key_path)
{
  g_autofree char *domain = NULL, *key = NULL;
  if (!defaultsd_split_key (key_path, &domain, &key))
    return FALSE;
  return !defaults_client_is_forced (BACKEND (backend)->client, domain, key);
}

/* One domain's part of a write: values to set and keys to remove. */
typedef struct {
  JsonObject *set;
  GPtrArray *remove;
} DomainChange;

static void
domain_change_free (DomainChange *change)
{
  json_object_unref (change->set);
  g_ptr_array_unref (change->remove);
  g_free (change);
}

typedef struct {
  DefaultsdSettingsBackend *self;
  GHashTable *changes; /* domain → DomainChange* */
  gboolean refused;
} TreeWalk;

static gboolean
add_to_change (gpointer key, gpointer value, gpointer data)
{
  TreeWalk *walk = data;
  g_autofree char *domain = NULL, *name = NULL;
  if (!defaultsd_split_key (key, &domain, &name) || defaults_client_is_forced (walk->self->client, domain, name))
    {
      walk->refused = TRUE;
      return TRUE;
    }
  DomainChange *change = g_hash_table_lookup (walk->changes, domain);
  if (change == NULL)
    {
      change = g_new0 (DomainChange, 1);
      change->set = json_object_new ();
      change->remove = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (walk->changes, g_strdup (domain), change);
    }
  if (value == NULL)
    g_ptr_array_add (change->remove, g_strdup (name));
  else
    json_object_set_member (change->set, name, defaultsd_json_from_variant (value));
  return FALSE;
}

/* Tells GSettings of the keys of a domain's change that did take effect. */
static void
announce (DefaultsdSettingsBackend *self, const char *domain, DomainChange *change)
{
  g_autofree char *path = defaultsd_path_from_domain (domain);
  g_autoptr (GList) names = json_object_get_members (change->set);
  for (GList *name = names; name != NULL; name = name->next)
    {
      g_autofree char *key = g_strconcat (path, name->data, NULL);
      g_settings_backend_changed (G_SETTINGS_BACKEND (self), key, NULL);
    }
  for (guint i = 0; i < change->remove->len && change->remove->pdata[i] != NULL; i++)
    {
      g_autofree char *key = g_strconcat (path, change->remove->pdata[i], NULL);
      g_settings_backend_changed (G_SETTINGS_BACKEND (self), key, NULL);
    }
}

/* Writes a tree of keys, one atomic `apply` per domain; nothing when a key is forced. When the
 * daemon refuses one domain's part after another's took effect, the one that took effect is
 * announced, since the caller is told the write failed. */
static gboolean
write_tree (DefaultsdSettingsBackend *self, GTree *tree)
{
  TreeWalk walk = { self, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) domain_change_free), FALSE };
  g_tree_foreach (tree, add_to_change, &walk);
  gboolean written = !walk.refused;
  g_autoptr (GPtrArray) applied = g_ptr_array_new ();
  GHashTableIter iter;
  const char *domain;
  DomainChange *change;
  g_hash_table_iter_init (&iter, walk.changes);
  while (written && g_hash_table_iter_next (&iter, (gpointer *) &domain, (gpointer *) &change))
    {
      g_ptr_array_add (change->remove, NULL);
      g_autoptr (GError) error = NULL;
      written = defaults_client_apply (self->client, domain, json_object_get_size (change->set) > 0 ? change->set : NULL,
                                       (const char *const *) change->remove->pdata, &error);
      if (written)
        {
          g_ptr_array_add (applied, (gpointer) domain);
          g_ptr_array_add (applied, change);
        }
      else
        g_debug ("defaultsd: the write to %s was refused: %s", domain, error->message);
    }
  if (!written)
    for (guint i = 0; i < applied->len; i += 2)
      announce (self, applied->pdata[i], applied->pdata[i + 1]);
  g_hash_table_unref (walk.changes);
  return written;
}

static gint
compare_keys (gconstpointer a, gconstpointer b, gpointer unused)
{
  return strcmp (a, b);
}

static void
unref_value (gpointer value)
{
  if (value != NULL)
    g_variant_unref (value);
}

/* A tree of one key, as GSettings hands several to write_tree; `value` NULL resets the key. */
static GTree *
one_key_tree (const char *key, GVariant *value)
{
  GTree *tree = g_tree_new_full (compare_keys, NULL, g_free, unref_value);
  g_tree_insert (tree, g_strdup (key), value != NULL ? g_variant_ref (value) : NULL);
  return tree;
}

static gboolean
backend_write (GSettingsBackend *backend, const char *key, GVariant *value, gpointer origin_tag)
{
  g_autoptr (GVariant) owned = g_variant_ref_sink (value);
  g_autoptr (GTree) tree = one_key_tree (key, owned);
  if (!write_tree (BACKEND (backend), tree))
    return FALSE;
  g_settings_backend_changed (backend, key, origin_tag);
  return TRUE;
}

static gboolean
backend_write_tree (GSettingsBackend *backend, GTree *tree, gpointer origin_tag)
{
  if (!write_tree (BACKEND (backend), tree))
    return FALSE;
  g_settings_backend_changed_tree (backend, tree, origin_tag);
  return TRUE;
}

static void
backend_reset (GSettingsBackend *backend, const char *key, gpointer origin_tag)
{
  g_autoptr (GTree) tree = one_key_tree (key, NULL);
  if (write_tree (BACKEND (backend), tree))
    g_settings_backend_changed (backend, key, origin_tag);
}

static void
backend_subscribe (GSettingsBackend *backend, const char *name)
{
  g_autofree char *domain = defaultsd_domain_from_path (name);
  if (domain != NULL)
    defaults_client_watch (BACKEND (backend)->client, domain);
}

static void
backend_unsubscribe (GSettingsBackend *backend, const char *name)
{
  g_autofree char *domain = defaultsd_domain_from_path (name);
  if (domain != NULL)
    defaults_client_unwatch (BACKEND (backend)->client, domain);
}

static void
backend_sync (GSettingsBackend *backend)
{
  g_autoptr (GError) error = NULL;
  if (!defaults_client_synchronize (BACKEND (backend)->client, &error))
    g_debug ("defaultsd: sync: %s", error->message);
}

/* Changes under a path are allowed unless the administrator forces a key there: as dconf's
 * locks, a forced key is the lockdown. */
static GPermission *
backend_get_permission (GSettingsBackend *backend, const char *path)
{
  g_autofree char *domain = defaultsd_domain_from_path (path);
  gboolean allowed = domain != NULL && !defaults_client_has_forced (BACKEND (backend)->client, domain);
  return g_simple_permission_new (allowed);
}

static void
defaultsd_settings_backend_init (DefaultsdSettingsBackend *self)
{
  self->client = defaults_client_new (NULL, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (self->client, changed, self);
  defaults_client_set_connection_func (self->client, connection_changed, self);
}

static void
defaultsd_settings_backend_finalize (GObject *object)
{
  defaults_client_free (BACKEND (object)->client);
  G_OBJECT_CLASS (defaultsd_settings_backend_parent_class)->finalize (object);
}

static void
defaultsd_settings_backend_class_init (DefaultsdSettingsBackendClass *class)
{
  GObjectClass *object_class = G_OBJECT_CLASS (class);
  GSettingsBackendClass *backend_class = G_SETTINGS_BACKEND_CLASS (class);
  object_class->finalize = defaultsd_settings_backend_finalize;
  backend_class->read = backend_read;
  backend_class->read_user_value = backend_read_user_value;
  backend_class->get_writable = backend_get_writable;
  backend_class->write = backend_write;
  backend_class->write_tree = backend_write_tree;
  backend_class->reset = backend_reset;
  backend_class->subscribe = backend_subscribe;
  backend_class->unsubscribe = backend_unsubscribe;
  backend_class->sync = backend_sync;
  backend_class->get_permission = backend_get_permission;
}

static void
defaultsd_settings_backend_class_finalize (DefaultsdSettingsBackendClass *class)
{
}

/* Below every other backend's priority, so that installing the module never changes which
 * backend a program gets: only GSETTINGS_BACKEND=defaultsd chooses it. */
#define BACKEND_PRIORITY (-10)

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* The type stays registered for the life of the process, as GSettings objects may. */
  g_type_module_use (G_TYPE_MODULE (module));
  defaultsd_settings_backend_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_SETTINGS_BACKEND_EXTENSION_POINT_NAME, defaultsd_settings_backend_get_type (),
                                  "defaultsd", BACKEND_PRIORITY);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT gchar **
g_io_module_query (void)
{
  return g_strsplit (G_SETTINGS_BACKEND_EXTENSION_POINT_NAME, "!", 0);
}
