/* GSettings' paths and GVariant values as defaultsd's domains and property-list values.
 *
 * Values: each type a plist holds naturally is stored so (b → bool; y n q i u x h → integer;
 * t → integer up to Int64.max; d → real; s o g → string; ay → data; a{s…} → dictionary; other
 * arrays and tuples → array), so that `defaults read` and a hand edit see real fields. What a
 * plist cannot hold (maybe types, dictionaries with keys that are not strings, a `t` past
 * Int64.max, a non-finite double) is stored as a string in GVariant's text format. Reading is
 * led by the schema's type, so both forms read back exactly. A `v` holds no type of its own:
 * one whose value is b, s, x, d, ay, as or a{sv} is stored naturally (and read back as that
 * type); any other is a one-member dictionary {"@<type>": value}. */
#include "mapping.h"

#include <math.h>
#include <string.h>

#define MAXIMUM_DOMAIN_BYTES 249

static gboolean
is_plain (guchar byte)
{
  return g_ascii_isalnum (byte) || byte == '-';
}

char *
defaultsd_domain_from_path (const char *path)
{
  if (path == NULL || path[0] != '/')
    return NULL;
  g_auto (GStrv) components = g_strsplit (path + 1, "/", -1);
  GString *domain = g_string_new (NULL);
  for (char **component = components; *component != NULL; component++)
    {
      if ((*component)[0] == '\0')
        {
          /* Only the trailing '/' leaves an empty component; "//" names nothing. */
          if (component[1] == NULL)
            break;
          g_string_free (domain, TRUE);
          return NULL;
        }
      if (domain->len > 0)
        g_string_append_c (domain, '.');
      for (const guchar *byte = (const guchar *) *component; *byte != '\0'; byte++)
        if (is_plain (*byte))
          g_string_append_c (domain, (char) *byte);
        else
          g_string_append_printf (domain, "_%02X", *byte);
    }
  if (domain->len == 0 || domain->len > MAXIMUM_DOMAIN_BYTES)
    {
      g_string_free (domain, TRUE);
      return NULL;
    }
  return g_string_free (domain, FALSE);
}

char *
defaultsd_path_from_domain (const char *domain)
{
  if (domain == NULL || domain[0] == '\0')
    return NULL;
  GString *path = g_string_new ("/");
  for (const char *c = domain; *c != '\0'; c++)
    {
      if (*c == '.')
        {
          if (c[1] == '.' || c[1] == '\0' || c == domain)
            goto refuse;
          g_string_append_c (path, '/');
        }
      else if (*c == '_')
        {
          int high = g_ascii_xdigit_value (c[1]), low = high < 0 ? -1 : g_ascii_xdigit_value (c[2]);
          if (low < 0 || (high << 4 | low) == 0 || (high << 4 | low) == '/')
            goto refuse;
          g_string_append_c (path, (char) (high << 4 | low));
          c += 2;
        }
      else if (is_plain ((guchar) *c))
        g_string_append_c (path, *c);
      else
        goto refuse;
    }
  g_string_append_c (path, '/');
  return g_string_free (path, FALSE);
refuse:
  g_string_free (path, TRUE);
  return NULL;
}

gboolean
defaultsd_split_key (const char *key_path, char **domain, char **key)
{
  const char *slash = key_path != NULL ? strrchr (key_path, '/') : NULL;
  if (slash == NULL || slash[1] == '\0')
    return FALSE;
  g_autofree char *folder = g_strndup (key_path, (gsize) (slash - key_path + 1));
  char *name = defaultsd_domain_from_path (folder);
  if (name == NULL)
    return FALSE;
  *domain = name;
  *key = g_strdup (slash + 1);
  return TRUE;
}

/* ---- GVariant → JSON ---- */

static JsonNode *
text_form (GVariant *value)
{
  g_autofree char *text = g_variant_print (value, FALSE);
  return json_node_init_string (json_node_alloc (), text);
}

static JsonNode *
object_node (JsonObject *object)
{
  /* The wire's rule: a dictionary whose only key starts with '$' travels wrapped. */
  if (json_object_get_size (object) == 1)
    {
      g_autoptr (GList) members = json_object_get_members (object);
      if (((const char *) members->data)[0] == '$')
        {
          JsonObject *wrapper = json_object_new ();
          json_object_set_object_member (wrapper, "$dict", object);
          object = wrapper;
        }
    }
  JsonNode *node = json_node_init_object (json_node_alloc (), object);
  json_object_unref (object);
  return node;
}

static gboolean is_typed_variant_name (const char *name);

/* Whether reading guesses this value of a `v` back from its plist value alone: one of b, s, x,
 * d, ay, as, a{sv}, and not one whose stored form reads as another type (a double stored as
 * text, a dictionary that looks like a typed variant). */
static gboolean
is_guessed (GVariant *inner)
{
  const GVariantType *type = g_variant_get_type (inner);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_DOUBLE))
    return isfinite (g_variant_get_double (inner));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_VARDICT))
    {
      if (g_variant_n_children (inner) != 1)
        return TRUE;
      g_autoptr (GVariant) entry = g_variant_get_child_value (inner, 0);
      g_autoptr (GVariant) key = g_variant_get_child_value (entry, 0);
      const char *name = g_variant_get_string (key, NULL);
      return !is_typed_variant_name (name) && strcmp (name, "$data") != 0 && strcmp (name, "$date") != 0;
    }
  static const char *const guessed[] = { "b", "s", "x", "ay", "as" };
  for (guint i = 0; i < G_N_ELEMENTS (guessed); i++)
    if (g_variant_type_equal (type, G_VARIANT_TYPE (guessed[i])))
      return TRUE;
  return FALSE;
}

static gboolean
is_typed_variant_name (const char *name)
{
  return name[0] == '@' && g_variant_type_string_is_valid (name + 1);
}

/* The value of an integer type that fits an Int64 (every one but `t`). */
static gint64
small_integer (GVariant *value)
{
  switch (g_variant_classify (value))
    {
    case G_VARIANT_CLASS_BYTE: return g_variant_get_byte (value);
    case G_VARIANT_CLASS_INT16: return g_variant_get_int16 (value);
    case G_VARIANT_CLASS_UINT16: return g_variant_get_uint16 (value);
    case G_VARIANT_CLASS_INT32: return g_variant_get_int32 (value);
    case G_VARIANT_CLASS_UINT32: return g_variant_get_uint32 (value);
    case G_VARIANT_CLASS_HANDLE: return g_variant_get_handle (value);
    default: return g_variant_get_int64 (value);
    }
}

JsonNode *
defaultsd_json_from_variant (GVariant *value)
{
  const GVariantType *type = g_variant_get_type (value);
  switch (g_variant_classify (value))
    {
    case G_VARIANT_CLASS_BOOLEAN:
      return json_node_init_boolean (json_node_alloc (), g_variant_get_boolean (value));
    case G_VARIANT_CLASS_BYTE:
    case G_VARIANT_CLASS_INT16:
    case G_VARIANT_CLASS_UINT16:
    case G_VARIANT_CLASS_INT32:
    case G_VARIANT_CLASS_UINT32:
    case G_VARIANT_CLASS_INT64:
    case G_VARIANT_CLASS_HANDLE:
      return json_node_init_int (json_node_alloc (), small_integer (value));
    case G_VARIANT_CLASS_UINT64:
      if (g_variant_get_uint64 (value) <= G_MAXINT64)
        return json_node_init_int (json_node_alloc (), (gint64) g_variant_get_uint64 (value));
      return text_form (value);
    case G_VARIANT_CLASS_DOUBLE:
      if (!isfinite (g_variant_get_double (value)))
        return text_form (value);
      return json_node_init_double (json_node_alloc (), g_variant_get_double (value));
    case G_VARIANT_CLASS_STRING:
    case G_VARIANT_CLASS_OBJECT_PATH:
    case G_VARIANT_CLASS_SIGNATURE:
      return json_node_init_string (json_node_alloc (), g_variant_get_string (value, NULL));
    case G_VARIANT_CLASS_VARIANT:
      {
        g_autoptr (GVariant) inner = g_variant_get_variant (value);
        JsonNode *natural = defaultsd_json_from_variant (inner);
        if (is_guessed (inner))
          return natural;
        JsonObject *typed = json_object_new ();
        g_autofree char *name = g_strconcat ("@", g_variant_get_type_string (inner), NULL);
        json_object_set_member (typed, name, natural);
        return object_node (typed);
      }
    case G_VARIANT_CLASS_ARRAY:
      {
        if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTESTRING))
          {
            gsize length;
            const guchar *bytes = g_variant_get_fixed_array (value, &length, 1);
            g_autofree char *encoded = g_base64_encode (bytes, length);
            JsonObject *data = json_object_new ();
            json_object_set_string_member (data, "$data", encoded);
            JsonNode *node = json_node_init_object (json_node_alloc (), data);
            json_object_unref (data);
            return node;
          }
        const GVariantType *element = g_variant_type_element (type);
        if (g_variant_type_is_dict_entry (element))
          {
            const GVariantType *key_type = g_variant_type_key (element);
            if (!g_variant_type_equal (key_type, G_VARIANT_TYPE_STRING)
                && !g_variant_type_equal (key_type, G_VARIANT_TYPE_OBJECT_PATH)
                && !g_variant_type_equal (key_type, G_VARIANT_TYPE_SIGNATURE))
              return text_form (value);
            JsonObject *object = json_object_new ();
            GVariantIter iter;
            g_variant_iter_init (&iter, value);
            GVariant *entry;
            while ((entry = g_variant_iter_next_value (&iter)) != NULL)
              {
                g_autoptr (GVariant) entry_key = g_variant_get_child_value (entry, 0);
                g_autoptr (GVariant) entry_value = g_variant_get_child_value (entry, 1);
                json_object_set_member (object, g_variant_get_string (entry_key, NULL),
                                        defaultsd_json_from_variant (entry_value));
                g_variant_unref (entry);
              }
            return object_node (object);
          }
        JsonArray *array = json_array_new ();
        GVariantIter iter;
        g_variant_iter_init (&iter, value);
        GVariant *child;
        while ((child = g_variant_iter_next_value (&iter)) != NULL)
          {
            json_array_add_element (array, defaultsd_json_from_variant (child));
            g_variant_unref (child);
          }
        JsonNode *node = json_node_init_array (json_node_alloc (), array);
        json_array_unref (array);
        return node;
      }
    case G_VARIANT_CLASS_TUPLE:
      {
        JsonArray *array = json_array_new ();
        for (gsize i = 0; i < g_variant_n_children (value); i++)
          {
            g_autoptr (GVariant) child = g_variant_get_child_value (value, i);
            json_array_add_element (array, defaultsd_json_from_variant (child));
          }
        JsonNode *node = json_node_init_array (json_node_alloc (), array);
        json_array_unref (array);
        return node;
      }
    case G_VARIANT_CLASS_MAYBE:
    case G_VARIANT_CLASS_DICT_ENTRY:
    default:
      return text_form (value);
    }
}

/* ---- JSON → GVariant ---- */

static GVariant *from_json (JsonNode *node, const GVariantType *type);

/* A value of `type` in GVariant's text format; NULL when the text is not one. */
static GVariant *
parse_text (JsonNode *node, const GVariantType *type)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  const char *text = json_node_get_string (node);
  const char *end = NULL;
  GVariant *value = g_variant_parse (type, text, NULL, &end, NULL);
  if (value != NULL && end != NULL && *end != '\0')
    {
      g_variant_unref (value);
      return NULL;
    }
  return value;
}

static gboolean
holds (JsonNode *node, GType value_type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == value_type;
}

static gboolean
integer_in (JsonNode *node, gint64 least, gint64 most, gint64 *out)
{
  if (!holds (node, G_TYPE_INT64))
    return FALSE;
  *out = json_node_get_int (node);
  return *out >= least && *out <= most;
}

/* The dictionary a JSON object stands for, the wire's "$dict" wrapper removed. */
static JsonObject *
dictionary_of (JsonNode *node)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  JsonObject *object = json_node_get_object (node);
  if (json_object_get_size (object) == 1 && json_object_has_member (object, "$dict"))
    {
      JsonNode *inner = json_object_get_member (object, "$dict");
      return JSON_NODE_HOLDS_OBJECT (inner) ? json_node_get_object (inner) : NULL;
    }
  return object;
}

static GVariant *
data_from_json (JsonNode *node)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  JsonObject *object = json_node_get_object (node);
  if (json_object_get_size (object) != 1 || !json_object_has_member (object, "$data"))
    return NULL;
  JsonNode *encoded = json_object_get_member (object, "$data");
  if (!holds (encoded, G_TYPE_STRING))
    return NULL;
  gsize length;
  guchar *bytes = g_base64_decode (json_node_get_string (encoded), &length);
  return g_variant_new_from_data (G_VARIANT_TYPE_BYTESTRING, bytes, length, TRUE, g_free, bytes);
}

/* What a `v` holds: a typed one-member dictionary, or a guess from the plist value alone. A
 * floating reference, or NULL. */
static GVariant *
variant_from_json (JsonNode *node)
{
  GVariant *inner = NULL;
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      gboolean single = json_object_get_size (object) == 1;
      g_autoptr (GList) members = json_object_get_members (object);
      const char *name = single ? members->data : "";
      if (single && strcmp (name, "$data") == 0)
        inner = from_json (node, G_VARIANT_TYPE_BYTESTRING);
      else if (single && is_typed_variant_name (name))
        inner = from_json (json_object_get_member (object, name), G_VARIANT_TYPE (name + 1));
      else if (!(single && strcmp (name, "$date") == 0))
        inner = from_json (node, G_VARIANT_TYPE_VARDICT);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      inner = from_json (node, G_VARIANT_TYPE_STRING_ARRAY);
      if (inner == NULL)
        inner = from_json (node, G_VARIANT_TYPE ("av"));
    }
  else if (holds (node, G_TYPE_BOOLEAN))
    inner = from_json (node, G_VARIANT_TYPE_BOOLEAN);
  else if (holds (node, G_TYPE_STRING))
    inner = from_json (node, G_VARIANT_TYPE_STRING);
  else if (holds (node, G_TYPE_INT64))
    inner = from_json (node, G_VARIANT_TYPE_INT64);
  else if (holds (node, G_TYPE_DOUBLE))
    inner = from_json (node, G_VARIANT_TYPE_DOUBLE);
  if (inner == NULL)
    return NULL;
  GVariant *boxed = g_variant_new_variant (inner);
  g_variant_unref (inner);
  return boxed;
}

static GVariant *
container_from_json (JsonNode *node, const GVariantType *type)
{
  if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTESTRING))
    {
      GVariant *data = data_from_json (node);
      return data != NULL ? g_variant_ref_sink (data) : NULL;
    }
  if (g_variant_type_is_maybe (type))
    return parse_text (node, type);
  if (g_variant_type_is_array (type) && g_variant_type_is_dict_entry (g_variant_type_element (type)))
    {
      const GVariantType *entry = g_variant_type_element (type);
      const GVariantType *key_type = g_variant_type_key (entry);
      if (!g_variant_type_equal (key_type, G_VARIANT_TYPE_STRING) && !g_variant_type_equal (key_type, G_VARIANT_TYPE_OBJECT_PATH)
          && !g_variant_type_equal (key_type, G_VARIANT_TYPE_SIGNATURE))
        return parse_text (node, type);
      JsonObject *object = dictionary_of (node);
      if (object == NULL)
        return NULL;
      GVariantBuilder builder;
      g_variant_builder_init (&builder, type);
      JsonObjectIter iter;
      const char *name;
      JsonNode *member;
      json_object_iter_init (&iter, object);
      while (json_object_iter_next (&iter, &name, &member))
        {
          g_autoptr (JsonNode) key_node = json_node_init_string (json_node_alloc (), name);
          g_autoptr (GVariant) key = from_json (key_node, key_type);
          GVariant *value = from_json (member, g_variant_type_value (entry));
          if (key == NULL || value == NULL)
            {
              if (value != NULL)
                g_variant_unref (value);
              g_variant_builder_clear (&builder);
              return NULL;
            }
          g_variant_builder_add_value (&builder, g_variant_new_dict_entry (key, value));
          g_variant_unref (value);
        }
      return g_variant_ref_sink (g_variant_builder_end (&builder));
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return NULL;
  JsonArray *array = json_node_get_array (node);
  guint length = json_array_get_length (array);
  gboolean is_array = g_variant_type_is_array (type);
  if (!is_array && !g_variant_type_is_tuple (type))
    return parse_text (node, type);
  if (!is_array && g_variant_type_n_items (type) != length)
    return NULL;
  /* An array's elements all have its element type; a tuple's items each their own. */
  GVariantBuilder builder;
  g_variant_builder_init (&builder, type);
  const GVariantType *item = is_array ? g_variant_type_element (type) : g_variant_type_first (type);
  for (guint i = 0; i < length; i++, item = is_array ? item : g_variant_type_next (item))
    {
      GVariant *element = from_json (json_array_get_element (array, i), item);
      if (element == NULL)
        {
          g_variant_builder_clear (&builder);
          return NULL;
        }
      g_variant_builder_add_value (&builder, element);
      g_variant_unref (element);
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/* A new non-floating reference, or NULL. */
static GVariant *
from_json (JsonNode *node, const GVariantType *type)
{
  GVariant *value = NULL;
  gint64 integer;
  if (node == NULL || !g_variant_type_is_definite (type))
    return NULL;
  switch (g_variant_type_peek_string (type)[0])
    {
    case 'b':
      if (holds (node, G_TYPE_BOOLEAN))
        value = g_variant_new_boolean (json_node_get_boolean (node));
      break;
    /* The integer types, each checked against its own range. */
    case 'y': value = integer_in (node, 0, G_MAXUINT8, &integer) ? g_variant_new_byte ((guchar) integer) : NULL; break;
    case 'n': value = integer_in (node, G_MININT16, G_MAXINT16, &integer) ? g_variant_new_int16 ((gint16) integer) : NULL; break;
    case 'q': value = integer_in (node, 0, G_MAXUINT16, &integer) ? g_variant_new_uint16 ((guint16) integer) : NULL; break;
    case 'i': value = integer_in (node, G_MININT32, G_MAXINT32, &integer) ? g_variant_new_int32 ((gint32) integer) : NULL; break;
    case 'h': value = integer_in (node, G_MININT32, G_MAXINT32, &integer) ? g_variant_new_handle ((gint32) integer) : NULL; break;
    case 'u': value = integer_in (node, 0, G_MAXUINT32, &integer) ? g_variant_new_uint32 ((guint32) integer) : NULL; break;
    case 'x': value = integer_in (node, G_MININT64, G_MAXINT64, &integer) ? g_variant_new_int64 (integer) : NULL; break;
    case 't':
      if (!integer_in (node, 0, G_MAXINT64, &integer))
        return parse_text (node, type);
      value = g_variant_new_uint64 ((guint64) integer);
      break;
    case 'd':
      if (holds (node, G_TYPE_DOUBLE))
        value = g_variant_new_double (json_node_get_double (node));
      else if (holds (node, G_TYPE_INT64))
        value = g_variant_new_double ((double) json_node_get_int (node));
      else
        return parse_text (node, type);
      break;
    case 's':
      if (holds (node, G_TYPE_STRING) && g_utf8_validate (json_node_get_string (node), -1, NULL))
        value = g_variant_new_string (json_node_get_string (node));
      break;
    case 'o':
      if (holds (node, G_TYPE_STRING) && g_variant_is_object_path (json_node_get_string (node)))
        value = g_variant_new_object_path (json_node_get_string (node));
      break;
    case 'g':
      if (holds (node, G_TYPE_STRING) && g_variant_is_signature (json_node_get_string (node)))
        value = g_variant_new_signature (json_node_get_string (node));
      break;
    case 'v':
      value = variant_from_json (node);
      break;
    default:
      return container_from_json (node, type);
    }
  return value != NULL ? g_variant_ref_sink (value) : NULL;
}

GVariant *
defaultsd_variant_from_json (JsonNode *node, const GVariantType *type)
{
  return from_json (node, type);
}
