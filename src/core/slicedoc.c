/*
 * slicedoc.c owns the shape of our ResourceSlices (resource.k8s.io/v1):
 * the device objects with their attributes and consumable CPU capacity,
 * the chunking of the pool into slices, the name the API server generates
 * from, and the comparison that spares an update when the server already
 * holds what we would write.
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slicedoc.h"
#include "xmalloc.h"

/*
 * The API server cuts a generateName to 58 characters before it appends
 * five random ones; staying below keeps the node part whole, and the
 * label that holds it must stay within the 63 of a DNS label.
 */
#define SLICEDOC_GENERATE_MAX	58
#define SLICEDOC_LABEL_MAX	63
#define SLICEDOC_SUFFIX_LEN	5

int
slicedoc_count(int ndevs)
{
	if (ndevs <= 0)
		return (1);
	return ((ndevs + SLICEDOC_MAX_DEVICES - 1) / SLICEDOC_MAX_DEVICES);
}

char *
slicedoc_generate_name(const char *driver, const char *node)
{
	const char	*dot;
	char		*out, *p;
	size_t		 dlen, last, room, n, i;

	dlen = strlen(driver);
	out = xmalloc(dlen + strlen(node) + 3);
	for (i = 0; i < dlen; i++)
		out[i] = (char)tolower((unsigned char)driver[i]);
	p = out + dlen;
	*p++ = '-';

	/*
	 * The node part ends up inside the driver's last DNS label, so
	 * anything but [a-z0-9] (dots included: an empty or dash-edged label
	 * would be invalid) becomes a dash, and it is cut to what fits.
	 */
	dot = strrchr(driver, '.');
	last = dot != NULL ? dlen - (size_t)(dot - driver) - 1 : dlen;
	room = 0;
	if (last + 2 + SLICEDOC_SUFFIX_LEN < SLICEDOC_LABEL_MAX)
		room = SLICEDOC_LABEL_MAX - last - 2 - SLICEDOC_SUFFIX_LEN;
	if (dlen + 2 >= SLICEDOC_GENERATE_MAX)
		room = 0;
	else if (room > SLICEDOC_GENERATE_MAX - dlen - 2)
		room = SLICEDOC_GENERATE_MAX - dlen - 2;
	for (n = 0; node[n] != '\0' && n < room; n++) {
		if (isalnum((unsigned char)node[n]))
			*p++ = (char)tolower((unsigned char)node[n]);
		else
			*p++ = '-';
	}
	if (n != 0)
		*p++ = '-';
	*p = '\0';
	return (out);
}

static json_t *
slicedoc_device(const struct dradev *d)
{
	char	 cpus[16];

	snprintf(cpus, sizeof cpus, "%d", d->cpus);
	return (json_pack("{s:s, s:{s:{s:i}, s:{s:i}, s:{s:b}},"
	    " s:{s:{s:s, s:{s:s, s:{s:s, s:s}}}}, s:b}",
	    "name", d->name,
	    "attributes",
	    SLICEDOC_ATTR_NUMA, "int", d->node,
	    SLICEDOC_ATTR_SOCKET, "int", d->socket,
	    SLICEDOC_ATTR_SMT, "bool", d->smt,
	    "capacity",
	    SLICEDOC_CAP_CPU, "value", cpus,
	    "requestPolicy", "default", "1",
	    "validRange", "min", "1", "step", "1",
	    "allowMultipleAllocations", 1));
}

json_t *
slicedoc_build(const struct slicedoc_pool *sp, int index)
{
	json_t	*obj, *devices, *meta;
	char	*gen;
	int	 count, i, first, last;

	count = slicedoc_count(sp->ndevs);
	devices = json_array();
	first = index * SLICEDOC_MAX_DEVICES;
	last = first + SLICEDOC_MAX_DEVICES;
	if (last > sp->ndevs)
		last = sp->ndevs;
	for (i = first; i < last; i++)
		json_array_append_new(devices, slicedoc_device(&sp->devs[i]));

	gen = slicedoc_generate_name(sp->driver, sp->node);
	meta = json_pack("{s:s}", "generateName", gen);
	free(gen);
	if (sp->node_uid != NULL && *sp->node_uid != '\0') {
		json_object_set_new(meta, "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s, s:b}]",
		    "apiVersion", "v1", "kind", "Node", "name", sp->node,
		    "uid", sp->node_uid, "controller", 1));
	}
	obj = json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:{s:s, s:I, s:i},"
	    " s:o}}",
	    "apiVersion", "resource.k8s.io/v1",
	    "kind", "ResourceSlice",
	    "metadata", meta,
	    "spec",
	    "driver", sp->driver,
	    "nodeName", sp->node,
	    "pool", "name", sp->node, "generation",
	    (json_int_t)sp->generation, "resourceSliceCount", count,
	    "devices", devices);
	return (obj);
}

long long
slicedoc_generation(const json_t *obj)
{
	json_t	*gen;

	gen = json_object_get(json_object_get(json_object_get(obj, "spec"),
	    "pool"), "generation");
	if (!json_is_integer(gen))
		return (-1);
	return ((long long)json_integer_value(gen));
}

const char *
slicedoc_first_device(const json_t *obj)
{
	json_t	*devs;

	devs = json_object_get(json_object_get(obj, "spec"), "devices");
	return (json_string_value(json_object_get(json_array_get(devs, 0),
	    "name")));
}

/* What a server writes for a field nobody set. */
static int
slicedoc_empty(const json_t *v)
{
	if (v == NULL || json_is_null(v) || json_is_false(v))
		return (1);
	if (json_is_string(v))
		return (json_string_length(v) == 0);
	if (json_is_array(v))
		return (json_array_size(v) == 0);
	if (json_is_object(v))
		return (json_object_size(v) == 0);
	return (0);
}

/* have says what want says; extra fields of have must be empty. */
static int
slicedoc_covers(const json_t *have, const json_t *want)
{
	const char	*key;
	json_t		*wv, *hv;
	size_t		 i;

	if (json_is_object(want)) {
		if (!json_is_object(have))
			return (0);
		json_object_foreach((json_t *)want, key, wv) {
			hv = json_object_get(have, key);
			if (hv == NULL) {
				if (!slicedoc_empty(wv))
					return (0);
			} else if (!slicedoc_covers(hv, wv))
				return (0);
		}
		json_object_foreach((json_t *)have, key, hv) {
			if (json_object_get(want, key) == NULL &&
			    !slicedoc_empty(hv))
				return (0);
		}
		return (1);
	}
	if (json_is_array(want)) {
		if (!json_is_array(have) ||
		    json_array_size(have) != json_array_size(want))
			return (0);
		for (i = 0; i < json_array_size(want); i++)
			if (!slicedoc_covers(json_array_get(have, i),
			    json_array_get(want, i)))
				return (0);
		return (1);
	}
	if (json_is_null(want))
		return (slicedoc_empty(have));
	return (json_equal((json_t *)have, (json_t *)want));
}

/* An owner a server kept: the same uid and kind is enough. */
static int
slicedoc_has_owner(const json_t *have, const json_t *want)
{
	json_t		*hrefs, *wrefs, *w, *h;
	size_t		 i, j;

	hrefs = json_object_get(json_object_get(have, "metadata"),
	    "ownerReferences");
	wrefs = json_object_get(json_object_get(want, "metadata"),
	    "ownerReferences");
	json_array_foreach(wrefs, i, w) {
		json_array_foreach(hrefs, j, h) {
			if (json_equal(json_object_get(h, "uid"),
			    json_object_get(w, "uid")) &&
			    json_equal(json_object_get(h, "kind"),
			    json_object_get(w, "kind")))
				break;
		}
		if (j == json_array_size(hrefs))
			return (0);
	}
	return (1);
}

int
slicedoc_matches(const json_t *have, const json_t *want)
{
	if (!json_is_object(have) || !json_is_object(want))
		return (0);
	if (!slicedoc_covers(json_object_get(have, "spec"),
	    json_object_get(want, "spec")))
		return (0);
	return (slicedoc_has_owner(have, want));
}
