/* defaultsd-import-dconf: copies a person's dconf settings into defaultsd, once, before they
 * choose GSETTINGS_BACKEND=defaultsd (docs/GSETTINGS.md, "Moving from dconf").
 *
 *   defaultsd-import-dconf             reads `dconf dump /`
 *   dconf dump / | defaultsd-import-dconf -    reads a dump from standard input
 *   defaultsd-import-dconf --dry-run   says what it would write, and writes nothing
 *
 * Each dconf folder becomes its domain, as the GIO module maps it, and is written in one atomic
 * change. dconf's dump prints each value in GVariant's text form with the type annotations
 * needed to read it back exactly, so every value is stored as the module would store it. */
#include <stdio.h>
#include <string.h>

#include "defaultsd.h"
#include "mapping.h"

static gboolean dry_run;

static char *
read_dump (const char *source, GError **error)
{
  if (g_strcmp0 (source, "-") == 0)
    {
      g_autoptr (GIOChannel) input = g_io_channel_unix_new (0);
      char *text = NULL;
      gsize length = 0;
      if (g_io_channel_read_to_end (input, &text, &length, error) != G_IO_STATUS_NORMAL)
        return NULL;
      return text;
    }
  char *out = NULL;
  char *err = NULL;
  int status = 0;
  const char *argv[] = { "dconf", "dump", "/", NULL };
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, error))
    return NULL;
  if (!g_spawn_check_wait_status (status, error))
    {
      g_prefix_error (error, "dconf dump / failed: %s: ", err != NULL ? g_strstrip (err) : "");
      g_free (out);
      g_free (err);
      return NULL;
    }
  g_free (err);
  return out;
}

int
main (int argc, char **argv)
{
  const char *source = NULL;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--dry-run") == 0)
      dry_run = TRUE;
    else if (strcmp (argv[i], "-") == 0)
      source = "-";
    else
      {
        fprintf (stderr, "usage: defaultsd-import-dconf [--dry-run] [-]\n");
        return 64;
      }
  g_autoptr (GError) error = NULL;
  g_autofree char *dump = read_dump (source, &error);
  if (dump == NULL)
    {
      fprintf (stderr, "defaultsd-import-dconf: %s\n", error->message);
      return 1;
    }
  g_autoptr (GKeyFile) file = g_key_file_new ();
  if (!g_key_file_load_from_data (file, dump, (gsize) -1, G_KEY_FILE_NONE, &error))
    {
      fprintf (stderr, "defaultsd-import-dconf: not a dconf dump: %s\n", error->message);
      return 1;
    }
  DefaultsClient *client = dry_run ? NULL : defaults_client_new (NULL, DEFAULTS_DISPATCH_THREAD, NULL);
  /* A command, not a GUI: it may wait for the daemon as long as a person would. */
  if (client != NULL)
    defaults_client_set_timeout (client, 10000);
  if (client != NULL && !defaults_client_is_connected (client))
    {
      fprintf (stderr, "defaultsd-import-dconf: defaultsd is not running at %s\n", defaults_client_get_socket_path (client));
      defaults_client_free (client);
      return 1;
    }
  int failures = 0;
  gsize group_count = 0;
  g_auto (GStrv) groups = g_key_file_get_groups (file, &group_count);
  for (gsize g = 0; g < group_count; g++)
    {
      /* A dump's group is the folder without its slashes at either end; "/" itself is "/". */
      g_autofree char *path = strcmp (groups[g], "/") == 0 ? g_strdup ("/") : g_strconcat ("/", groups[g], "/", NULL);
      g_autofree char *domain = defaultsd_domain_from_path (path);
      gsize key_count = 0;
      g_auto (GStrv) keys = g_key_file_get_keys (file, groups[g], &key_count, NULL);
      if (domain == NULL)
        {
          fprintf (stderr, "%s: no domain stands for this folder; its %zu keys are not copied\n", path, key_count);
          failures++;
          continue;
        }
      g_autoptr (JsonObject) set = json_object_new ();
      for (gsize k = 0; k < key_count; k++)
        {
          g_autofree char *text = g_key_file_get_value (file, groups[g], keys[k], NULL);
          g_autoptr (GError) parse_error = NULL;
          g_autoptr (GVariant) value = g_variant_parse (NULL, text, NULL, NULL, &parse_error);
          if (value == NULL)
            {
              fprintf (stderr, "%s%s: not a GVariant value (%s); not copied\n", path, keys[k], parse_error->message);
              failures++;
              continue;
            }
          json_object_set_member (set, keys[k], defaultsd_json_from_variant (value));
        }
      if (json_object_get_size (set) == 0)
        continue;
      printf ("%s: %u keys%s\n", domain, json_object_get_size (set), dry_run ? " (not written: --dry-run)" : "");
      if (dry_run)
        continue;
      g_autoptr (GError) write_error = NULL;
      if (!defaults_client_apply (client, domain, set, NULL, &write_error))
        {
          fprintf (stderr, "%s: not copied: %s\n", domain, write_error->message);
          failures++;
        }
    }
  if (client != NULL)
    {
      if (!defaults_client_synchronize (client, &error))
        {
          fprintf (stderr, "defaultsd-import-dconf: the copies may not be on disk yet: %s\n", error->message);
          failures++;
        }
      defaults_client_free (client);
    }
  return failures == 0 ? 0 : 1;
}
