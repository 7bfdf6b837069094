/*
 * The CDI spec files of prepared claims (SPEC R-DRA, R-CLAIM-8): one JSON
 * file per claim, <dir>/<driver>-device_<uid>.json, kind <driver>/device,
 * device i named claim-<uid>-<i>, written atomically so that a runtime
 * watching the folder sees the old file, the new one or none. Plain
 * blocking I/O on small files; no libevent.
 *
 * Every function returning int returns 0 or a negative errno and, on
 * error, sets *cause (when cause is not NULL) to a text naming the path or
 * the bad name, which the caller frees.
 */
#ifndef TOPOAWARE_CDI_H
#define TOPOAWARE_CDI_H

#include <stddef.h>

struct spares;

/* The lowest version that allows device names starting with a digit and
 * the one every DRA-capable containerd reads (protocols.md §6.4). */
#define CDI_VERSION		"0.5.0"
#define CDI_CLASS		"device"
#define CDI_DEFAULT_DIR		"/var/run/cdi"
/* A claim has at most 32 allocation results, so at most 32 devices. */
#define CDI_MAX_DEVICES		32
/* Longer claim UIDs are refused; Kubernetes' are 36-character UUIDs. With
 * the driver's 63 the staged file name stays well within NAME_MAX. */
#define CDI_UID_MAX		128
/* Kubernetes' limit for driver names. */
#define CDI_DRIVER_MAX		63
/* A larger file is not one of ours. */
#define CDI_SPEC_MAX		(1024 * 1024)
/* What a write is staged in, beside the spec; CDI ignores the name. */
#define CDI_TMP_SUFFIX		".tmp"

/*
 * Replaces <dir>/<driver>-device_<uid>.json with a spec holding n devices
 * (1 <= n <= CDI_MAX_DEVICES), device i setting the environment variable
 * edits[i] ("K=V", K not empty). dir is created 0755 when absent (its
 * parent must exist). The driver must be a DNS subdomain of at most
 * CDI_DRIVER_MAX characters starting with a letter (a CDI vendor); the uid
 * a name of at most CDI_UID_MAX letters, digits, '-', '_', '.' and ':'
 * other than "." and holding no "..". The file is replaced atomically for
 * its readers but not synced: what is durable is the claim in the state
 * journal, and the daemon writes every held claim's spec again at start
 * (dra.c), so a spec lost with the page cache comes back before the
 * kubelet can use it. On error the old spec, if any, is left as it was
 * and no temporary file stays behind. A spec there with the same text is
 * left alone, unless fresh says none is expected (a claim not held
 * before): then it is written without being read first.
 */
int	cdi_write(struct spares *, const char *dir, const char *driver,
	    const char *uid, const char *const *edits, size_t n, int fresh,
	    char **cause);

/*
 * The bytes cdi_write writes for these edits (caller frees), unchecked:
 * for comparing a spec on disk. NULL when an edit is not UTF-8.
 */
char	*cdi_spec_text(const char *driver, const char *uid,
	    const char *const *edits, size_t n);

/* Removes the claim's spec (and a leftover temporary file); an absent one,
 * or an absent dir, is not an error. */
int	cdi_remove(struct spares *, const char *dir, const char *driver,
	    const char *uid, char **cause);
/*
 * The spares (spares.h) of the CDI folder dir, for cdi_write and
 * cdi_remove (NULL: none kept): a removed spec is emptied and kept under
 * a hidden name that no CDI reader loads (CDI_SPARES<n>, not .json nor
 * .yaml), and the next spec written goes into it and is renamed into
 * place, instead of making and freeing an inode per claim. At most
 * CDI_SPARES_CAP are kept.
 */
#define CDI_SPARES	".topoaware-spare."
#define CDI_SPARES_CAP	128
struct spares	*cdi_spares_new(const char *dir);
/*
 * Makes empty spares in dir (made if absent) until there are want, so
 * that the specs of the next claims are written without making an inode
 * on the path of their answer: how many it made, or -errno with *cause.
 */
int		 cdi_spares_ahead(struct spares *, const char *dir,
		    size_t want, char **cause);

/*
 * The claim uids of the driver's specs in dir (names cdi_write would give,
 * uids cdi_check_uid accepts), *uids and each uid for the caller to free;
 * an absent dir has none. 0, or a negative errno and a cause.
 */
int	cdi_list(const char *dir, const char *driver, char ***uids, size_t *n,
	    char **cause);

/* 0 when cdi_write would accept the name, else -EINVAL and a cause. */
int	cdi_check_driver(const char *driver, char **cause);
int	cdi_check_uid(const char *uid, char **cause);

/*
 * "<driver>/device=claim-<uid>-<i>", the fully qualified CDI device id the
 * kubelet passes to the runtime, and "<dir>/<driver>-device_<uid>.json".
 * Both only format: the caller frees the result and passes names that
 * cdi_write accepted.
 */
char	*cdi_device_id(const char *driver, const char *uid, size_t i);
char	*cdi_path(const char *dir, const char *driver, const char *uid);

#endif
