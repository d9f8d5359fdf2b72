/* A program built against the installed library through pkg-config alone: with no daemon
 * running, a read answers nothing at once and a write is kept for the daemon. */
#include <defaultsd.h>
#include <stdio.h>

int
main (void)
{
  DefaultsClient *client = defaults_client_new (NULL, DEFAULTS_DISPATCH_THREAD, NULL);
  JsonNode *value = defaults_client_get (client, "com.example.installed", "k");
  JsonNode *one = json_node_init_int (json_node_alloc (), 1);
  gboolean kept = defaults_client_set (client, "com.example.installed", "k", one, NULL);
  guint unsent = defaults_client_get_unsent_count (client);
  json_node_unref (one);
  defaults_client_free (client);
  if (value != NULL || !kept || unsent != 1)
    {
      fprintf (stderr, "installed-client: unexpected answers\n");
      return 1;
    }
  printf ("installed libdefaultsd: built through pkg-config, and a write is kept while no daemon runs\n");
  return 0;
}
