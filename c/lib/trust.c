/* The socket's folder trust check: PathTrust.yoursOrRoot's rule (Sources/DefaultsCore/System/
 * PathTrust.swift), stated here for C clients, which cannot call the Swift one. Every component
 * of the folder as written, and of the path its links lead to, up to `/`, belongs to this user
 * or root and cannot be written by its group or others; a sticky folder above (/tmp) is fine,
 * and so is a group that is only the owner's own private group. */
#include "defaultsd.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
accepts_owner (uid_t owner)
{
  return owner == getuid () || owner == 0;
}

/* Whether `gid` is `uid`'s private group: its primary group, named as the user, with no member
 * but the user. Reentrant lookups: clients check from any thread. */
static gboolean
is_private_group (gid_t gid, uid_t uid)
{
  struct passwd user, *found_user = NULL;
  struct group group, *found_group = NULL;
  g_autofree char *user_buffer = g_malloc (16384);
  g_autofree char *group_buffer = g_malloc (65536);
  if (getpwuid_r (uid, &user, user_buffer, 16384, &found_user) != 0 || found_user == NULL || user.pw_gid != gid)
    return FALSE;
  if (getgrgid_r (gid, &group, group_buffer, 65536, &found_group) != 0 || found_group == NULL
      || g_strcmp0 (group.gr_name, user.pw_name) != 0)
    return FALSE;
  for (char **member = group.gr_mem; member != NULL && *member != NULL; member++)
    if (g_strcmp0 (*member, user.pw_name) != 0)
      return FALSE;
  return TRUE;
}

static char *
component_problem (const char *component, gboolean is_leaf)
{
  struct stat status;
  if (lstat (component, &status) != 0)
    return g_strdup_printf ("%s cannot be inspected: %s", component, g_strerror (errno));
  if (S_ISLNK (status.st_mode))
    return accepts_owner (status.st_uid) ? NULL
           : g_strdup_printf ("%s is a link owned by uid %u", component, (unsigned) status.st_uid);
  if (!accepts_owner (status.st_uid))
    return g_strdup_printf ("%s is owned by uid %u", component, (unsigned) status.st_uid);
  if (!is_leaf && S_ISDIR (status.st_mode) && (status.st_mode & S_ISVTX))
    return NULL;
  gboolean others_write = (status.st_mode & S_IWOTH) != 0;
  gboolean group_write = (status.st_mode & S_IWGRP) != 0;
  if (others_write || (group_write && !is_private_group (status.st_gid, status.st_uid)))
    return g_strdup_printf ("%s can be written by its group or others (mode %o)", component,
                            (unsigned) (status.st_mode & 07777));
  return NULL;
}

/* `path` and each folder above it as written, up to `/` (or its first component when relative). */
static char *
chain_problem (const char *path, GHashTable *seen)
{
  g_autofree char *component = g_strdup (path);
  gboolean is_leaf = TRUE;
  while (component[0] != '\0')
    {
      if (g_hash_table_add (seen, g_strdup (component)))
        {
          char *problem = component_problem (component, is_leaf);
          if (problem != NULL)
            return problem;
        }
      if (strcmp (component, "/") == 0 || strcmp (component, ".") == 0)
        break;
      char *parent = g_path_get_dirname (component);
      if (strcmp (parent, component) == 0)
        {
          g_free (parent);
          break;
        }
      g_free (component);
      component = parent;
      is_leaf = FALSE;
    }
  return NULL;
}

char *
defaults_socket_directory_problem (const char *socket_path)
{
  g_autofree char *directory = g_path_get_dirname (socket_path);
  struct stat status;
  /* No folder: nothing listens there, and the connection attempt says so. */
  if (lstat (directory, &status) != 0 && errno == ENOENT)
    return NULL;
  char *resolved = realpath (directory, NULL);
  if (resolved == NULL)
    return g_strdup_printf ("%s cannot be inspected: %s", directory, g_strerror (errno));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  char *problem = chain_problem (directory, seen);
  if (problem == NULL)
    problem = chain_problem (resolved, seen);
  if (problem == NULL && (stat (resolved, &status) != 0 || !S_ISDIR (status.st_mode)))
    problem = g_strdup_printf ("%s is not a directory", directory);
  free (resolved);
  return problem;
}
