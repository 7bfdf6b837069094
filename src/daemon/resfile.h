/*
 * The resources.sh files of R-STATE-4 under the state directory: one per
 * container, and one per pool whose folder its shared containers' folders
 * link to.
 *
 * Every function returns 0 or a negative errno and, on error, sets *cause
 * to a text naming the path, which the caller frees.
 */
#ifndef TOPOAWARE_RESFILE_H
#define TOPOAWARE_RESFILE_H

#include <stddef.h>

struct spares;

#define RESFILE_NAME	"resources.sh"

/* One line NAME="value" of resources.sh. */
struct resfile_var {
	const char	*name;		/* [A-Z_a-z][A-Z_a-z0-9]* */
	const char	*value;		/* printable, no " \ $ ` */
};

/*
 * Writes <dir>/containers/<id>/resources.sh (mode 0644, as the Go policy)
 * atomically, one NAME="value" line per variable sorted by name. The id
 * must be a single safe path component: not empty, not starting with '.'
 * (hidden names are the daemon's own), nor holding '/' or control
 * characters.
 */
int	resfile_write(const char *dir, const char *id,
	    const struct resfile_var *, size_t, char **cause);
/*
 * resfile_write in two steps: the text it would write
 * (*out, caller frees), and writing such a text; for a caller that
 * compares before it writes.
 */
int	resfile_render(const char *id,
	    const struct resfile_var *, size_t, char **out, size_t *len,
	    char **cause);
int	resfile_put(struct spares *, const char *dir, const char *id,
	    const char *data, size_t len, char **cause);
/*
 * pools/<pool>/resources.sh, as resfile_put writes a container's; pool is
 * a name of resfile_pool_name.
 */
int	resfile_put_pool(const char *dir, const char *pool, const char *data,
	    size_t len, char **cause);
/* A pool's name as a file name: lower case, each run of other characters
 * one '-' ("NUMA node #0" is numa-node-0). The caller frees it. */
char	*resfile_pool_name(const char *);
/*
 * Makes the folder containers/<id> a relative link to its pool's folder
 * (../pools/<pool>), so that its resources.sh is the pool's, replacing
 * what was there at once; and whether it is that link already. known
 * (may be NULL) is the caller's note, kept across calls for one pool,
 * that the pool's own link was just found right: the many links of one
 * turn read it once.
 */
int	resfile_link(struct spares *, const char *dir, const char *id,
	    const char *pool, int *known, char **cause);
int	resfile_linked(const char *dir, const char *id, const char *pool);
/* Removes the file and its folder; an absent one is not an error. */
int	resfile_remove(struct spares *, const char *dir, const char *id,
	    char **cause);
/*
 * Removes the resources.sh of every container keep() does not want (the
 * ones that ended while the daemon was down). Returns how many went, or a
 * negative errno with a cause (the first failure; the rest are tried).
 */
int	resfile_prune(struct spares *, const char *dir,
	    int (*keep)(const char *id, void *), void *arg, char **cause);
/*
 * The spare folders of containers/ (spares.h) that resfile_put, _link,
 * _remove and _prune take a spares argument for (NULL: none kept): a
 * container that goes leaves its folder as a spare, which the next
 * container with a file of its own is given by a rename instead of new
 * inodes (links need none: each is a hard link of its pool's own link,
 * containers/.pool.<pool>). Spares (.spare.<n>) and pools' links have
 * hidden names, which no container id may have; at most 128 spares are
 * kept.
 */
struct spares	*resfile_spares_new(const char *dir);

#endif
