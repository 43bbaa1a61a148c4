/*
 * Copy SRC to DST with linked read->write chains, in the style of
 * liburing's examples/link-cp: CHAINS chains in flight (each an
 * IORING_OP_READ linked with IOSQE_IO_LINK to an IORING_OP_WRITE of the
 * same buffer), BS-byte blocks, ring of 2*CHAINS entries.
 *
 *   copy SRC DST [chains=32] [bs_kib=128]
 *
 * Prints "copy bytes=N wall=S user=S sys=S" (getrusage of this process,
 * which includes its io-wq worker threads).
 */
#include <liburing.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common.h"

struct slot {
	char *buf;
	off_t off;
	size_t len;
};

static struct io_uring ring;
static struct slot *slots;
static int infd, outfd;
static off_t next_off, fsize;
static size_t bs;
static unsigned long fixups;

static void queue_chain(unsigned idx)
{
	struct slot *s = &slots[idx];
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, infd, s->buf, s->len, s->off);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = (unsigned long)idx * 2;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, outfd, s->buf, s->len, s->off);
	sqe->user_data = (unsigned long)idx * 2 + 1;
}

/* Start the next block on slot idx; returns 0 when the file is exhausted. */
static int start_block(unsigned idx)
{
	if (next_off >= fsize)
		return 0;
	slots[idx].off = next_off;
	slots[idx].len = (fsize - next_off) < (off_t)bs ? (size_t)(fsize - next_off) : bs;
	next_off += slots[idx].len;
	queue_chain(idx);
	return 1;
}

/* Short read/write or a broken link: finish the block synchronously. */
static void fixup(unsigned idx)
{
	struct slot *s = &slots[idx];
	ssize_t r = pread(infd, s->buf, s->len, s->off);
	if (r != (ssize_t)s->len || pwrite(outfd, s->buf, s->len, s->off) != r) {
		fprintf(stderr, "copy: sync fix-up failed\n");
		exit(1);
	}
	fixups++;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: copy SRC DST [chains] [bs_kib]\n");
		return 2;
	}
	unsigned chains = argc > 3 ? atoi(argv[3]) : 32;
	bs = (argc > 4 ? atoi(argv[4]) : 128) * 1024UL;
	struct stat st;

	infd = open(argv[1], O_RDONLY);
	if (infd < 0 || fstat(infd, &st))
		die(argv[1], errno);
	fsize = st.st_size;
	outfd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (outfd < 0)
		die(argv[2], errno);
	int ret = io_uring_queue_init(chains * 2, &ring, 0);
	if (ret)
		die("io_uring_queue_init", ret);
	slots = calloc(chains, sizeof(*slots));
	for (unsigned i = 0; i < chains; i++)
		if (posix_memalign((void **)&slots[i].buf, 4096, bs))
			die("posix_memalign", ENOMEM);

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = now_sec();

	unsigned active = 0;
	for (unsigned i = 0; i < chains; i++)
		active += start_block(i);
	while (active) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die("io_uring_submit_and_wait", ret);
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned idx = cqe->user_data / 2;
			int is_write = cqe->user_data & 1;
			n++;
			if (!is_write) {
				if (cqe->res != (int)slots[idx].len && cqe->res < 0 &&
				    cqe->res != -ECANCELED)
					die("read", cqe->res);
				continue; /* a short read cancels the write; handled there */
			}
			if (cqe->res != (int)slots[idx].len)
				fixup(idx);
			if (!start_block(idx))
				active--;
		}
		io_uring_cq_advance(&ring, n);
	}

	double wall = now_sec() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	io_uring_queue_exit(&ring);
	close(outfd);
	printf("copy bytes=%lld wall=%.4f user=%.4f sys=%.4f fixups=%lu\n",
	       (long long)fsize, wall, tv_sec(ru1.ru_utime) - tv_sec(ru0.ru_utime),
	       tv_sec(ru1.ru_stime) - tv_sec(ru0.ru_stime), fixups);
	return 0;
}
