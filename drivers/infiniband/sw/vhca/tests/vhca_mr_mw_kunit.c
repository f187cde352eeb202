// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_mr_mw: memory windows over a user MR of fake pages:
 * the states alloc_mw gives, every refusal of a bind in its IBTA order,
 * access through a window (bounds, keys, PDs, type 2B's QP) with bytes
 * across a page boundary, unbinding, invalidation of type 2 (local and
 * remote) and its refusals for type 1, and dereg and rereg refused while
 * bound.
 * Included by vhca_mr_kunit.c, with the sources it includes.
 */

/* ---- memory windows ---- */

/*
 * A user MR over fake pages (MW_BIND, local write), published under its
 * key, and QPs of its PD and of another; windows are allocated as the core
 * allocates them (the driver's ib_mw zeroed, device, pd and type set).
 */
struct mw_fixture {
	struct vhca_dev *vdev;
	struct ib_pd pd, other_pd;
	struct ib_qp qp, qp2, other_qp;
	struct vhca_mr *mr;
	u64 iova;
};

/* The fixture is large (three ib_qps): not on the stack. */
static struct mw_fixture *mw_setup(struct kunit *test, int access)
{
	struct mw_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->vdev = fake_vdev(test);
	f->pd.device = &f->vdev->ibdev;
	f->other_pd.device = &f->vdev->ibdev;
	f->qp = (struct ib_qp){ .pd = &f->pd, .qp_num = 0x101 };
	f->qp2 = (struct ib_qp){ .pd = &f->pd, .qp_num = 0x102 };
	f->other_qp = (struct ib_qp){ .pd = &f->other_pd, .qp_num = 0x103 };
	f->iova = 0x7f0000001000ULL;
	f->mr = vhca_mr_alloc(f->vdev, &f->pd, access);
	KUNIT_ASSERT_NOT_NULL(test, f->mr);
	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(f->vdev, f->mr), 0);
	fake_user_mr(f->mr, fake_pages(test), f->iova, access);
	f->mr->pd = &f->pd;
	f->mr->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, f->mr), 0);
	return f;
}

static void mw_teardown(struct kunit *test, struct mw_fixture *f)
{
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 0);
	xa_destroy(&f->vdev->mr_xa);
}

static struct ib_mw *mw_alloc(struct kunit *test, struct mw_fixture *f,
			      struct ib_pd *pd, enum ib_mw_type type)
{
	struct vhca_mw *mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = &f->vdev->ibdev;
	mw->ibmw.pd = pd;
	mw->ibmw.type = type;
	KUNIT_ASSERT_EQ(test, vhca_alloc_mw(&mw->ibmw, NULL), 0);
	return &mw->ibmw;
}

/* A bind of mw over [off, off + len) of the MR, to its next key byte. */
static struct vhca_mw_bind mw_bind_of(const struct mw_fixture *f,
				      const struct ib_mw *mw, u64 off, u64 len,
				      int access)
{
	return (struct vhca_mw_bind){
		.mw_rkey = to_vmw((struct ib_mw *)mw)->win->key,
		.new_rkey = fast_key(to_vmw((struct ib_mw *)mw)->win->key,
				     to_vmw((struct ib_mw *)mw)->win->key + 1),
		.mr_lkey = f->mr->ibmr.lkey,
		.access = access,
		.addr = f->iova + off,
		.length = len,
	};
}

static const int rw = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;

static void vhca_mw_alloc_states(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mr *got;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 3);
	KUNIT_EXPECT_EQ(test, to_vmw(mw1)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey), 0U);
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey),
			vhca_mr_key_index(f->mr->ibmr.rkey));
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey),
			vhca_mr_key_index(mw2->rkey));
	/* The rkey finds the window in the MRs' key space. */
	got = vhca_mr_get(f->vdev, mw1->rkey);
	KUNIT_ASSERT_TRUE(test, got == to_vmw(mw1)->win);
	/* Unbound: no access, local or remote; a local one never. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(got, mw1->rkey, &f->pd, f->iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(got, mw1->rkey, &f->qp,
						   f->iova, 1,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	vhca_mr_put(got);
	/* An lkey naming a window gathers nothing. */
	{
		struct vhca_sge sge = { f->iova, 4, mw1->rkey };
		u8 buf[4];

		KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &f->pd, &sge, 1, 0,
						    buf, 4, VHCA_COPY_FROM_MR, 0),
				-EACCES);
	}
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_NULL(test, vhca_mr_get(f->vdev, mw1->rkey));
	mw_teardown(test, f);
}

static void vhca_mw_bind_refusals(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2, *other;
	struct vhca_mr *nobind, *nowrite;
	struct vhca_mw_bind b;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	other = mw_alloc(test, f, &f->other_pd, IB_MW_TYPE_1);
	nobind = keyed_mr(test, f->vdev, lw);
	fake_user_mr(nobind, fake_pages(test), f->iova, lw);
	nobind->pd = &f->pd;
	nobind->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, nobind), 0);
	nowrite = keyed_mr(test, f->vdev, IB_ACCESS_MW_BIND);
	fake_user_mr(nowrite, fake_pages(test), f->iova, IB_ACCESS_MW_BIND);
	nowrite->pd = &f->pd;
	nowrite->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, nowrite), 0);

	/* No window by that index. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = vhca_mr_key(VHCA_MR_INDEX_MAX, 1);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* An MR's key is no window; a window's is no MR to bind to. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = f->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mr_lkey = mw2->rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* The new key keeps the index. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.new_rkey = f->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* Zero-based, unknown bits. */
	b = mw_bind_of(f, mw1, 0, 64, rw | IB_ZERO_BASED);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw | IB_ACCESS_MW_BIND);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* C10-72: the window of the QP's PD; the MR too. */
	b = mw_bind_of(f, other, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, other, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->other_qp, &b), -EACCES);
	/* C10-73: MW_BIND; C10-74: remote write needs local write. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mr_lkey = nobind->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_WRITE);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_ATOMIC);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	/* C10-75: within the MR: its first byte to its last, no further. */
	b = mw_bind_of(f, mw1, 0, FAKE_LEN + 1, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.addr = f->iova - 1;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* Type 2: not to length 0 (o10-37.2.40), not when bound (.30). */
	b = mw_bind_of(f, mw2, 0, 0, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, to_vmw(mw1)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, NULL);
	b = mw_bind_of(f, mw2, 0, FAKE_LEN, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->key, b.new_rkey);
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/*
	 * After a refused bind the provider's key byte is ahead of the
	 * window's: the index names the window, the bind goes through.
	 */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = vhca_mr_key(vhca_mr_key_index(b.mw_rkey),
				(u8)(b.mw_rkey + 7));
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* Read-only on an MR without local write is allowed. */
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_READ);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&nowrite->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);

	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(other), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&nobind->ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&nowrite->ibmr, NULL), 0);
	mw_teardown(test, f);
}

static void vhca_mw_access(struct kunit *test)
{
	u8 data[40], back[40];
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mr *w1, *w2;
	struct vhca_mw_bind b;
	u64 off = PAGE_SIZE - FAKE_OFF - 20, at;
	u32 key1, old;
	int i;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	at = f->iova + off;
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	w1 = to_vmw(mw1)->win;
	w2 = to_vmw(mw2)->win;
	/* A window of 40 bytes across the MR's first page boundary. */
	b = mw_bind_of(f, mw1, off, 40, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	key1 = b.new_rkey;
	old = b.mw_rkey;
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at, 40,
						   IB_ACCESS_REMOTE_WRITE), 0);
	/* Any QP of the PD for type 1; not another PD's; not the old key. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp2, at, 40,
						   IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->other_qp, at,
						   40, IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, old, &f->qp, at, 40,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	/* Bounds: one byte before, one past; access the window lacks. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at - 1, 2,
						   IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at + 39, 2,
						   IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at, 8,
						   IB_ACCESS_REMOTE_ATOMIC),
			-EACCES);
	/* Bytes through the window land in the MR, across the page. */
	for (i = 0; i < sizeof(data); i++)
		data[i] = 0x30 + i;
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at, data, 40,
					   VHCA_COPY_TO_MR), 0);
	expect_mr_bytes(test, f->mr, off, data, 40);
	KUNIT_EXPECT_EQ(test, *mr_byte(f->mr, off - 1), pattern(0, off - 1 + FAKE_OFF));
	memset(back, 0, sizeof(back));
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at, back, 40,
					   VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, back, data, 40);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at + 1, data, 40,
					   VHCA_COPY_TO_MR), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, old, at, data, 4,
					   VHCA_COPY_TO_MR), -EACCES);
	/* Type 2B: only its QP. */
	b = mw_bind_of(f, mw2, 0, 16, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w2, b.new_rkey, &f->qp,
						   f->iova, 16,
						   IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w2, b.new_rkey, &f->qp2,
						   f->iova, 16,
						   IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	/* Unbinding type 1 (length 0): VALID, its new key grants nothing. */
	b = mw_bind_of(f, mw1, 0, 0, 0);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, w1->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, b.new_rkey, &f->qp, at,
						   0, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, b.new_rkey, at, data, 4,
					   VHCA_COPY_TO_MR), -EACCES);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 0);
	mw_teardown(test, f);
}

static void vhca_mw_invalidation(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mw_bind b;
	u32 key;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* o10-37.2.26: type 1 is not invalidated, locally or remotely. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, b.new_rkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, f->mr);
	/* A user QP's LOCAL_INV never reaches an MR. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd,
						 f->mr->ibmr.rkey), -EINVAL);
	/* Type 2: not a free one; another PD's, a stale key refused. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, mw2->rkey),
			-EINVAL);
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	key = b.new_rkey;
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 2);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->other_pd, key),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, b.mw_rkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, key), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(to_vmw(mw2)->win, key, &f->qp,
						   f->iova, 1,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, key), -EINVAL);
	/*
	 * Bound again (Free), invalidated by a SEND with Invalidate: through
	 * the QP it is bound to only (type 2B), not another of its PD's.
	 */
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp2), -EACCES);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	mw_teardown(test, f);
}

/* Deregistration while bound, and the orders process exit may take. */
static void vhca_mw_dealloc_dereg(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mw_bind b;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	b = mw_bind_of(f, mw2, 64, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* Refused while either is bound; the MR stays findable. */
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test,
			    vhca_rereg_user_mr(&f->mr->ibmr, IB_MR_REREG_ACCESS,
					       0, 0, 0, lw, &f->pd, NULL),
			    ERR_PTR(-EINVAL));
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 0);
	/* Once dereg_mr has begun (mw_bound -1), no bind takes the MR. */
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	atomic_set(&f->mr->mw_bound, -1);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, NULL);
	atomic_set(&f->mr->mw_bound, 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	mw_teardown(test, f);
}

static struct kunit_case vhca_mr_mw_cases[] = {
	KUNIT_CASE(vhca_mw_alloc_states),
	KUNIT_CASE(vhca_mw_bind_refusals),
	KUNIT_CASE(vhca_mw_access),
	KUNIT_CASE(vhca_mw_invalidation),
	KUNIT_CASE(vhca_mw_dealloc_dereg),
	{}
};

static struct kunit_suite vhca_mr_mw_suite = {
	.name = "vhca_mr_mw",
	.test_cases = vhca_mr_mw_cases,
};
