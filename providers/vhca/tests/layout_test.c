// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout test: the private ABI as vhca_pabi.h declares it against the
 * sizes and offsets recorded from rdma-core 44.
 *
 * usage: layout_test TAG LAYOUT_FILE
 * Each line of LAYOUT_FILE ("sizeof S N" or "offsetof S.M N") is one check.
 * Prints KTAP (ktap.h): one result per check, "TAG: layout: what".
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vhca_pabi.h"
#include "ktap.h"

struct fact {
	const char *name;
	size_t value;
};

#define SIZE(s)		{ "sizeof " #s, sizeof(struct s) }
#define OFF(s, m)	{ "offsetof " #s "." #m, offsetof(struct s, m) }
#define OP(m)		{ #m, offsetof(struct verbs_context_ops, m) }

static const struct fact facts[] = {
	SIZE(verbs_match_ent),
	OFF(verbs_match_ent, u),
	OFF(verbs_match_ent, vendor),
	OFF(verbs_match_ent, device),
	OFF(verbs_match_ent, kind),
	SIZE(verbs_device_ops),
	OFF(verbs_device_ops, match_min_abi_version),
	OFF(verbs_device_ops, match_table),
	OFF(verbs_device_ops, static_providers),
	OFF(verbs_device_ops, match_device),
	OFF(verbs_device_ops, alloc_context),
	OFF(verbs_device_ops, import_context),
	OFF(verbs_device_ops, alloc_device),
	OFF(verbs_device_ops, uninit_device),
	SIZE(verbs_device),
	OFF(verbs_device, ops),
	OFF(verbs_device, refcount),
	OFF(verbs_device, entry),
	OFF(verbs_device, sysfs),
	OFF(verbs_device, core_support),
	SIZE(verbs_mr),
	OFF(verbs_mr, mr_type),
	OFF(verbs_mr, access),
	SIZE(verbs_cq),
	SIZE(verbs_qp),
	OFF(verbs_qp, qp_ex),
	OFF(verbs_qp, comp_mask),
	OFF(verbs_qp, xrcd),
	/*
	 * rdma-core 44's ibv_qp_ex, which <infiniband/verbs.h> declares and
	 * vhca_qpex.c fills (it grew in 45: 44's layout only).
	 */
	SIZE(ibv_qp_ex),
	OFF(ibv_qp_ex, comp_mask),
	OFF(ibv_qp_ex, wr_id),
	OFF(ibv_qp_ex, wr_flags),
	OFF(ibv_qp_ex, wr_atomic_cmp_swp),
	OFF(ibv_qp_ex, wr_rdma_read),
	OFF(ibv_qp_ex, wr_rdma_write),
	OFF(ibv_qp_ex, wr_rdma_write_imm),
	OFF(ibv_qp_ex, wr_send),
	OFF(ibv_qp_ex, wr_send_imm),
	OFF(ibv_qp_ex, wr_set_ud_addr),
	OFF(ibv_qp_ex, wr_set_inline_data),
	OFF(ibv_qp_ex, wr_set_inline_data_list),
	OFF(ibv_qp_ex, wr_set_sge),
	OFF(ibv_qp_ex, wr_set_sge_list),
	OFF(ibv_qp_ex, wr_start),
	OFF(ibv_qp_ex, wr_complete),
	OFF(ibv_qp_ex, wr_abort),
	OFF(ibv_qp_ex, wr_atomic_write),
	SIZE(verbs_context_ops),
	SIZE(ibv_get_context),
	SIZE(ibv_query_port),
	SIZE(ibv_alloc_pd),
	SIZE(ibv_reg_mr),
	SIZE(ibv_create_cq),
	SIZE(ibv_create_cq_ex),
	SIZE(ibv_create_qp),
	SIZE(ibv_modify_qp),
	SIZE(ibv_query_qp),
};

/* Every member of verbs_context_ops, in the order rdma-core keeps: sorted. */
static const struct fact ops[] = {
	OP(advise_mr), OP(alloc_dm), OP(alloc_mw), OP(alloc_null_mr),
	OP(alloc_parent_domain), OP(alloc_pd), OP(alloc_td), OP(async_event),
	OP(attach_counters_point_flow), OP(attach_mcast), OP(bind_mw),
	OP(close_xrcd), OP(cq_event), OP(create_ah), OP(create_counters),
	OP(create_cq), OP(create_cq_ex), OP(create_flow),
	OP(create_flow_action_esp), OP(create_qp), OP(create_qp_ex),
	OP(create_rwq_ind_table), OP(create_srq), OP(create_srq_ex),
	OP(create_wq), OP(dealloc_mw), OP(dealloc_pd), OP(dealloc_td),
	OP(dereg_mr), OP(destroy_ah), OP(destroy_counters), OP(destroy_cq),
	OP(destroy_flow), OP(destroy_flow_action), OP(destroy_qp),
	OP(destroy_rwq_ind_table), OP(destroy_srq), OP(destroy_wq),
	OP(detach_mcast), OP(free_context), OP(free_dm), OP(get_srq_num),
	OP(import_dm), OP(import_mr), OP(import_pd), OP(modify_cq),
	OP(modify_flow_action_esp), OP(modify_qp), OP(modify_qp_rate_limit),
	OP(modify_srq), OP(modify_wq), OP(open_qp), OP(open_xrcd), OP(poll_cq),
	OP(post_recv), OP(post_send), OP(post_srq_ops), OP(post_srq_recv),
	OP(query_device_ex), OP(query_ece), OP(query_port), OP(query_qp),
	OP(query_qp_data_in_order), OP(query_rt_values), OP(query_srq),
	OP(read_counters), OP(reg_dm_mr), OP(reg_dmabuf_mr), OP(reg_mr),
	OP(req_notify_cq), OP(rereg_mr), OP(resize_cq), OP(set_ece),
	OP(unimport_dm), OP(unimport_mr), OP(unimport_pd),
};

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

#define NUM_OPS 76
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *tag;

/* Prints one check; why says what was wrong when !ok. */
static void report(bool ok, const char *name, const char *why)
{
	char full[320];

	snprintf(full, sizeof(full), "%s: layout: %s", tag, name);
	ktap_result(ok, full, "%s", why);
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
}

/* verbs_context_ops holds exactly the 76 ops, pointer-sized, sorted. */
static void check_ops(void)
{
	const char *misplaced = NULL, *unsorted = NULL;
	char why[96];
	size_t i;

	snprintf(why, sizeof(why), "%zu listed", ARRAY_SIZE(ops));
	report(ARRAY_SIZE(ops) == NUM_OPS, "verbs_context_ops lists 76 ops",
	       why);
	snprintf(why, sizeof(why), "%zu bytes",
		 sizeof(struct verbs_context_ops));
	report(sizeof(struct verbs_context_ops) == NUM_OPS * sizeof(void *),
	       "sizeof verbs_context_ops = 76 pointers", why);
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
	check_ops();
	check_cmds();
	return ktap_failures() ? 1 : 0;
}
