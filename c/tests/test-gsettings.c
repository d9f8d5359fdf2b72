/* GSettings itself on the defaultsd backend, against the real daemon: every type round trips
 * exactly and is stored as the plist type a person expects; delayed apply is one atomic change;
 * revert writes nothing; another process's change reaches changed::key and a binding; a hand
 * edit of the wrong type reads as the schema default; a forced key is not writable. GLib's
 * warnings and criticals are fatal here, as g_test makes them. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "defaultsd.h"

#define DOMAIN "org.defaultsd.test"

static TestDaemon *daemon_under_test;

static gboolean
expire (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the default main context until `*flag`; FALSE after 10 s. */
static gboolean
wait_until (gboolean *flag)
{
  gboolean expired = FALSE;
  guint timeout = g_timeout_add_seconds (10, expire, &expired);
  while (!*flag && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (timeout);
  return *flag;
}

static char *
request (const char *format, ...)
{
  va_list arguments;
  va_start (arguments, format);
  g_autofree char *line = g_strdup_vprintf (format, arguments);
  va_end (arguments);
  return test_daemon_request (daemon_under_test, line);
}

static void
test_the_backend_is_defaultsd (void)
{
  GSettingsBackend *backend = g_settings_backend_get_default ();
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (backend), ==, "DefaultsdSettingsBackend");
  g_object_unref (backend);
}

/* Each key: a value to write, and how the daemon must hold it. */
static const struct { const char *key, *value, *stored; } values[] = {
  { "b", "true", "true" },
  { "y", "byte 200", "200" },
  { "n", "int16 -5", "-5" },
  { "q", "uint16 65535", "65535" },
  { "i", "-42", "-42" },
  { "u", "uint32 4000000000", "4000000000" },
  { "x", "int64 -9000000000", "-9000000000" },
  { "t", "uint64 18446744073709551615", "\"18446744073709551615\"" },
  { "d", "1.25", "1.25" },
  { "s", "'Adwaita-dark'", "\"Adwaita-dark\"" },
  { "o", "objectpath '/org/example'", "\"/org/example\"" },
  { "g", "signature 'a{sv}'", "\"a{sv}\"" },
  { "ay", "[byte 1, 2, 255]", "{\"$data\":\"AQL/\"}" },
  { "as", "['a', 'b c']", "[\"a\",\"b c\"]" },
  { "asv", "{'dark': <true>, 'size': <int32 12>}", "{\"dark\":true,\"size\":{\"@i\":12}}" },
  { "ass", "{'k': 'v'}", "{\"k\":\"v\"}" },
  { "ais", "{1: 'one'}", "\"{1: 'one'}\"" },
  { "tuple", "(3, 4)", "[3,4]" },
  { "ms", "just 'x'", "\"'x'\"" },
  { "v", "<'plain'>", "\"plain\"" },
};

static void
test_every_type_round_trips (void)
{
  g_autoptr (GSettings) settings = g_settings_new (DOMAIN);
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr (GVariant) default_value = g_settings_get_value (settings, values[i].key);
      g_autoptr (GVariant) value = g_variant_parse (g_variant_get_type (default_value), values[i].value, NULL, NULL, NULL);
      g_assert_nonnull (value);
      g_assert_true (g_settings_set_value (settings, values[i].key, value));
      g_autoptr (GVariant) back = g_settings_get_value (settings, values[i].key);
      g_assert_true (g_variant_equal (value, back));
    }
  g_settings_sync ();
  /* As the daemon holds them, and as a fresh process reads them back. */
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *answer = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"%s\"}", values[i].key);
      g_autofree char *expected = g_strdup_printf ("{\"ok\":true,\"value\":%s,", values[i].stored);
      if (!g_str_has_prefix (answer, expected))
        g_error ("%s is stored as %s, not %s", values[i].key, answer, values[i].stored);
    }
  g_autofree char *out = NULL;
  g_autofree char *command = g_strdup_printf ("gsettings get " DOMAIN " asv");
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_command_line_sync (command, &out, NULL, NULL, &error));
  g_assert_cmpstr (out, ==, "{'dark': <true>, 'size': <12>}\n");
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    g_settings_reset (settings, values[i].key);
  g_settings_sync ();
  g_autofree char *emptied = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\"}");
  g_assert_true (g_str_has_prefix (emptied, "{\"ok\":true,\"value\":{},"));
}

typedef struct {
  guint events;
  guint keys;
} Counter;

static void
count_event (DefaultsClient *client, const char *domain, const char *const *keys, DefaultsOrigin origin, gpointer data)
{
  Counter *counter = data;
  if (origin != DEFAULTS_ORIGIN_ANOTHER_PROCESS)
    return;
  g_atomic_int_inc (&counter->events);
  g_atomic_int_add (&counter->keys, (gint) g_strv_length ((char **) keys));
}

static void
test_delayed_apply_is_one_change_and_revert_writes_nothing (void)
{
  Counter counter = { 0, 0 };
  DefaultsClient *subscriber = defaults_client_new (daemon_under_test->socket_path, DEFAULTS_DISPATCH_THREAD, NULL);
  defaults_client_set_change_func (subscriber, count_event, &counter);
  g_assert_true (defaults_client_watch (subscriber, DOMAIN));

  g_autoptr (GSettings) settings = g_settings_new (DOMAIN);
  g_settings_delay (settings);
  g_settings_set_int (settings, "i", 7);
  g_settings_set_string (settings, "s", "delayed");
  g_settings_set_boolean (settings, "b", TRUE);
  g_assert_true (g_settings_get_has_unapplied (settings));
  g_autofree char *before = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"s\"}");
  g_assert_true (g_str_has_prefix (before, "{\"ok\":true,\"value\":null,"));
  g_settings_apply (settings);
  g_settings_sync ();
  g_autofree char *after = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\"}");
  g_assert_true (g_str_has_prefix (after, "{\"ok\":true,\"value\":{\"b\":true,\"i\":7,\"s\":\"delayed\"},"));
  /* The subscriber heard one event of three keys: the synchronize above followed its sending. */
  g_assert_true (defaults_client_synchronize (subscriber, NULL));
  g_assert_cmpuint (g_atomic_int_get (&counter.events), ==, 1);
  g_assert_cmpuint (g_atomic_int_get (&counter.keys), ==, 3);

  g_settings_set_int (settings, "i", 8);
  g_settings_revert (settings);
  g_settings_sync ();
  g_assert_cmpint (g_settings_get_int (settings, "i"), ==, 7);
  g_autofree char *reverted = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"i\"}");
  g_assert_true (g_str_has_prefix (reverted, "{\"ok\":true,\"value\":7,"));
  defaults_client_free (subscriber);
}

static void
note_changed (GSettings *settings, const char *key, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static void
note_notify (GObject *object, GParamSpec *spec, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static void
test_another_process_reaches_signals_and_bindings (void)
{
  g_autoptr (GSettings) settings = g_settings_new (DOMAIN);
  gboolean changed = FALSE, bound = FALSE;
  g_signal_connect (settings, "changed::s", G_CALLBACK (note_changed), &changed);
  g_autoptr (GSimpleAction) action = g_simple_action_new ("toggle", NULL);
  g_settings_bind (settings, "b", action, "enabled", G_SETTINGS_BIND_DEFAULT);
  g_settings_set_boolean (settings, "b", TRUE);
  g_assert_true (g_action_get_enabled (G_ACTION (action)));
  g_signal_connect (action, "notify::enabled", G_CALLBACK (note_notify), &bound);

  g_free (request ("{\"op\":\"apply\",\"domain\":\"" DOMAIN "\",\"set\":{\"s\":\"from elsewhere\",\"b\":false}}"));
  g_assert_true (wait_until (&changed));
  g_assert_true (wait_until (&bound));
  g_autofree char *text = g_settings_get_string (settings, "s");
  g_assert_cmpstr (text, ==, "from elsewhere");
  g_assert_false (g_action_get_enabled (G_ACTION (action)));
  g_settings_unbind (action, "enabled");
}

static void
test_a_value_of_the_wrong_type_reads_as_the_default (void)
{
  g_autoptr (GSettings) settings = g_settings_new (DOMAIN);
  gboolean changed = FALSE;
  g_signal_connect (settings, "changed::range", G_CALLBACK (note_changed), &changed);
  g_autofree char *path = g_build_filename (daemon_under_test->storage, DOMAIN ".plist", NULL);
  g_autofree char *temporary = g_strconcat (path, ".new", NULL);
  g_assert_true (g_file_set_contents (temporary,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict>"
      "<key>range</key><string>fast</string><key>i</key><real>2.5</real><key>d</key><integer>3</integer>"
      "</dict></plist>", -1, NULL));
  g_assert_cmpint (g_rename (temporary, path), ==, 0);
  g_assert_true (wait_until (&changed));
  g_assert_cmpint (g_settings_get_int (settings, "range"), ==, 5);
  g_assert_cmpint (g_settings_get_int (settings, "i"), ==, 0);
  g_assert_cmpfloat (g_settings_get_double (settings, "d"), ==, 3.0);
  g_autoptr (GVariant) user = g_settings_get_user_value (settings, "range");
  g_assert_null (user);
}

static void
test_a_forced_key_is_not_writable (void)
{
  if (getuid () != 0)
    {
      g_test_skip ("managed preferences are trusted only when root owns them");
      return;
    }
  g_autofree char *path = g_build_filename (daemon_under_test->managed, DOMAIN ".plist", NULL);
  g_autofree char *temporary = g_strconcat (path, ".new", NULL);
  g_autoptr (GSettings) settings = g_settings_new (DOMAIN);
  gboolean writable_changed = FALSE;
  g_signal_connect (settings, "writable-changed::u", G_CALLBACK (note_changed), &writable_changed);
  g_assert_true (g_settings_is_writable (settings, "u"));
  g_assert_true (g_file_set_contents (temporary,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>u</key><integer>9</integer></dict></plist>",
      -1, NULL));
  g_assert_cmpint (g_rename (temporary, path), ==, 0);
  g_assert_true (wait_until (&writable_changed));
  g_assert_false (g_settings_is_writable (settings, "u"));
  g_assert_cmpuint (g_settings_get_uint (settings, "u"), ==, 9);
  g_assert_false (g_settings_set_uint (settings, "u", 3));
  g_assert_cmpuint (g_settings_get_uint (settings, "u"), ==, 9);
  g_assert_true (g_settings_is_writable (settings, "s"));
  g_remove (path);
}

static void
test_relocatable_paths_map_reversibly (void)
{
  g_autoptr (GSettings) settings
    = g_settings_new_with_path (DOMAIN ".relocatable", "/org/defaultsd/test/profiles:/:b1dcc9dd-5262/");
  g_assert_true (g_settings_set_string (settings, "name", "Solarized"));
  g_settings_sync ();
  g_autofree char *answer = request ("{\"op\":\"get\",\"domain\":\"org.defaultsd.test.profiles_3A._3Ab1dcc9dd-5262\"}");
  g_assert_true (g_str_has_prefix (answer, "{\"ok\":true,\"value\":{\"name\":\"Solarized\"},"));
}

static char *
gsettings_get (const char *schema, const char *key)
{
  g_autofree char *command = g_strdup_printf ("gsettings get %s %s", schema, key);
  char *out = NULL;
  g_assert_true (g_spawn_command_line_sync (command, &out, NULL, NULL, NULL));
  return out;
}

/* A dconf dump copied in: each folder one domain, each value as the module stores it. */
static void
test_a_dconf_dump_is_imported (void)
{
  const char *dump = "[org/defaultsd/test]\n"
                     "i=42\n"
                     "s='from dconf'\n"
                     "u=uint32 7\n"
                     "asv={'size': <int32 12>}\n"
                     "\n"
                     "[org/defaultsd/test/profiles:/:imported]\n"
                     "name='Profile'\n";
  g_autofree char *dump_path = g_build_filename (daemon_under_test->directory, "dump", NULL);
  g_assert_true (g_file_set_contents (dump_path, dump, -1, NULL));
  g_autofree char *command = g_strdup_printf ("sh -c '\"$IMPORT_DCONF\" - < %s'", dump_path);
  g_autofree char *out = NULL;
  int status = 1;
  g_assert_true (g_spawn_command_line_sync (command, &out, NULL, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "org.defaultsd.test: 4 keys\norg.defaultsd.test.profiles_3A._3Aimported: 1 keys\n");
  g_autofree char *stored = request ("{\"op\":\"get\",\"domain\":\"" DOMAIN "\",\"key\":\"asv\"}");
  g_assert_true (g_str_has_prefix (stored, "{\"ok\":true,\"value\":{\"size\":{\"@i\":12}},"));
  g_autofree char *i = gsettings_get (DOMAIN, "i"), *u = gsettings_get (DOMAIN, "u"), *asv = gsettings_get (DOMAIN, "asv");
  g_assert_cmpstr (i, ==, "42\n");
  g_assert_cmpstr (u, ==, "uint32 7\n");
  g_assert_cmpstr (asv, ==, "{'size': <12>}\n");
}

/* From a real dconf database, through `dconf dump /`, in a D-Bus session of the test's own. */
static void
test_a_real_dconf_database_is_imported (void)
{
  if (g_find_program_in_path ("dconf") == NULL || g_find_program_in_path ("dbus-run-session") == NULL)
    {
      g_test_skip ("needs dconf and dbus-run-session");
      return;
    }
  g_autofree char *home = g_build_filename (daemon_under_test->directory, "dconf-home", NULL);
  g_assert_cmpint (g_mkdir_with_parents (home, 0700), ==, 0);
  g_autofree char *script = g_build_filename (home, "import.sh", NULL);
  g_assert_true (g_file_set_contents (script,
      "dconf write /org/defaultsd/test/d 2.5 &&\n"
      "dconf write /org/defaultsd/test/as \"['one', 'two']\" &&\n"
      "\"$IMPORT_DCONF\"\n", -1, NULL));
  g_autofree char *config = g_build_filename (home, ".config", NULL);
  g_auto (GStrv) environment = g_get_environ ();
  environment = g_environ_setenv (environment, "HOME", home, TRUE);
  environment = g_environ_setenv (environment, "XDG_CONFIG_HOME", config, TRUE);
  environment = g_environ_setenv (environment, "XDG_RUNTIME_DIR", home, TRUE);
  const char *argv[] = { "dbus-run-session", "--", "sh", script, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 1;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, environment, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, NULL));
  if (status != 0)
    g_error ("the import from dconf failed: %s%s", out, err);
  g_assert_true (strstr (out, "org.defaultsd.test: 2 keys") != NULL);
  g_autofree char *d = gsettings_get (DOMAIN, "d"), *as = gsettings_get (DOMAIN, "as");
  g_assert_cmpstr (d, ==, "2.5\n");
  g_assert_cmpstr (as, ==, "['one', 'two']\n");
}

/* The schema tool: a key's description, and a value checked against its range. */
static void
test_the_schema_tool_describes_and_checks (void)
{
  const char *tool = g_getenv ("SCHEMA_TOOL");
  g_autofree char *show = g_strdup_printf ("%s show " DOMAIN " range", tool);
  g_autofree char *out = NULL;
  int status = 1;
  g_assert_true (g_spawn_command_line_sync (show, &out, NULL, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "range (i): \n  default: 5\n  range: 1 to 10\n");
  g_autofree char *inside = g_strdup_printf ("%s check " DOMAIN " range 7", tool);
  g_assert_true (g_spawn_command_line_sync (inside, NULL, NULL, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  g_autofree char *outside = g_strdup_printf ("%s check " DOMAIN " range 11", tool);
  g_autofree char *err = NULL;
  g_assert_true (g_spawn_command_line_sync (outside, NULL, &err, &status, NULL));
  g_assert_cmpint (status, !=, 0);
  g_assert_cmpstr (err, ==, "11 is out of the range of range: 1 to 10\n");
  g_autofree char *wrong = g_strdup_printf ("%s check " DOMAIN " range '\"fast\"'", tool);
  g_autofree char *wrong_err = NULL;
  g_assert_true (g_spawn_command_line_sync (wrong, NULL, &wrong_err, &status, NULL));
  g_assert_cmpstr (wrong_err, ==, "range must be of type i\n");
  g_autofree char *describe = g_strdup_printf ("%s describe " DOMAIN, tool);
  g_autofree char *json = NULL;
  g_assert_true (g_spawn_command_line_sync (describe, &json, NULL, &status, NULL));
  g_assert_true (strstr (json, "{\"key\":\"range\",\"type\":\"i\",\"summary\":\"\",\"description\":\"\",\"default\":5,"
                               "\"range\":{\"type\":\"range\",\"min\":1,\"max\":10}}") != NULL);
}

int
main (int argc, char **argv)
{
  g_autofree char *schemas = g_dir_make_tmp ("defaultsd-schemas-XXXXXX", NULL);
  g_autofree char *compile = g_strdup_printf ("glib-compile-schemas --targetdir=%s %s", schemas,
                                              g_path_get_dirname (g_getenv ("SCHEMA_SOURCE")));
  int status = 1;
  if (!g_spawn_command_line_sync (compile, NULL, NULL, &status, NULL) || status != 0)
    g_error ("cannot compile the test schema: %s", compile);
  daemon_under_test = test_daemon_start (NULL);
  g_setenv ("GSETTINGS_SCHEMA_DIR", schemas, TRUE);
  g_setenv ("GIO_EXTRA_MODULES", g_getenv ("GIO_MODULES_DIR"), TRUE);
  g_setenv ("GSETTINGS_BACKEND", "defaultsd", TRUE);
  g_setenv ("DEFAULTSD_SOCKET", daemon_under_test->socket_path, TRUE);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gsettings/the-backend-is-defaultsd", test_the_backend_is_defaultsd);
  g_test_add_func ("/gsettings/every-type-round-trips", test_every_type_round_trips);
  g_test_add_func ("/gsettings/delayed-apply-and-revert", test_delayed_apply_is_one_change_and_revert_writes_nothing);
  g_test_add_func ("/gsettings/another-process-reaches-signals-and-bindings", test_another_process_reaches_signals_and_bindings);
  g_test_add_func ("/gsettings/a-value-of-the-wrong-type-reads-as-the-default", test_a_value_of_the_wrong_type_reads_as_the_default);
  g_test_add_func ("/gsettings/a-forced-key-is-not-writable", test_a_forced_key_is_not_writable);
  g_test_add_func ("/gsettings/relocatable-paths-map-reversibly", test_relocatable_paths_map_reversibly);
  g_test_add_func ("/gsettings/a-dconf-dump-is-imported", test_a_dconf_dump_is_imported);
  g_test_add_func ("/gsettings/a-real-dconf-database-is-imported", test_a_real_dconf_database_is_imported);
  g_test_add_func ("/gsettings/the-schema-tool-describes-and-checks", test_the_schema_tool_describes_and_checks);
  int result = g_test_run ();
  test_daemon_free (daemon_under_test);
  g_autofree char *remove = g_strdup_printf ("rm -rf '%s'", schemas);
  g_spawn_command_line_sync (remove, NULL, NULL, NULL, NULL);
  return result;
}
