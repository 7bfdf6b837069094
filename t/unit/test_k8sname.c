/*
 * test_k8sname.c: the shapes of Kubernetes names the daemon's options must
 * have (k8sname.h), as the API server's validation has them: a namespace
 * is a DNS label, a label key an optional subdomain prefix and a name.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <string.h>

#include "k8sname.h"

static const char *good_labels[] = {
	"kube-system", "a", "0", "a0-b", NULL
};
static const char *bad_labels[] = {
	"", "-a", "a-", "Kube", "a.b", "a_b", "a b", NULL
};

Test(k8sname, dns_label)
{
	char	long_ok[64], too_long[65];
	int	i;

	for (i = 0; good_labels[i] != NULL; i++)
		cr_expect(k8s_dns_label(good_labels[i]), "%s", good_labels[i]);
	for (i = 0; bad_labels[i] != NULL; i++)
		cr_expect(!k8s_dns_label(bad_labels[i]), "%s", bad_labels[i]);
	memset(long_ok, 'a', 63);
	long_ok[63] = '\0';
	memset(too_long, 'a', 64);
	too_long[64] = '\0';
	cr_expect(k8s_dns_label(long_ok));
	cr_expect(!k8s_dns_label(too_long));
}

Test(k8sname, dns_subdomain)
{
	char	name[201];

	cr_expect(k8s_dns_subdomain("config.nri", 253));
	cr_expect(k8s_dns_subdomain("a", 253));
	cr_expect(!k8s_dns_subdomain("config..nri", 253));
	cr_expect(!k8s_dns_subdomain(".nri", 253));
	cr_expect(!k8s_dns_subdomain("nri.", 253));
	cr_expect(!k8s_dns_subdomain("a-.b", 253));
	cr_expect(!k8s_dns_subdomain("abc.def", 6));
	cr_expect(k8s_dns_subdomain("abc.de", 6));
	/* Object names: only the whole is limited, as Kubernetes does. */
	memset(name, 'a', 200);
	name[200] = '\0';
	cr_expect(k8s_dns_subdomain(name, 253));
	cr_expect(!k8s_dns_subdomain(name, 199));
}

Test(k8sname, label_key)
{
	char	name63[80], name64[80];

	cr_expect(k8s_label_key("config.nri/group"));
	cr_expect(k8s_label_key("group.config.nri"));
	cr_expect(k8s_label_key("Group_1"));
	cr_expect(k8s_label_key("example.com/My.Label-1"));
	cr_expect(!k8s_label_key(""));
	cr_expect(!k8s_label_key("/group"));
	cr_expect(!k8s_label_key("config.nri/"));
	cr_expect(!k8s_label_key("a/b/c"));
	cr_expect(!k8s_label_key("Config.nri/group"));
	cr_expect(!k8s_label_key("config.nri/-group"));
	cr_expect(!k8s_label_key("group_"));
	strcpy(name63, "x/");
	memset(name63 + 2, 'n', 63);
	name63[65] = '\0';
	strcpy(name64, "x/");
	memset(name64 + 2, 'n', 64);
	name64[66] = '\0';
	cr_expect(k8s_label_key(name63));
	cr_expect(!k8s_label_key(name64));
}

Test(k8sname, label_value)
{
	cr_expect(k8s_label_value(""));
	cr_expect(k8s_label_value("g1"));
	cr_expect(k8s_label_value("G_1.x-y"));
	cr_expect(!k8s_label_value("-g"));
	cr_expect(!k8s_label_value("g/1"));
	cr_expect(!k8s_label_value("g 1"));
}
