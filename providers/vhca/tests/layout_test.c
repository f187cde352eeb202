// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout test: the private ABI as vhca_pabi.h declares it for the release
 * VHCA_RDMA_CORE against the sizes and offsets recorded from that release
 * (tests/pabi<PABI>-layout-rdma-core-<release>.txt, which
 * tests/provider-abis.sh proves against the release's real driver.h).
 *
 * usage: layout_test TAG LAYOUT_FILE
 * Each line of LAYOUT_FILE ("sizeof S N" or "offsetof S.M N") is one check,
 * and so is every fact of layout_facts.h the file lacks.  Prints KTAP
 * (ktap.h): one result per group of checks (the recorded layout, the ops
 * table, the write() commands), "TAG: layout: group (N checks)", each
 * failed check a diagnostic line before it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vhca_pabi.h"
#include "ktap.h"
#include "layout_facts.h"

struct fact {
	const char *name;
	size_t value;
};

#define FACT_SIZE(s)	{ "sizeof " #s, sizeof(struct s) },
#define FACT_OFF(s, m)	{ "offsetof " #s "." #m, offsetof(struct s, m) },
#define FACT_OP(m)	{ #m, offsetof(struct verbs_context_ops, m) },

static const struct fact facts[] = { VHCA_LAYOUT_FACTS };

/* Every member of verbs_context_ops, in the order rdma-core keeps: sorted. */
static const struct fact ops[] = { VHCA_LAYOUT_OPS };

/*
 * Every write() command declared, against rdma-core's own rule for them
 * (kern-abi.h asserts it for each): the uverbs header, then exactly the
 * kernel's request struct.  Covers the commands the recorded file has no
 * line for; no value here is a recorded one.
 */
struct cmd_shape {
	const char *name;
	size_t size, expected, core_offset, hdr_size;
};

#define CMD(s, kabi)							\
	{ #s, sizeof(struct s),						\
	  sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct kabi),	\
	  offsetof(struct s, core), sizeof(struct ib_uverbs_cmd_hdr) }
#define CMD_EX(s, kabi)							\
	{ #s, sizeof(struct s),						\
	  sizeof(struct vhca_ex_hdr) + sizeof(struct kabi),		\
	  offsetof(struct s, core), sizeof(struct vhca_ex_hdr) }

static const struct cmd_shape cmds[] = {
	CMD(ibv_get_context, ib_uverbs_get_context),
	CMD(ibv_query_port, ib_uverbs_query_port),
	CMD(ibv_alloc_pd, ib_uverbs_alloc_pd),
	CMD(ibv_reg_mr, ib_uverbs_reg_mr),
	CMD(ibv_rereg_mr, ib_uverbs_rereg_mr),
	CMD(ibv_create_cq, ib_uverbs_create_cq),
	CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq),
	CMD(ibv_create_qp, ib_uverbs_create_qp),
	CMD(ibv_modify_qp, ib_uverbs_modify_qp),
	CMD(ibv_query_qp, ib_uverbs_query_qp),
	CMD(ibv_resize_cq, ib_uverbs_resize_cq),
	CMD(ibv_create_srq, ib_uverbs_create_srq),
	CMD(ibv_modify_srq, ib_uverbs_modify_srq),
	CMD(ibv_query_srq, ib_uverbs_query_srq),
};

#define NUM_OPS VHCA_NUM_OPS
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *tag;
/* Which facts and ops the layout file has a line for. */
static bool fact_recorded[ARRAY_SIZE(facts)], op_recorded[ARRAY_SIZE(ops)];
/* The checks of the group under way, and those of them that failed. */
static unsigned int checks, failed;

/* One check; a failed one is told, with why, at once. */
static void report(bool ok, const char *name, const char *why)
{
	checks++;
	if (ok)
		return;
	failed++;
	ktap_diag("%s: layout: %s: %s", tag, name, why);
}

/* The group's one result. */
static void group_end(const char *group)
{
	char full[320];

	snprintf(full, sizeof(full), "%s: layout: %s (%u checks)", tag, group,
		 checks);
	ktap_result(!failed && checks, full, "%u of %u checks failed", failed,
		    checks);
	checks = 0;
	failed = 0;
}

static const struct fact *lookup(const char *name)
{
	static const char ops_prefix[] = "offsetof verbs_context_ops.";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(facts); i++)
		if (!strcmp(facts[i].name, name))
			return &facts[i];
	if (strncmp(name, ops_prefix, strlen(ops_prefix)))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(ops[i].name, name + strlen(ops_prefix)))
			return &ops[i];
	return NULL;
}

/* One check per line of the recorded layout. */
static void check_file(const char *path)
{
	char kind[16], what[128], name[160], line[256], why[96];
	const struct fact *f;
	unsigned long value;
	int lines = 0;
	FILE *file;
	size_t i;

	file = fopen(path, "r");
	if (!file) {
		report(false, path, "cannot open");
		return;
	}
	while (fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%15s %127s %lu", kind, what, &value) != 3 ||
		    (strcmp(kind, "sizeof") && strcmp(kind, "offsetof"))) {
			report(false, line, "unparsable line");
			continue;
		}
		lines++;
		snprintf(name, sizeof(name), "%s %s", kind, what);
		f = lookup(name);
		if (f >= facts && f < facts + ARRAY_SIZE(facts))
			fact_recorded[f - facts] = true;
		else if (f)
			op_recorded[f - ops] = true;
		if (f)
			snprintf(why, sizeof(why), "recorded %lu, declared %zu",
				 value, f->value);
		else
			snprintf(why, sizeof(why), "recorded %lu, not declared",
				 value);
		report(f && f->value == value, name, why);
	}
	fclose(file);
	report(lines > 0, "layout file has entries", "none found");
	for (i = 0; i < ARRAY_SIZE(facts); i++)
		if (!fact_recorded[i])
			report(false, facts[i].name, "declared, not recorded");
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!op_recorded[i])
			report(false, ops[i].name, "declared, not recorded");
}

/* verbs_context_ops holds exactly the NUM_OPS ops, pointer-sized, sorted. */
static void check_ops(void)
{
	const char *misplaced = NULL, *unsorted = NULL;
	char name[64], why[96];
	size_t i;

	snprintf(name, sizeof(name), "verbs_context_ops lists %d ops", NUM_OPS);
	snprintf(why, sizeof(why), "%zu listed", ARRAY_SIZE(ops));
	report(ARRAY_SIZE(ops) == NUM_OPS, name, why);
	snprintf(name, sizeof(name), "sizeof verbs_context_ops = %d pointers",
		 NUM_OPS);
	snprintf(why, sizeof(why), "%zu bytes",
		 sizeof(struct verbs_context_ops));
	report(sizeof(struct verbs_context_ops) == NUM_OPS * sizeof(void *),
	       name, why);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (ops[i].value != i * sizeof(void *) && !misplaced)
			misplaced = ops[i].name;
		if (i && strcmp(ops[i - 1].name, ops[i].name) >= 0 && !unsorted)
			unsorted = ops[i].name;
	}
	report(!misplaced, "verbs_context_ops members are consecutive",
	       misplaced ? misplaced : "");
	report(!unsorted, "verbs_context_ops members are sorted by name",
	       unsorted ? unsorted : "");
}

static void check_cmds(void)
{
	char name[96], why[96];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		snprintf(name, sizeof(name),
			 "sizeof %s = header + kernel request", cmds[i].name);
		snprintf(why, sizeof(why),
			 "%zu bytes, expected %zu, core at %zu", cmds[i].size,
			 cmds[i].expected, cmds[i].core_offset);
		report(cmds[i].size == cmds[i].expected &&
		       cmds[i].core_offset == cmds[i].hdr_size, name, why);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s TAG LAYOUT_FILE\n", argv[0]);
		return 2;
	}
	tag = argv[1];
	check_file(argv[2]);
	group_end("the recorded layout");
	check_ops();
	group_end("verbs_context_ops");
	check_cmds();
	group_end("the write() commands");
	return ktap_failures() ? 1 : 0;
}
