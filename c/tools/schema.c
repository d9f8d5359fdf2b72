/* defaultsd-schema: the installed GSettings schema of a domain, read through GIO, for `defaults
 * schema` and the Settings app (docs/GSETTINGS.md, "Schemas").
 *
 *   defaultsd-schema show DOMAIN [KEY]         each key's type, summary, description, default and
 *                                              range or choices, for people (`defaults schema`)
 *   defaultsd-schema describe DOMAIN           the schema of DOMAIN's GSettings path, as JSON
 *   defaultsd-schema check DOMAIN KEY VALUE    whether VALUE (the daemon's wire JSON) fits KEY:
 *                                              exit 0, or 1 with the reason on standard error
 *
 * `describe` prints {"schema": id, "path": path, "keys": [{"key", "type", "summary",
 * "description", "default", "range"}]}, each value in the daemon's wire form, and `range` one of
 * {"type": "type"}, {"type": "range", "min", "max"}, {"type": "enum", "choices": [...]} or
 * {"type": "flags", "choices": [...]}. A domain whose path no installed schema has exits 3.
 * Schemas come from $XDG_DATA_DIRS/glib-2.0/schemas and GSETTINGS_SCHEMA_DIR, as GSettings finds
 * them. Written in C because GIO's schema reader is C, and the Swift programs link no GLib. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The installed, fixed-path schema whose path is the domain's. */
static GSettingsSchema *
schema_of (const char *domain)
{
  g_autofree char *path = defaultsd_path_from_domain (domain);
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  if (path == NULL || source == NULL)
    return NULL;
  g_auto (GStrv) fixed = NULL;
  g_settings_schema_source_list_schemas (source, TRUE, &fixed, NULL);
  for (char **id = fixed; id != NULL && *id != NULL; id++)
    {
      GSettingsSchema *schema = g_settings_schema_source_lookup (source, *id, TRUE);
      if (schema != NULL && g_strcmp0 (g_settings_schema_get_path (schema), path) == 0)
        return schema;
      if (schema != NULL)
        g_settings_schema_unref (schema);
    }
  return NULL;
}

static JsonNode *
range_of (GSettingsSchemaKey *key)
{
  g_autoptr (GVariant) range = g_settings_schema_key_get_range (key);
  const char *kind;
  g_autoptr (GVariant) detail = NULL;
  g_variant_get (range, "(&sv)", &kind, &detail);
  JsonObject *object = json_object_new ();
  json_object_set_string_member (object, "type", kind);
  if (strcmp (kind, "range") == 0 && g_variant_n_children (detail) == 2)
    {
      g_autoptr (GVariant) least = g_variant_get_child_value (detail, 0);
      g_autoptr (GVariant) most = g_variant_get_child_value (detail, 1);
      json_object_set_member (object, "min", defaultsd_json_from_variant (least));
      json_object_set_member (object, "max", defaultsd_json_from_variant (most));
    }
  else if (strcmp (kind, "enum") == 0 || strcmp (kind, "flags") == 0)
    json_object_set_member (object, "choices", defaultsd_json_from_variant (detail));
  JsonNode *node = json_node_init_object (json_node_alloc (), object);
  json_object_unref (object);
  return node;
}

static int
describe (const char *domain)
{
  GSettingsSchema *schema = schema_of (domain);
  if (schema == NULL)
    {
      fprintf (stderr, "defaultsd-schema: no installed GSettings schema has the path of %s\n", domain);
      return 3;
    }
  JsonObject *root = json_object_new ();
  json_object_set_string_member (root, "schema", g_settings_schema_get_id (schema));
  json_object_set_string_member (root, "path", g_settings_schema_get_path (schema));
  JsonArray *keys = json_array_new ();
  g_auto (GStrv) names = g_settings_schema_list_keys (schema);
  qsort (names, g_strv_length (names), sizeof (char *), compare_names);
  for (char **name = names; *name != NULL; name++)
    {
      GSettingsSchemaKey *key = g_settings_schema_get_key (schema, *name);
      JsonObject *entry = json_object_new ();
      json_object_set_string_member (entry, "key", *name);
      json_object_set_string_member (entry, "type", g_variant_type_peek_string (g_settings_schema_key_get_value_type (key)));
      const char *summary = g_settings_schema_key_get_summary (key);
      const char *description = g_settings_schema_key_get_description (key);
      json_object_set_string_member (entry, "summary", summary != NULL ? summary : "");
      json_object_set_string_member (entry, "description", description != NULL ? description : "");
      g_autoptr (GVariant) fallback = g_settings_schema_key_get_default_value (key);
      json_object_set_member (entry, "default", defaultsd_json_from_variant (fallback));
      json_object_set_member (entry, "range", range_of (key));
      json_array_add_object_element (keys, entry);
      g_settings_schema_key_unref (key);
    }
  json_object_set_array_member (root, "keys", keys);
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), root);
  json_object_unref (root);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, node);
  g_autofree char *text = json_generator_to_data (generator, NULL);
  printf ("%s\n", text);
  g_settings_schema_unref (schema);
  return 0;
}

/* One paragraph: a description's lines joined, as gsettings describe shows it. */
static char *
paragraph (const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text != NULL ? text : "", "\n", -1);
  for (char **line = lines; *line != NULL; line++)
    g_strstrip (*line);
  char *joined = g_strjoinv (" ", lines);
  return g_strstrip (joined);
}

static int
show (const char *domain, const char *only)
{
  GSettingsSchema *schema = schema_of (domain);
  if (schema == NULL)
    {
      fprintf (stderr, "No installed GSettings schema has the path of %s\n", domain);
      return 3;
    }
  if (only != NULL && !g_settings_schema_has_key (schema, only))
    {
      fprintf (stderr, "The schema %s has no key %s\n", g_settings_schema_get_id (schema), only);
      g_settings_schema_unref (schema);
      return 1;
    }
  g_auto (GStrv) names = g_settings_schema_list_keys (schema);
  qsort (names, g_strv_length (names), sizeof (char *), compare_names);
  gboolean first = TRUE;
  for (char **name = names; *name != NULL; name++)
    {
      if (only != NULL && strcmp (*name, only) != 0)
        continue;
      GSettingsSchemaKey *key = g_settings_schema_get_key (schema, *name);
      g_autofree char *summary = paragraph (g_settings_schema_key_get_summary (key));
      g_autofree char *description = paragraph (g_settings_schema_key_get_description (key));
      g_autoptr (GVariant) fallback = g_settings_schema_key_get_default_value (key);
      g_autofree char *fallback_text = g_variant_print (fallback, FALSE);
      printf ("%s%s (%s): %s\n", first ? "" : "\n", *name, g_variant_type_peek_string (g_settings_schema_key_get_value_type (key)), summary);
      if (description[0] != '\0')
        printf ("  %s\n", description);
      printf ("  default: %s\n", fallback_text);
      g_autoptr (GVariant) range = g_settings_schema_key_get_range (key);
      const char *kind;
      g_autoptr (GVariant) detail = NULL;
      g_variant_get (range, "(&sv)", &kind, &detail);
      if (strcmp (kind, "range") == 0)
        {
          g_autoptr (GVariant) least = g_variant_get_child_value (detail, 0), most = g_variant_get_child_value (detail, 1);
          g_autofree char *least_text = g_variant_print (least, FALSE), *most_text = g_variant_print (most, FALSE);
          printf ("  range: %s to %s\n", least_text, most_text);
        }
      else if (strcmp (kind, "enum") == 0 || strcmp (kind, "flags") == 0)
        {
          g_autofree const char **choices = g_variant_get_strv (detail, NULL);
          g_autofree char *joined = g_strjoinv (", ", (char **) choices);
          printf ("  %s: %s\n", strcmp (kind, "enum") == 0 ? "choices" : "flags", joined);
        }
      g_settings_schema_key_unref (key);
      first = FALSE;
    }
  g_settings_schema_unref (schema);
  return 0;
}

static int
check (const char *domain, const char *name, const char *value_json)
{
  GSettingsSchema *schema = schema_of (domain);
  if (schema == NULL)
    {
      fprintf (stderr, "defaultsd-schema: no installed GSettings schema has the path of %s\n", domain);
      return 3;
    }
  int status = 0;
  if (!g_settings_schema_has_key (schema, name))
    {
      fprintf (stderr, "%s has no key %s\n", g_settings_schema_get_id (schema), name);
      status = 1;
    }
  else
    {
      GSettingsSchemaKey *key = g_settings_schema_get_key (schema, name);
      const GVariantType *type = g_settings_schema_key_get_value_type (key);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GVariant) value = json_parser_load_from_data (parser, value_json, -1, NULL)
                                   ? defaultsd_variant_from_json (json_parser_get_root (parser), type) : NULL;
      if (value == NULL)
        {
          fprintf (stderr, "%s must be of type %s\n", name, g_variant_type_peek_string (type));
          status = 1;
        }
      else if (!g_settings_schema_key_range_check (key, value))
        {
          g_autoptr (JsonNode) range = range_of (key);
          JsonObject *object = json_node_get_object (range);
          const char *kind = json_object_get_string_member (object, "type");
          g_autofree char *text = g_variant_print (value, FALSE);
          if (strcmp (kind, "range") == 0)
            {
              g_autoptr (GVariant) whole = g_settings_schema_key_get_range (key);
              const char *kind_name;
              g_autoptr (GVariant) bounds = NULL;
              g_variant_get (whole, "(&sv)", &kind_name, &bounds);
              g_autoptr (GVariant) least = g_variant_get_child_value (bounds, 0), most = g_variant_get_child_value (bounds, 1);
              g_autofree char *least_text = g_variant_print (least, FALSE), *most_text = g_variant_print (most, FALSE);
              fprintf (stderr, "%s is out of the range of %s: %s to %s\n", text, name, least_text, most_text);
            }
          else
            fprintf (stderr, "%s is not one of the choices of %s\n", text, name);
          status = 1;
        }
      g_settings_schema_key_unref (key);
    }
  g_settings_schema_unref (schema);
  return status;
}

int
main (int argc, char **argv)
{
  if ((argc == 3 || argc == 4) && strcmp (argv[1], "show") == 0)
    return show (argv[2], argc == 4 ? argv[3] : NULL);
  if (argc == 3 && strcmp (argv[1], "describe") == 0)
    return describe (argv[2]);
  if (argc == 5 && strcmp (argv[1], "check") == 0)
    return check (argv[2], argv[3], argv[4]);
  fprintf (stderr, "usage: defaultsd-schema show DOMAIN [KEY] | describe DOMAIN | check DOMAIN KEY VALUE\n");
  return 64;
}
