//! A program on the tokio-rs io-uring crate, which makes the io_uring
//! system calls itself (no liburing): reads and writes, a timeout, a
//! multishot accept whose connections are read by a multishot receive
//! from a provided buffer ring, and a wait for the ring fd by epoll.
//! It prints what it saw; scripts/check-intercept.sh runs it on the kernel
//! and under `uring-run` with io_uring blocked, and compares the outputs.
//!
//!     cargo build --release --example intercept_crate

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::{cqueue, opcode, types, IoUring};

const BGID: u16 = 3;
const NBUFS: u16 = 8;
const BUF_LEN: usize = 64;

fn fail(what: &str) -> ! {
    eprintln!("intercept_crate: {what}");
    std::process::exit(1)
}

fn wait_one(ring: &mut IoUring) -> cqueue::Entry {
    loop {
        if let Some(c) = ring.completion().next() {
            return c;
        }
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => fail(&format!("submit_and_wait: {e}")),
        }
    }
}

fn push(ring: &mut IoUring, e: &io_uring::squeue::Entry) {
    // SAFETY: every buffer an entry names outlives its completion here.
    unsafe { ring.submission().push(e).unwrap_or_else(|_| fail("SQ full")) };
}

fn main() {
    let mut ring = IoUring::new(64).unwrap_or_else(|e| fail(&format!("setup: {e}")));

    // Write, then read back.
    let path = std::env::temp_dir().join(format!("intercept-crate-{}", std::process::id()));
    let file = std::fs::OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    push(
        &mut ring,
        &opcode::Write::new(types::Fd(file.as_raw_fd()), data.as_ptr(), data.len() as u32)
            .offset(0)
            .build()
            .user_data(1),
    );
    let c = wait_one(&mut ring);
    println!("write: user_data {} res {}", c.user_data(), c.result());
    let mut back = vec![0u8; data.len()];
    push(
        &mut ring,
        &opcode::Read::new(types::Fd(file.as_raw_fd()), back.as_mut_ptr(), back.len() as u32)
            .offset(0)
            .build()
            .user_data(2),
    );
    let c = wait_one(&mut ring);
    println!("read: user_data {} res {} same {}", c.user_data(), c.result(), back == data);

    // A timeout.
    let ts = types::Timespec::new().nsec(5_000_000);
    push(&mut ring, &opcode::Timeout::new(&ts).build().user_data(3));
    let c = wait_one(&mut ring);
    println!("timeout: user_data {} res {}", c.user_data(), c.result());

    // A provided buffer ring: page-aligned memory of io_uring_buf entries,
    // its tail in the last 16 bits of the first entry.
    // SAFETY: a fresh anonymous mapping.
    let ring_mem = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ring_mem == libc::MAP_FAILED {
        fail("mmap");
    }
    let bufs = vec![0u8; BUF_LEN * NBUFS as usize];
    for i in 0..NBUFS as usize {
        // SAFETY: entry i of the ring (16 bytes each) lies in the page.
        unsafe {
            let e = (ring_mem as *mut u8).add(16 * i);
            (e as *mut u64).write(bufs.as_ptr().add(i * BUF_LEN) as u64);
            (e.add(8) as *mut u32).write(BUF_LEN as u32);
            (e.add(12) as *mut u16).write(i as u16);
        }
    }
    // SAFETY: the tail field of entry 0, 2-byte aligned, in the page.
    let tail = unsafe { &*((ring_mem as *mut u8).add(14) as *const AtomicU16) };
    tail.store(NBUFS, Ordering::Release);
    // SAFETY: the memory stays mapped while the ring uses it.
    unsafe { ring.submitter().register_buf_ring_with_flags(ring_mem as u64, NBUFS, BGID, 0) }
        .unwrap_or_else(|e| fail(&format!("register_buf_ring: {e}")));

    // Multishot accept of three connections; each gets a multishot
    // receive from the buffer ring.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    push(&mut ring, &opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd())).build().user_data(10));
    ring.submit().unwrap();
    let addr = listener.local_addr().unwrap();
    let mut clients: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut accepted = Vec::new();
    while accepted.len() < 3 {
        let c = wait_one(&mut ring);
        if c.user_data() != 10 || c.result() < 0 || !cqueue::more(c.flags()) {
            fail(&format!("accept: user_data {} res {} flags {:#x}", c.user_data(), c.result(), c.flags()));
        }
        accepted.push(c.result());
    }
    println!("accept: {} connections, more set", accepted.len());
    for (i, &fd) in accepted.iter().enumerate() {
        push(&mut ring, &opcode::RecvMulti::new(types::Fd(fd), BGID).build().user_data(20 + i as u64));
    }
    ring.submit().unwrap();
    for (i, c) in clients.iter_mut().enumerate() {
        c.write_all(format!("hello from {i}").as_bytes()).unwrap();
    }
    let mut got = Vec::new();
    while got.len() < 3 {
        let c = wait_one(&mut ring);
        if c.result() <= 0 || !(20..23).contains(&c.user_data()) {
            fail(&format!("recv: user_data {} res {}", c.user_data(), c.result()));
        }
        let bid = cqueue::buffer_select(c.flags()).unwrap_or_else(|| fail("recv: no buffer id"));
        let s = &bufs[bid as usize * BUF_LEN..][..c.result() as usize];
        got.push(format!(
            "{} -> {} (more {})",
            c.user_data() - 20,
            String::from_utf8_lossy(s),
            cqueue::more(c.flags())
        ));
    }
    got.sort();
    for g in got {
        println!("recv: {g}");
    }

    // An epoll-driven wait: the ring fd turns readable when a CQE posts.
    // SAFETY: plain system calls on owned fds.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 99 };
    // SAFETY: as above.
    if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, ring.as_raw_fd(), &mut ev) } != 0 {
        fail("epoll_ctl");
    }
    let ts = types::Timespec::new().nsec(20_000_000);
    push(&mut ring, &opcode::Timeout::new(&ts).build().user_data(4));
    ring.submit().unwrap();
    // The engine's ring fd may still read as ready for up to a millisecond
    // after the CQ was drained (the receives above), so a wake-up finding
    // the CQ empty waits again, as any epoll loop must allow for.
    let mut out = [libc::epoll_event { events: 0, u64: 0 }; 1];
    let mut done = None;
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(2) {
        // SAFETY: `out` has room for one event.
        let n = unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 1, 2000) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            fail("epoll_wait");
        }
        if n == 1 && { out[0].u64 } != 99 {
            fail("epoll_wait: wrong token");
        }
        if let Some(c) = ring.completion().next() {
            done = Some((c.user_data(), c.result()));
            break;
        }
    }
    println!("epoll: ring fd ready, completion {done:?}");
    drop(clients);
    for fd in accepted {
        // SAFETY: the accepted fds are ours.
        unsafe { libc::close(fd) };
    }
    // SAFETY: as above.
    unsafe { libc::close(ep) };
}
