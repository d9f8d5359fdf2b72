/* How GSettings' paths and values map to defaultsd's domains, keys and property-list values.
 * docs/GSETTINGS.md is the reader's statement of these rules; this file and mapping.c are
 * their only statement in code. */
#ifndef DEFAULTSD_GIO_MAPPING_H
#define DEFAULTSD_GIO_MAPPING_H

#include <gio/gio.h>
#include <json-glib/json-glib.h>

/* The domain of a GSettings folder path ("/org/gnome/desktop/interface/" →
 * "org.gnome.desktop.interface"): each component in turn, joined by '.', with every byte that is
 * not a letter, a digit or '-' written as '_' and two upper-case hex digits. NULL for a path
 * that names no domain ("/", or one whose domain would be longer than a domain may be). */
char     *defaultsd_domain_from_path (const char *path);
/* The GSettings folder path of a domain, the mapping above undone; NULL for a domain that no
 * path maps to. */
char     *defaultsd_path_from_domain (const char *domain);
/* Splits a GSettings key path ("/org/gnome/desktop/interface/gtk-theme") into its domain and
 * key; FALSE when it names no domain. */
gboolean  defaultsd_split_key (const char *key_path, char **domain, char **key);

/* A value in the daemon's wire form (docs/PROTOCOL.md, "Values"). */
JsonNode *defaultsd_json_from_variant (GVariant *value);
/* The value of `type` that `node` holds, as a new non-floating reference; NULL when it holds no
 * value of that type (which GSettings reads as "no user value"). */
GVariant *defaultsd_variant_from_json (JsonNode *node, const GVariantType *type);

#endif
