/*
 * liburing-rs (MIT licensed): payloads of IORING_REGISTER_QUERY. Each request is a chain
 * of io_uring_query_hdr records; the kernel fills result and the
 * op-specific structure pointed to by query_data.
 */
#ifndef LINUX_IO_URING_QUERY_H
#define LINUX_IO_URING_QUERY_H

#include <linux/types.h>

struct io_uring_query_hdr {
	__u64 next_entry;
	__u64 query_data;
	__u32 query_op;
	__u32 size;
	__s32 result;
	__u32 __resv[3];
};

/* io_uring_query_hdr.query_op */
enum {
	IO_URING_QUERY_OPCODES = 0,
	IO_URING_QUERY_ZCRX    = 1,
	IO_URING_QUERY_SCQ     = 2,

	__IO_URING_QUERY_MAX,
};

/* IO_URING_QUERY_OPCODES: usable with ring fd -1 */
struct io_uring_query_opcode {
	__u32 nr_request_opcodes;   /* count of IORING_OP_* */
	__u32 nr_register_opcodes;  /* count of register opcodes */
	__u64 feature_flags;        /* IORING_FEAT_* mask */
	__u64 ring_setup_flags;     /* IORING_SETUP_* mask */
	__u64 enter_flags;          /* IORING_ENTER_* mask */
	__u64 sqe_flags;            /* IOSQE_* mask */
	__u32 nr_query_opcodes;
	__u32 __pad;
};

/* IO_URING_QUERY_ZCRX */
struct io_uring_query_zcrx {
	__u64 register_flags;       /* ZCRX_REG_* mask */
	__u64 area_flags;           /* IORING_ZCRX_AREA_* mask */
	__u32 nr_ctrl_opcodes;
	__u32 features;             /* ZCRX_FEATURE_* mask */
	__u32 rq_hdr_size;
	__u32 rq_hdr_alignment;
	__u64 __resv2;
};

/* IO_URING_QUERY_SCQ: SQ/CQ ring header size and alignment */
struct io_uring_query_scq {
	__u64 hdr_size;
	__u64 hdr_alignment;
};

#endif /* LINUX_IO_URING_QUERY_H */
