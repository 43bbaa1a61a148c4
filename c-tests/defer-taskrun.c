/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN: completions of
 * requests that finish asynchronously are only posted when the submitting
 * task enters the kernel to get events.
 *
 * A read of an empty pipe is queued (it parks on poll), then the pipe is
 * written to. The read is now done, but io_uring_cq_ready() stays 0 until
 * io_uring_get_events() is called, which finds it even when made right
 * after the write. Repeated with io_uring_wait_cqe and with
 * io_uring_submit_and_get_events.
 *
 * 6.1 does not run deferred work on an enter that waits for nothing
 * (min_complete 0): there the completion only shows up once something
 * waits for it, which the test checks instead, ending in a skip.
 */
#include <liburing.h>
#include <poll.h>
#include <sys/eventfd.h>
#include "test-util.h"

static int pfd[2];
static char rbuf[64];

static void queue_pipe_read(struct io_uring *ring, unsigned long long ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no sqe");
	io_uring_prep_read(sqe, pfd[0], rbuf, sizeof(rbuf), 0);
	sqe->user_data = ud;
}

/* After a get_events-style enter, `want` CQEs should be ready. */
static void expect_ready(struct io_uring *ring, unsigned want,
			 const char *what)
{
	struct io_uring_cqe *cqe;
	unsigned got = io_uring_cq_ready(ring);

	if (got + 1 == want &&
	    tu_lacks_before(6, 12, "deferred task work run by an enter that "
			    "waits for nothing")) {
		CHECK_EQ(io_uring_wait_cqes(ring, &cqe, want, NULL, NULL), 0,
			 what);
		got = io_uring_cq_ready(ring);
	}
	CHECK_EQ(got, want, what);
}

static void make_ready(const char *msg)
{
	ssize_t n = write(pfd[1], msg, strlen(msg));

	CHECK(n == (ssize_t)strlen(msg), "pipe write: %s", strerror(errno));
	usleep(20000);	/* give any (wrong) async completion a chance */
}

static void check_read_cqe(struct io_uring_cqe *cqe, unsigned long long ud,
			   const char *msg)
{
	CHECK(cqe->user_data == ud, "user_data %llu, want %llu",
	      (unsigned long long)cqe->user_data, ud);
	CHECK_EQ(cqe->res, strlen(msg), "pipe read res");
	CHECK(memcmp(rbuf, msg, strlen(msg)) == 0, "pipe data mismatch");
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);

	CHECK(pipe(pfd) == 0, "pipe: %s", strerror(errno));

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL)
		SKIP("kernel does not support DEFER_TASKRUN");
	CHECK_EQ(ret, 0, "queue_init_params(DEFER_TASKRUN)");
	CHECK((ring.flags & (IORING_SETUP_SINGLE_ISSUER |
			     IORING_SETUP_DEFER_TASKRUN)) ==
	      (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN),
	      "flags not recorded: %#x", ring.flags);

	/* 1: io_uring_get_events posts the deferred completion. */
	queue_pipe_read(&ring, 1);
	CHECK_EQ(io_uring_submit(&ring), 1, "submit read");
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "cqe before data arrived");
	make_ready("first");
	CHECK_EQ(io_uring_cq_ready(&ring), 0,
		 "completion posted without entering the kernel");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), -EAGAIN,
		 "peek_cqe found a deferred completion");
	ret = io_uring_get_events(&ring);
	CHECK(ret >= 0, "io_uring_get_events: %s", strerror(-ret));
	expect_ready(&ring, 1, "cq ready after get_events");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek after get_events");
	check_read_cqe(cqe, 1, "first");
	io_uring_cqe_seen(&ring, cqe);

	/* 2: a wait runs the deferred work too. */
	memset(rbuf, 0, sizeof(rbuf));
	queue_pipe_read(&ring, 2);
	CHECK_EQ(io_uring_submit(&ring), 1, "submit read");
	make_ready("second!");
	CHECK_EQ(io_uring_cq_ready(&ring), 0,
		 "completion posted without entering the kernel");
	ret = io_uring_wait_cqe(&ring, &cqe);
	CHECK_EQ(ret, 0, "wait_cqe");
	check_read_cqe(cqe, 2, "second!");
	io_uring_cqe_seen(&ring, cqe);

	/* 3: submit_and_get_events submits new work and flushes old. */
	memset(rbuf, 0, sizeof(rbuf));
	queue_pipe_read(&ring, 3);
	CHECK_EQ(io_uring_submit(&ring), 1, "submit read");
	make_ready("third");
	CHECK_EQ(io_uring_cq_ready(&ring), 0,
		 "completion posted without entering the kernel");
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 4;
	}
	ret = io_uring_submit_and_get_events(&ring);
	CHECK_EQ(ret, 1, "submit_and_get_events");
	expect_ready(&ring, 2, "cq ready after submit_and_get_events");
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
		if (cqe->user_data == 3)
			check_read_cqe(cqe, 3, "third");
		else
			CHECK(cqe->user_data == 4 && cqe->res == 0,
			      "bad nop cqe");
		io_uring_cqe_seen(&ring, cqe);
	}

	/* 3b: the wake-up queues the task work itself, so a get_events
	 * right after it (no time for anything else) posts the completion. */
	memset(rbuf, 0, sizeof(rbuf));
	queue_pipe_read(&ring, 6);
	CHECK_EQ(io_uring_submit(&ring), 1, "submit read");
	CHECK(write(pfd[1], "now", 3) == 3, "pipe write: %s", strerror(errno));
	ret = io_uring_get_events(&ring);
	CHECK(ret >= 0, "io_uring_get_events: %s", strerror(-ret));
	expect_ready(&ring, 1, "cq ready after a get_events right after the write");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
	check_read_cqe(cqe, 6, "now");
	io_uring_cqe_seen(&ring, cqe);

	/* get_events with nothing pending is harmless. */
	ret = io_uring_get_events(&ring);
	CHECK(ret >= 0, "io_uring_get_events (idle): %s", strerror(-ret));
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "cq ready when idle");

	/* 4: a multishot poll whose file is ready at submission posts that
	 * first CQE from task work too: nothing shows before the wait, and
	 * the wait brings it along with the wake-up that came after it. */
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		unsigned seen = 0, n = 0;

		io_uring_prep_poll_multishot(sqe, pfd[1], POLLIN | POLLOUT);
		sqe->user_data = 5;
		CHECK_EQ(io_uring_submit(&ring), 1, "submit multishot poll");
		CHECK_EQ(io_uring_cq_ready(&ring), 0,
			 "ready multishot poll posted without entering");
		make_ready("wake");
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait poll");
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			CHECK(cqe->user_data == 5 && cqe->flags & IORING_CQE_F_MORE,
			      "multishot poll cqe");
			seen |= (unsigned)cqe->res;
			n++;
			io_uring_cqe_seen(&ring, cqe);
		}
		CHECK(n >= 1 && (seen & POLLOUT), "poll events 0x%x in %u cqes",
		      seen, n);
	}

	/* 5: a registered eventfd is signalled once work is pending, before
	 * its CQE is posted, so an event loop knows to get events. */
	{
		int efd = eventfd(0, EFD_NONBLOCK);
		struct pollfd p = { .fd = efd, .events = POLLIN };
		uint64_t v;

		CHECK(efd >= 0, "eventfd");
		CHECK_EQ(io_uring_register_eventfd(&ring, efd), 0, "register eventfd");
		/* The multishot poll above is still armed: cancel it first. */
		io_uring_prep_poll_remove(io_uring_get_sqe(&ring), 5);
		CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "poll remove");
		while (io_uring_peek_cqe(&ring, &cqe) == 0)
			io_uring_cqe_seen(&ring, cqe);
		while (read(efd, &v, sizeof(v)) == sizeof(v))
			;
		/* Drain what step 4 left in the pipe. */
		struct pollfd left = { .fd = pfd[0], .events = POLLIN };

		if (poll(&left, 1, 0) == 1)
			CHECK(read(pfd[0], rbuf, sizeof(rbuf)) > 0, "drain pipe");
		memset(rbuf, 0, sizeof(rbuf));
		queue_pipe_read(&ring, 6);
		CHECK_EQ(io_uring_submit(&ring), 1, "submit read");
		make_ready("evfd");
		CHECK_EQ(poll(&p, 1, 1000), 1, "eventfd signalled for pending work");
		CHECK_EQ(io_uring_cq_ready(&ring), 0, "completion posted early");
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait read");
		check_read_cqe(cqe, 6, "evfd");
		io_uring_cqe_seen(&ring, cqe);
		io_uring_unregister_eventfd(&ring);
		close(efd);
	}

	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
	return tu_done();
}
