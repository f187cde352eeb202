// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout probe: prints the layout facts (layout_facts.h) as the real
 * <infiniband/driver.h> of one rdma-core release defines them, one
 * "sizeof S N" or "offsetof S.M N" line each, in the format of the
 * recorded tests/pabi*-layout-rdma-core-*.txt.  Built by
 * tests/provider-abis.sh against a release's headers with
 * -DVHCA_RDMA_CORE=<its major version>; a member a release lacks fails the
 * build.
 */
#include <stdio.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "layout_facts.h"

struct fact {
	const char *name;
	size_t value;
};

#define FACT_SIZE(s)	{ "sizeof " #s, sizeof(struct s) },
#define FACT_OFF(s, m)	{ "offsetof " #s "." #m, offsetof(struct s, m) },
#define FACT_OP(m)	FACT_OFF(verbs_context_ops, m)

static const struct fact facts[] = { VHCA_LAYOUT_FACTS VHCA_LAYOUT_OPS };

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		printf("%s %zu\n", facts[i].name, facts[i].value);
	return 0;
}
