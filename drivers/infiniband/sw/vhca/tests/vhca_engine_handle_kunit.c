// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_handle: the handles of vhca_handle.c, which
 * vhca_engine_kunit.c includes, on their own (an xarray and handles of
 * their own, no fixture).  A receiver's reference keeps destroy waiting
 * until it goes, a reference held past the report time is reported once,
 * and a handle whose last reference went is found by no lookup.
 */

#define HANDLE_INDEX	0x1234

/* A receiver's reference, dropped by a work item after delay_ms. */
struct handle_holder {
	struct delayed_work work;
	struct vhca_handle *h;
	bool put;			/* the work item dropped it */
};

static void handle_holder_put(struct work_struct *work)
{
	struct handle_holder *hh = container_of(to_delayed_work(work),
						struct handle_holder, work);

	WRITE_ONCE(hh->put, true);
	vhca_handle_put(hh->h);
}

static struct vhca_handle *handle_new(struct kunit *test, struct xarray *xa,
				      void *obj)
{
	struct vhca_handle *h = vhca_handle_alloc(obj, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	xa_init(xa);
	KUNIT_ASSERT_EQ(test, xa_insert(xa, HANDLE_INDEX, h, GFP_KERNEL), 0);
	return h;
}

/* Only the table's reference: the wait ends at its put, nothing reported. */
static void engine_handle_unheld(struct kunit *test)
{
	struct ib_device *ibdev = kunit_kzalloc(test, sizeof(*ibdev),
						GFP_KERNEL);
	struct vhca_handle *h;
	struct xarray xa;
	int obj;

	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	h = handle_new(test, &xa, &obj);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, vhca_handle_get(&xa, HANDLE_INDEX),
			    (void *)&obj);
	rcu_read_unlock();
	vhca_handle_put(h);
	xa_erase(&xa, HANDLE_INDEX);
	vhca_handle_put(h);
	KUNIT_EXPECT_FALSE(test, vhca_handle_wait(ibdev, "QP", HANDLE_INDEX,
						  h, HZ));
	kfree_rcu(h, rcu);
	xa_destroy(&xa);
}

/*
 * A receiver holds the object 500 ms, past the report time (one jiffy
 * here): the wait reports it and goes on until the receiver's put, which
 * it returns after, never before.  The report is printed to the kernel
 * log.
 */
static void engine_handle_held_reported(struct kunit *test)
{
	struct ib_device *ibdev = kunit_kzalloc(test, sizeof(*ibdev),
						GFP_KERNEL);
	struct handle_holder hh = {};
	struct xarray xa;
	void *found;
	int obj;

	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	hh.h = handle_new(test, &xa, &obj);
	rcu_read_lock();
	found = vhca_handle_get(&xa, HANDLE_INDEX);
	rcu_read_unlock();
	KUNIT_ASSERT_PTR_EQ(test, found, (void *)&obj);
	INIT_DELAYED_WORK_ONSTACK(&hh.work, handle_holder_put);
	schedule_delayed_work(&hh.work, msecs_to_jiffies(500));
	xa_erase(&xa, HANDLE_INDEX);
	vhca_handle_put(hh.h);
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, vhca_handle_get(&xa, HANDLE_INDEX));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, vhca_handle_wait(ibdev, "QP", HANDLE_INDEX,
						 hh.h, 1));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(hh.put));
	flush_delayed_work(&hh.work);
	destroy_delayed_work_on_stack(&hh.work);
	kfree_rcu(hh.h, rcu);
	xa_destroy(&xa);
}

/*
 * A lookup that found the handle after its last reference went (between
 * destroy's put and the grace period) gets nothing.
 */
static void engine_handle_dead_not_found(struct kunit *test)
{
	struct vhca_handle *h;
	struct xarray xa;
	int obj;

	h = handle_new(test, &xa, &obj);
	vhca_handle_put(h);
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, vhca_handle_get(&xa, HANDLE_INDEX));
	KUNIT_EXPECT_FALSE(test, vhca_handle_tryget(h));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, completion_done(&h->idle));
	xa_erase(&xa, HANDLE_INDEX);
	kfree_rcu(h, rcu);
	xa_destroy(&xa);
}

static struct kunit_case vhca_engine_handle_cases[] = {
	KUNIT_CASE(engine_handle_unheld),
	KUNIT_CASE(engine_handle_held_reported),
	KUNIT_CASE(engine_handle_dead_not_found),
	{}
};

static struct kunit_suite vhca_engine_handle_suite = {
	.name = "vhca_engine_handle",
	.test_cases = vhca_engine_handle_cases,
};
