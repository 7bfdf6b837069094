/*
 * test_slicedoc.c: the ResourceSlice documents (R-SLICE, protocols.md 7.1,
 * anchor §9.2). On the recorded server (node k holds the CPUs congruent to
 * k mod 4, 28 each; nodes 0 and 2 are on package 0, 1 and 3 on package 1;
 * two threads per core) with CPUs 0 and 1 reserved, the devices are
 * numa000 27 CPUs, numa001 27, numa002 28, numa003 28. Chunking, names and
 * the comparison with what a server returns use synthetic device lists.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policylib.h"
#include "slicedoc.h"
#include "testlib.h"
#include "xmalloc.h"

#define DRIVER	"topology-aware.nri.io"

static json_t *
build(const char *uid, long long gen, const struct dradev *devs, int n,
    int index)
{
	struct slicedoc_pool	sp;

	memset(&sp, 0, sizeof sp);
	sp.driver = DRIVER;
	sp.node = "node-a";
	sp.node_uid = uid;
	sp.generation = gen;
	sp.devs = devs;
	sp.ndevs = n;
	return (slicedoc_build(&sp, index));
}

/* The devices of the server with a config (the policy's, borrowed). */
static int
server_devices(const char *config, struct env *e, struct dradev **devs)
{
	env_open(e, testlib_machine("server"), config);
	return (policy_devices(e->P, devs));
}

static struct dradev *
synthetic(int n)
{
	struct dradev	*d;
	int		 i;

	d = xcalloc((size_t)n + 1, sizeof *d);
	for (i = 0; i < n; i++) {
		snprintf(d[i].name, sizeof d[i].name, "cpudevnuma%03d", i);
		d[i].node = i;
		d[i].socket = i % 2;
		d[i].smt = i % 3 == 0;
		d[i].cpus = i + 1;
		cpuset_init(&d[i].grantable);
	}
	return (d);
}

static json_t *
path(json_t *j, const char *p)
{
	char	*copy, *part, *save = NULL;

	copy = xstrdup(p);
	for (part = strtok_r(copy, ".", &save); part != NULL && j != NULL;
	    part = strtok_r(NULL, ".", &save)) {
		if (isdigit((unsigned char)part[0]))
			j = json_array_get(j, strtoul(part, NULL, 10));
		else
			j = json_object_get(j, part);
	}
	free(copy);
	return (j);
}

static void
assert_str(json_t *j, const char *p, const char *want)
{
	json_t	*v = path(j, p);

	cr_assert(json_is_string(v), "%s is not a string", p);
	cr_assert_str_eq(json_string_value(v), want, "%s", p);
}

static void
assert_int(json_t *j, const char *p, long long want)
{
	json_t	*v = path(j, p);

	cr_assert(json_is_integer(v), "%s is not an integer", p);
	cr_assert_eq(json_integer_value(v), want, "%s: %lld, expected %lld",
	    p, (long long)json_integer_value(v), want);
}

/* The attribute and capacity of one device, as anchor §9.2 says. */
static void
assert_device(json_t *dev, const char *name, int node, int socket, int smt,
    const char *cpus)
{
	json_t	*attrs = json_object_get(dev, "attributes");
	json_t	*cap = json_object_get(dev, "capacity");

	assert_str(dev, "name", name);
	cr_assert_eq(json_object_size(attrs), 3);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(attrs,
	    "resource.kubernetes.io/numaNode"), "int")), node);
	cr_assert_eq(json_object_size(json_object_get(attrs,
	    "resource.kubernetes.io/numaNode")), 1);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(attrs,
	    "dra.cpu/socketID"), "int")), socket, "%s socket", name);
	cr_assert(json_is_boolean(json_object_get(json_object_get(attrs,
	    "dra.cpu/smtEnabled"), "bool")));
	cr_assert_eq(json_is_true(json_object_get(json_object_get(attrs,
	    "dra.cpu/smtEnabled"), "bool")), smt);
	cr_assert_eq(json_object_size(cap), 1);
	cap = json_object_get(cap, "dra.cpu/cpu");
	assert_str(cap, "value", cpus);
	assert_str(cap, "requestPolicy.default", "1");
	assert_str(cap, "requestPolicy.validRange.min", "1");
	assert_str(cap, "requestPolicy.validRange.step", "1");
	cr_assert_null(path(cap, "requestPolicy.validRange.max"));
	cr_assert_null(path(cap, "requestPolicy.validValues"));
	cr_assert(json_is_true(json_object_get(dev,
	    "allowMultipleAllocations")));
}

Test(slicedoc, server_reserved_0_1)
{
	struct env	 e;
	struct dradev	*devs;
	json_t		*j, *devices;
	int		 n;

	n = server_devices("{\"reservedResources\":{\"cpu\":\"cpuset:0,1\"}}",
	    &e, &devs);
	cr_assert_eq(n, 4);
	cr_assert_eq(slicedoc_count(n), 1);
	j = build("2a7c-uid", 3, devs, n, 0);
	assert_str(j, "apiVersion", "resource.k8s.io/v1");
	assert_str(j, "kind", "ResourceSlice");
	assert_str(j, "metadata.generateName", DRIVER "-node-a-");
	cr_assert_null(path(j, "metadata.name"));
	cr_assert_eq(json_array_size(path(j, "metadata.ownerReferences")), 1);
	assert_str(j, "metadata.ownerReferences.0.apiVersion", "v1");
	assert_str(j, "metadata.ownerReferences.0.kind", "Node");
	assert_str(j, "metadata.ownerReferences.0.name", "node-a");
	assert_str(j, "metadata.ownerReferences.0.uid", "2a7c-uid");
	cr_assert(json_is_true(path(j,
	    "metadata.ownerReferences.0.controller")));
	assert_str(j, "spec.driver", DRIVER);
	assert_str(j, "spec.nodeName", "node-a");
	assert_str(j, "spec.pool.name", "node-a");
	assert_int(j, "spec.pool.generation", 3);
	assert_int(j, "spec.pool.resourceSliceCount", 1);
	/* Exactly one way of naming the node. */
	cr_assert_null(path(j, "spec.nodeSelector"));
	cr_assert_null(path(j, "spec.allNodes"));
	devices = path(j, "spec.devices");
	cr_assert_eq(json_array_size(devices), 4);
	assert_device(json_array_get(devices, 0), "cpudevnuma000", 0, 0, 1,
	    "27");
	assert_device(json_array_get(devices, 1), "cpudevnuma001", 1, 1, 1,
	    "27");
	assert_device(json_array_get(devices, 2), "cpudevnuma002", 2, 0, 1,
	    "28");
	assert_device(json_array_get(devices, 3), "cpudevnuma003", 3, 1, 1,
	    "28");
	cr_assert_eq(slicedoc_generation(j), 3);
	cr_assert_str_eq(slicedoc_first_device(j), "cpudevnuma000");
	json_decref(j);
	env_close(&e);
}

Test(slicedoc, server_one_cpu_left)
{
	struct env	 e;
	struct dradev	*devs;
	json_t		*j;
	int		 n;

	n = server_devices(
	    "{\"availableResources\":{\"cpu\":\"cpuset:0,8,12\"},"
	    "\"reservedResources\":{\"cpu\":\"cpuset:0,8\"}}", &e, &devs);
	cr_assert_eq(n, 1);
	j = build(NULL, 1, devs, n, 0);
	cr_assert_eq(json_array_size(path(j, "spec.devices")), 1);
	assert_device(path(j, "spec.devices.0"), "cpudevnuma000", 0, 0, 1, "1");
	json_decref(j);
	env_close(&e);
}

Test(slicedoc, server_reserved_isolated)
{
	struct env	 e;
	struct dradev	*devs;
	json_t		*j;
	int		 n;

	/* CPU 4 is isolated on node 0: reserving it alone leaves 27 there. */
	n = server_devices("{\"reservedResources\":{\"cpu\":\"cpuset:4\"}}",
	    &e, &devs);
	cr_assert_eq(n, 4);
	j = build(NULL, 1, devs, n, 0);
	assert_str(json_object_get(path(j, "spec.devices.0.capacity"),
	    "dra.cpu/cpu"), "value", "27");
	json_decref(j);
	env_close(&e);
}

Test(slicedoc, no_uid_no_owner)
{
	struct dradev	*devs = synthetic(2);
	json_t		*j;

	j = build(NULL, 1, devs, 2, 0);
	cr_assert_null(path(j, "metadata.ownerReferences"));
	json_decref(j);
	j = build("", 1, devs, 2, 0);
	cr_assert_null(path(j, "metadata.ownerReferences"));
	json_decref(j);
	dradev_free_list(devs, 2);
}

Test(slicedoc, empty_pool_is_one_empty_slice)
{
	json_t	*j;

	cr_assert_eq(slicedoc_count(0), 1);
	j = build("u", 7, NULL, 0, 0);
	cr_assert(json_is_array(path(j, "spec.devices")));
	cr_assert_eq(json_array_size(path(j, "spec.devices")), 0);
	assert_int(j, "spec.pool.resourceSliceCount", 1);
	assert_int(j, "spec.pool.generation", 7);
	cr_assert_null(slicedoc_first_device(j));
	json_decref(j);
}

/* n devices in slices of the expected sizes, in order, each counting all. */
static void
check_chunks(int n, const int *sizes, int nslices)
{
	struct dradev	*devs = synthetic(n);
	json_t		*j, *d;
	char		 name[32];
	int		 i, k, next = 0;

	cr_assert_eq(slicedoc_count(n), nslices, "%d devices", n);
	for (i = 0; i < nslices; i++) {
		j = build("u", 2, devs, n, i);
		cr_assert_eq(json_array_size(path(j, "spec.devices")),
		    (size_t)sizes[i], "%d devices, slice %d", n, i);
		assert_int(j, "spec.pool.resourceSliceCount", nslices);
		assert_int(j, "spec.pool.generation", 2);
		for (k = 0; k < sizes[i]; k++, next++) {
			d = path(j, "spec.devices");
			d = json_array_get(d, (size_t)k);
			snprintf(name, sizeof name, "cpudevnuma%03d", next);
			cr_assert_str_eq(json_string_value(json_object_get(d,
			    "name")), name);
		}
		json_decref(j);
	}
	cr_assert_eq(next, n);
	dradev_free_list(devs, n);
}

Test(slicedoc, chunks)
{
	static const int	one[] = { 1 };
	static const int	full[] = { 128 };
	static const int	over[] = { 128, 1 };
	static const int	many[] = { 128, 128, 44 };

	cr_assert_eq(SLICEDOC_MAX_DEVICES, 128);
	check_chunks(1, one, 1);
	check_chunks(128, full, 1);
	check_chunks(129, over, 2);
	check_chunks(300, many, 3);
}

/* What the API server accepts as metadata.name once it appended five
 * random characters: a DNS subdomain of labels of at most 63. */
static void
assert_generated_ok(const char *gen)
{
	char		 name[512];
	const char	*p, *label;
	size_t		 len;

	cr_assert_leq(strlen(gen), 58, "%s is cut by the server", gen);
	snprintf(name, sizeof name, "%sx7k2q", gen);
	cr_assert_leq(strlen(name), 253);
	label = name;
	for (p = name;; p++) {
		if (*p != '.' && *p != '\0') {
			cr_assert(islower((unsigned char)*p) ||
			    isdigit((unsigned char)*p) || *p == '-',
			    "%s: bad character", name);
			continue;
		}
		len = (size_t)(p - label);
		cr_assert(len > 0 && len <= 63, "%s: label length", name);
		cr_assert(isalnum((unsigned char)label[0]) &&
		    isalnum((unsigned char)p[-1]), "%s: label edge", name);
		if (*p == '\0')
			break;
		label = p + 1;
	}
}

Test(slicedoc, generate_name)
{
	char	*g;
	char	 longnode[300];

	g = slicedoc_generate_name(DRIVER, "node-a");
	cr_assert_str_eq(g, "topology-aware.nri.io-node-a-");
	assert_generated_ok(g);
	free(g);

	/* A host name that is no DNS name still gives a valid one. */
	g = slicedoc_generate_name(DRIVER, "Node_A.Example..com-");
	cr_assert_str_eq(g, "topology-aware.nri.io-node-a-example--com--");
	assert_generated_ok(g);
	free(g);

	g = slicedoc_generate_name(DRIVER, ".x");
	assert_generated_ok(g);
	free(g);

	memset(longnode, 'n', sizeof longnode - 1);
	longnode[sizeof longnode - 1] = '\0';
	g = slicedoc_generate_name(DRIVER, longnode);
	assert_generated_ok(g);
	cr_assert(strncmp(g, DRIVER "-nnn", strlen(DRIVER) + 4) == 0, "%s", g);
	free(g);

	/* A driver without dots: its only label takes the node too. */
	g = slicedoc_generate_name("cpu", longnode);
	assert_generated_ok(g);
	free(g);

	g = slicedoc_generate_name("a23456789.b23456789.c23456789.d23456789."
	    "e23456789.f2345", "node");
	assert_generated_ok(g);
	cr_assert(strncmp(g, "a23456789.b23456789.c23456789.d23456789."
	    "e23456789.f2345-", 56) == 0, "%s", g);
	free(g);
}

/* A slice the way a server gives it back: our object, its metadata and
 * the fields it defaults. */
static json_t *
as_served(json_t *want)
{
	json_t	*j = json_deep_copy(want), *dev, *vr;
	size_t	 i;

	json_object_set_new(json_object_get(j, "metadata"), "name",
	    json_string("topology-aware.nri.io-node-a-x7k2q"));
	json_object_set_new(json_object_get(j, "metadata"), "uid",
	    json_string("0e0b-slice"));
	json_object_set_new(json_object_get(j, "metadata"), "resourceVersion",
	    json_string("4711"));
	json_object_set_new(json_object_get(j, "metadata"), "managedFields",
	    json_pack("[{s:s}]", "manager", "topoawared"));
	json_object_set_new(json_object_get(j, "spec"),
	    "perDeviceNodeSelection", json_null());
	json_array_foreach(path(j, "spec.devices"), i, dev) {
		json_object_set_new(dev, "taints", json_array());
		vr = path(json_object_get(json_object_get(dev, "capacity"),
		    "dra.cpu/cpu"), "requestPolicy.validRange");
		cr_assert_not_null(vr);
		json_object_set_new(vr, "max", json_null());
	}
	return (j);
}

Test(slicedoc, matches)
{
	struct dradev	*devs = synthetic(3), *other;
	json_t		*want, *have, *w2;

	want = build("n-uid", 4, devs, 3, 0);
	have = as_served(want);
	cr_assert(slicedoc_matches(have, want));
	cr_assert(slicedoc_matches(want, want));

	/* Another generation is another publication. */
	w2 = build("n-uid", 5, devs, 3, 0);
	cr_assert_not(slicedoc_matches(have, w2));
	json_decref(w2);

	/* A changed count, a missing or an extra device. */
	other = synthetic(3);
	other[1].cpus = 9;
	w2 = build("n-uid", 4, other, 3, 0);
	cr_assert_not(slicedoc_matches(have, w2));
	json_decref(w2);
	dradev_free_list(other, 3);
	w2 = build("n-uid", 4, devs, 2, 0);
	cr_assert_not(slicedoc_matches(have, w2));
	cr_assert_not(slicedoc_matches(w2, want));
	json_decref(w2);

	/* Something we do not write that is not an empty default. */
	json_object_set_new(path(have, "spec.devices.1.attributes"),
	    "dra.cpu/extra", json_pack("{s:i}", "int", 1));
	cr_assert_not(slicedoc_matches(have, want));
	json_object_del(path(have, "spec.devices.1.attributes"),
	    "dra.cpu/extra");
	cr_assert(slicedoc_matches(have, want));
	json_object_set_new(path(have, "spec"), "allNodes", json_true());
	cr_assert_not(slicedoc_matches(have, want));
	json_object_del(path(have, "spec"), "allNodes");

	/* A field we write that the server dropped. */
	json_object_del(path(have, "spec.devices.2"),
	    "allowMultipleAllocations");
	cr_assert_not(slicedoc_matches(have, want));
	json_decref(have);

	/* The owner: wanted and missing or another uid is a change... */
	w2 = build(NULL, 4, devs, 3, 0);
	have = as_served(w2);
	cr_assert_not(slicedoc_matches(have, want));
	/* ...one we do not know yet is not. */
	cr_assert(slicedoc_matches(have, w2));
	json_decref(have);
	have = as_served(want);
	cr_assert(slicedoc_matches(have, w2));
	json_object_set_new(path(have, "metadata.ownerReferences.0"), "uid",
	    json_string("other"));
	cr_assert_not(slicedoc_matches(have, want));
	json_decref(have);
	json_decref(w2);

	cr_assert_not(slicedoc_matches(NULL, want));
	have = json_array();
	cr_assert_not(slicedoc_matches(have, want));
	json_decref(have);
	json_decref(want);
	dradev_free_list(devs, 3);
}
