/* The GSettings mapping alone: paths to domains and back, and every GVariant type to the wire's
 * property-list values and back, exactly. */
#include "mapping.h"

#include <string.h>

static void
test_paths (void)
{
  static const struct { const char *path, *domain; } cases[] = {
    { "/org/gnome/desktop/interface/", "org.gnome.desktop.interface" },
    { "/org/gnome/terminal/legacy/profiles:/:b1dcc9dd-5262-4d8d-a863-c897e6d979b9/",
      "org.gnome.terminal.legacy.profiles_3A._3Ab1dcc9dd-5262-4d8d-a863-c897e6d979b9" },
    { "/com/example/some_app/", "com.example.some_5Fapp" },
    { "/com/example/v1.2/", "com.example.v1_2E2" },
    { "/caf\xc3\xa9/", "caf_C3_A9" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *domain = defaultsd_domain_from_path (cases[i].path);
      g_assert_cmpstr (domain, ==, cases[i].domain);
      g_autofree char *path = defaultsd_path_from_domain (cases[i].domain);
      g_assert_cmpstr (path, ==, cases[i].path);
    }
  static const char *const no_domain[] = { "/", "//", "/a//b/", "relative/", "" };
  for (guint i = 0; i < G_N_ELEMENTS (no_domain); i++)
    g_assert_null (defaultsd_domain_from_path (no_domain[i]));
  static const char *const no_path[] = { "a..b", ".a", "a.", "a_2", "a_00", "a_2F", "a b", "" };
  for (guint i = 0; i < G_N_ELEMENTS (no_path); i++)
    g_assert_null (defaultsd_path_from_domain (no_path[i]));
  g_autofree char *long_path = g_strdup_printf ("/%s/", g_strnfill (250, 'a'));
  g_assert_null (defaultsd_domain_from_path (long_path));

  g_autofree char *domain = NULL, *key = NULL;
  g_assert_true (defaultsd_split_key ("/org/gnome/desktop/interface/gtk-theme", &domain, &key));
  g_assert_cmpstr (domain, ==, "org.gnome.desktop.interface");
  g_assert_cmpstr (key, ==, "gtk-theme");
  g_autofree char *none = NULL, *none_key = NULL;
  g_assert_false (defaultsd_split_key ("/org/gnome/", &none, &none_key));
  g_assert_false (defaultsd_split_key ("/toplevel", &none, &none_key));
}

static char *
wire (JsonNode *node)
{
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

/* Each type: a value in GVariant's text form, and the exact wire form it is stored as. */
static const struct { const char *type, *value, *stored; } round_trips[] = {
  { "b", "true", "true" },
  { "y", "255", "255" },
  { "n", "-32768", "-32768" },
  { "q", "65535", "65535" },
  { "i", "-2147483648", "-2147483648" },
  { "u", "4294967295", "4294967295" },
  { "x", "-9223372036854775808", "-9223372036854775808" },
  { "t", "9223372036854775807", "9223372036854775807" },
  { "t", "18446744073709551615", "\"18446744073709551615\"" },
  { "h", "3", "3" },
  { "d", "5.0", "5.0" },
  { "d", "-0.25", "-0.25" },
  { "d", "inf", "\"inf\"" },
  { "s", "'Adwaita-dark'", "\"Adwaita-dark\"" },
  { "o", "'/org/example/Thing'", "\"/org/example/Thing\"" },
  { "g", "'a{sv}'", "\"a{sv}\"" },
  { "ay", "[byte 0x00, 0x01, 0xff]", "{\"$data\":\"AAH/\"}" },
  { "as", "['a', 'b']", "[\"a\",\"b\"]" },
  { "as", "@as []", "[]" },
  { "ai", "[1, 2, 3]", "[1,2,3]" },
  { "aas", "[['a'], []]", "[[\"a\"],[]]" },
  { "a{ss}", "{'k': 'v'}", "{\"k\":\"v\"}" },
  { "a{ss}", "{'$k': 'v'}", "{\"$dict\":{\"$k\":\"v\"}}" },
  { "a{si}", "{'one': 1}", "{\"one\":1}" },
  { "a{sv}", "{'b': <true>, 's': <'x'>, 'x': <int64 5>, 'd': <1.5>, 'i': <int32 7>, 'u': <uint32 8>}",
    "{\"b\":true,\"s\":\"x\",\"x\":5,\"d\":1.5,\"i\":{\"@i\":7},\"u\":{\"@u\":8}}" },
  { "a{sv}", "{'nested': <{'deep': <['a']>}>}", "{\"nested\":{\"deep\":[\"a\"]}}" },
  { "a{sv}", "{'av': <[<1>, <'s'>]>}", "{\"av\":{\"@av\":[{\"@i\":1},\"s\"]}}" },
  { "a{is}", "{1: 'one'}", "\"{1: 'one'}\"" },
  { "(ii)", "(1, 2)", "[1,2]" },
  { "(sb)", "('x', false)", "[\"x\",false]" },
  { "()", "()", "[]" },
  { "ms", "just 'x'", "\"'x'\"" },
  { "ms", "nothing", "\"nothing\"" },
  { "mi", "just 5", "\"5\"" },
  { "v", "<'plain'>", "\"plain\"" },
  { "v", "<(1, 'a')>", "{\"@(is)\":[1,\"a\"]}" },
  { "v", "<@ay []>", "{\"$data\":\"\"}" },
  { "a(si)", "[('a', 1)]", "[[\"a\",1]]" },
  { "v", "<inf>", "{\"@d\":\"inf\"}" },
  { "v", "<{'@s': <'x'>}>", "{\"@a{sv}\":{\"@s\":\"x\"}}" },
  { "v", "<{'$data': <'x'>, 'k': <1>}>", "{\"$data\":\"x\",\"k\":{\"@i\":1}}" },
};

static gint
compare_entries (gconstpointer a, gconstpointer b)
{
  GVariant *left = *(GVariant **) a, *right = *(GVariant **) b;
  g_autoptr (GVariant) left_key = g_variant_get_child_value (left, 0);
  g_autoptr (GVariant) right_key = g_variant_get_child_value (right, 0);
  g_autofree char *left_text = g_variant_print (left_key, FALSE), *right_text = g_variant_print (right_key, FALSE);
  return strcmp (left_text, right_text);
}

/* The value with every dictionary's entries in key order: a dictionary's meaning has no order,
 * and the daemon keeps its keys sorted. */
static GVariant *
canonical (GVariant *value)
{
  if (!g_variant_is_container (value))
    return value;
  g_autoptr (GPtrArray) children = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  for (gsize i = 0; i < g_variant_n_children (value); i++)
    g_ptr_array_add (children, canonical (g_variant_get_child_value (value, i)));
  const GVariantType *type = g_variant_get_type (value);
  if (g_variant_type_is_array (type) && g_variant_type_is_dict_entry (g_variant_type_element (type)))
    g_ptr_array_sort (children, compare_entries);
  GVariant *result;
  if (g_variant_type_is_variant (type))
    result = g_variant_new_variant (children->pdata[0]);
  else if (g_variant_type_is_maybe (type))
    result = g_variant_new_maybe (g_variant_type_element (type), children->len > 0 ? children->pdata[0] : NULL);
  else if (g_variant_type_is_array (type))
    result = g_variant_new_array (g_variant_type_element (type), (GVariant **) children->pdata, children->len);
  else if (g_variant_type_is_dict_entry (type))
    result = g_variant_new_dict_entry (children->pdata[0], children->pdata[1]);
  else
    result = g_variant_new_tuple ((GVariant **) children->pdata, children->len);
  g_variant_unref (value);
  return g_variant_ref_sink (result);
}

static void
test_values (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (round_trips); i++)
    {
      const GVariantType *type = G_VARIANT_TYPE (round_trips[i].type);
      g_autoptr (GError) error = NULL;
      g_autoptr (GVariant) value = g_variant_parse (type, round_trips[i].value, NULL, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (JsonNode) node = defaultsd_json_from_variant (value);
      g_autofree char *stored = wire (node);
      g_assert_cmpstr (stored, ==, round_trips[i].stored);
      /* Back as the daemon would answer it: parsed from the wire text. */
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, stored, -1, NULL));
      g_autoptr (GVariant) back = defaultsd_variant_from_json (json_parser_get_root (parser), type);
      g_assert_nonnull (back);
      g_assert_false (g_variant_is_floating (back));
      g_autoptr (GVariant) written = canonical (g_variant_ref (value)), read = canonical (g_variant_ref (back));
      if (!g_variant_equal (written, read))
        g_error ("%s %s came back as %s", round_trips[i].type, round_trips[i].value, g_variant_print (back, TRUE));
    }
}

/* A stored value that does not fit the schema's type is no value at all: never a warning. */
static void
test_mismatches (void)
{
  static const struct { const char *type, *stored; } cases[] = {
    { "i", "\"five\"" }, { "y", "256" }, { "y", "-1" }, { "i", "5.5" }, { "b", "1" }, { "s", "5" },
    { "u", "-1" }, { "t", "-1" }, { "t", "\"-1\"" }, { "o", "\"not a path\"" }, { "g", "\"(\"" },
    { "ay", "\"AAH/\"" }, { "ay", "{\"$data\":5}" }, { "as", "[\"a\",1]" }, { "(ii)", "[1]" }, { "(ii)", "[1,2,3]" },
    { "a{si}", "{\"a\":\"b\"}" }, { "ms", "\"just\"" }, { "ms", "5" }, { "a{is}", "{\"1\":\"one\"}" },
    { "d", "\"fast\"" }, { "x", "true" }, { "as", "{\"a\":1}" }, { "v", "null" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, cases[i].stored, -1, NULL));
      g_autoptr (GVariant) value = defaultsd_variant_from_json (json_parser_get_root (parser), G_VARIANT_TYPE (cases[i].type));
      if (value != NULL)
        g_error ("%s read from %s as %s", cases[i].type, cases[i].stored, g_variant_print (value, TRUE));
    }
  /* A hand edit that wrote an integer where a real belongs reads as that real. */
  g_autoptr (JsonNode) five = json_node_init_int (json_node_alloc (), 5);
  g_autoptr (GVariant) real = defaultsd_variant_from_json (five, G_VARIANT_TYPE_DOUBLE);
  g_assert_cmpfloat (g_variant_get_double (real), ==, 5.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mapping/paths", test_paths);
  g_test_add_func ("/mapping/values", test_values);
  g_test_add_func ("/mapping/mismatches", test_mismatches);
  return g_test_run ();
}
