//! NOP throughput with the tokio-rs `io-uring` crate: the same loop as
//! benches/nop.c. Per batch: push `depth` NOP SQEs, sync the SQ,
//! submit_and_wait(depth), sync the CQ and drain it. Ring: IoUring::new(depth)
//! (CQ = 2 x SQ, no setup flags, like io_uring_queue_init(depth, ring, 0)).
//!
//!   nop_crate [depth...]    BENCH_SECS (default 1) per depth; prints
//!                           "nop depth=D ops=N secs=S mops=M"

use io_uring::{opcode, IoUring};
use std::time::Instant;

#[inline(never)]
fn bench_loop(ring: &mut IoUring, depth: u32, batches: u64) -> u64 {
    let nop = opcode::Nop::new().build();
    let (submitter, mut sq, mut cq) = ring.split();
    let mut done = 0u64;
    for _ in 0..batches {
        // Pick up the kernel's SQ head (the SQ is a snapshot between syncs).
        sq.sync();
        for _ in 0..depth {
            // SAFETY: a NOP references no memory.
            unsafe { sq.push(&nop).expect("SQ full") };
        }
        sq.sync();
        submitter.submit_and_wait(depth as usize).expect("submit_and_wait");
        cq.sync();
        for cqe in &mut cq {
            if cqe.result() < 0 {
                std::process::abort();
            }
            done += 1;
        }
        cq.sync();
    }
    done
}

fn run_timed(depth: u32, secs: f64) {
    let mut ring = IoUring::new(depth).expect("IoUring::new");
    let mut chunk = 64u64;
    let t = Instant::now();
    bench_loop(&mut ring, depth, chunk);
    let dt = t.elapsed().as_secs_f64();
    if dt > 0.0 {
        chunk = (chunk as f64 * 0.005 / dt) as u64 + 1;
    }
    let start = Instant::now();
    let mut ops = 0u64;
    let mut el;
    loop {
        ops += bench_loop(&mut ring, depth, chunk);
        el = start.elapsed().as_secs_f64();
        if el >= secs {
            break;
        }
    }
    println!("nop depth={} ops={} secs={:.4} mops={:.4}", depth, ops, el, ops as f64 / el / 1e6);
}

fn main() {
    let secs: f64 = std::env::var("BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let args: Vec<u32> = std::env::args().skip(1).map(|a| a.parse().expect("depth")).collect();
    let depths = if args.is_empty() { vec![1, 2, 4, 8, 16, 32, 128] } else { args };
    for d in depths {
        run_timed(d, secs);
    }
}
