//! Tests for the kernel-interface room.

use super::*;
use core::ffi::c_void;
use core::ptr;
use std::collections::HashSet;

const TABLE: &str = include_str!("../../abi/liburing-2.15-layouts.tsv");
const ASSERTS: &str = include_str!("layout_asserts.rs");

/// Rows that belong to liburing's own structs (src/ring/types.rs) or libc.
const NOT_KERNEL: &[&str] =
    &["io_uring", "io_uring_sq", "io_uring_cq", "io_uring_cqe_iter", "io_uring_zcrx_rq", "sockaddr"];

/// (struct, last path component, kind, value) for every generated assert.
fn parsed_asserts() -> HashSet<(String, String, &'static str, String)> {
    let mut out = HashSet::new();
    for line in ASSERTS.lines() {
        let Some(body) = line.strip_prefix("const _: () = assert!(") else { continue };
        let body = body.trim_end_matches(");");
        let (lhs, rhs) = body.split_once(" == ").expect("assert without ==");
        let value = rhs.trim().to_string();
        if let Some(ty) = lhs.strip_prefix("size_of::<") {
            out.insert((ty.trim_end_matches(">()").to_string(), String::new(), "sizeof", value));
            continue;
        }
        let (kind, args) = if let Some(a) = lhs.strip_prefix("offset_of!(") {
            ("offset", a)
        } else if let Some(a) = lhs.strip_prefix("field_size!(") {
            ("size", a)
        } else {
            panic!("unexpected assert: {line}");
        };
        let (ty, path) = args.trim_end_matches(')').split_once(", ").unwrap();
        let last = path.rsplit('.').next().unwrap().to_string();
        out.insert((ty.to_string(), last, kind, value));
    }
    out
}

#[test]
fn layout_asserts_cover_every_kernel_row() {
    let asserts = parsed_asserts();
    let mut checked = 0;
    let mut missing = Vec::new();
    for row in TABLE.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        assert_eq!(cols.len(), 4, "malformed row {row:?}");
        let (st, field, off, size) = (cols[0], cols[1], cols[2], cols[3]);
        if NOT_KERNEL.contains(&st) {
            continue;
        }
        let want: Vec<(String, String, &str, String)> = if field == "(sizeof)" {
            vec![(st.into(), String::new(), "sizeof", size.into())]
        } else {
            let name = field.split('[').next().unwrap();
            vec![(st.into(), name.into(), "offset", off.into()), (st.into(), name.into(), "size", size.into())]
        };
        for w in want {
            checked += 1;
            if !asserts.contains(&w) {
                missing.push(w);
            }
        }
    }
    assert!(missing.is_empty(), "rows without a matching compile-time assert: {missing:#?}");
    // 262 kernel rows in the 2.15 table; one sizeof or two field asserts each.
    assert!(checked > 400, "only {checked} checks: table not parsed?");
}

#[test]
fn layout_asserts_are_regenerated() {
    // The committed file must equal the generator's output for the table.
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("sh")
        .arg(format!("{root}/src/sys/gen-layout-asserts.sh"))
        .arg(format!("{root}/abi/liburing-2.15-layouts.tsv"))
        .output()
        .expect("run sh");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout) == ASSERTS, "src/sys/layout_asserts.rs is stale; rerun the generator");
}

#[test]
fn union_views_alias() {
    let mut sqe = io_uring_sqe::default();
    sqe.off_u.cmd_op_s = io_uring_sqe_cmd_op_s { cmd_op: 0x1122_3344, __pad1: 0x5566_7788 };
    sqe.rw_flags_u.poll32_events = 0xdead_beef;
    sqe.splice_fd_in_u.addr_len_s.addr_len = 0x4242;
    // SAFETY: integer-only unions; any bit pattern is valid.
    unsafe {
        assert_eq!(sqe.off_u.off, 0x5566_7788_1122_3344);
        assert_eq!(sqe.rw_flags_u.poll_events, 0xbeef);
        assert_eq!(sqe.splice_fd_in_u.file_index, 0x4242);
    }
    // The buf-ring tail overlays bufs[0].resv.
    let mut br = io_uring_buf_ring::default();
    br.resv1_u.resv1_s.tail = 7;
    // SAFETY: br is 16 bytes, exactly one io_uring_buf.
    let b0 = unsafe { &*(ptr::addr_of!(br) as *const io_uring_buf) };
    assert_eq!(b0.resv, 7);
}

#[test]
fn constant_spot_checks() {
    assert_eq!(IORING_OP_LAST, 65);
    assert_eq!(IORING_OP_URING_CMD128, 64);
    assert_eq!(IORING_REGISTER_LAST, IORING_REGISTER_BPF_FILTER + 1);
    assert_eq!(IORING_REGISTER_USE_REGISTERED_RING, 0x8000_0000);
    assert_eq!(IORING_ZCRX_AREA_MASK, 0xffff_0000_0000_0000);
    assert_eq!(IORING_CQE_F_TSTAMP_HW, 0x1_0000);
    assert_eq!(IOSQE_CQE_SKIP_SUCCESS, 0x40);
    assert_eq!(IORING_FILE_INDEX_ALLOC, u32::MAX);
}

/// A fresh ring; closed on drop.
struct Ring {
    fd: i32,
    p: io_uring_params,
}

impl Ring {
    fn new(entries: u32, flags: u32) -> Result<Ring, i32> {
        let mut p = io_uring_params { flags, ..Default::default() };
        // SAFETY: p is a live, writable io_uring_params.
        let fd = unsafe { io_uring_setup(entries, &mut p) };
        if fd < 0 {
            Err(fd)
        } else {
            Ok(Ring { fd, p })
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        assert_eq!(unsafe { close(self.fd) }, 0);
    }
}

#[test]
fn setup_reports_geometry_and_errors() {
    let r = Ring::new(8, 0).expect("io_uring_setup");
    assert_eq!(r.p.sq_entries, 8);
    assert_eq!(r.p.cq_entries, 16);
    assert!(r.p.features & IORING_FEAT_SINGLE_MMAP != 0);
    assert!(r.p.sq_off.array != 0 && r.p.cq_off.cqes != 0);

    // Zero entries is rejected with -EINVAL, returned rather than via errno.
    assert_eq!(Ring::new(0, 0).err(), Some(-libc::EINVAL));
    // Unknown setup flag bit.
    assert_eq!(Ring::new(8, 1 << 30).err(), Some(-libc::EINVAL));
}

#[test]
fn nop_round_trip_through_mapped_rings() {
    let r = Ring::new(4, IORING_SETUP_NO_SQARRAY).expect("io_uring_setup");
    let p = &r.p;
    let ring_sz = (p.cq_off.cqes as usize + p.cq_entries as usize * size_of::<io_uring_cqe>())
        .max(p.sq_off.array as usize + p.sq_entries as usize * 4);
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_SHARED | libc::MAP_POPULATE;
    // SAFETY: fresh shared mappings of our ring fd at kernel-defined offsets.
    let ring =
        unsafe { mmap(ptr::null_mut(), ring_sz, rw, flags, r.fd, IORING_OFF_SQ_RING as i64) }.expect("mmap ring");
    let sqes_sz = p.sq_entries as usize * size_of::<io_uring_sqe>();
    // SAFETY: as above.
    let sqes = unsafe { mmap(ptr::null_mut(), sqes_sz, rw, flags, r.fd, IORING_OFF_SQES as i64) }.expect("mmap sqes");
    // SAFETY: advice on our own mapping.
    assert_eq!(unsafe { madvise(ring, ring_sz, libc::MADV_DONTFORK) }, 0);

    // SAFETY: offsets come from the kernel and lie within the ring mapping;
    // the kernel only reads the SQE after the tail store below.
    unsafe {
        let at = |off: u32| (ring as *mut u8).add(off as usize) as *mut u32;
        let sqe = sqes as *mut io_uring_sqe;
        *sqe = io_uring_sqe { opcode: IORING_OP_NOP, user_data: 0xfeed_f00d, ..Default::default() };
        let tail = at(p.sq_off.tail);
        core::sync::atomic::AtomicU32::from_ptr(tail).store(1, core::sync::atomic::Ordering::Release);

        let ret = io_uring_enter(r.fd, 1, 1, IORING_ENTER_GETEVENTS, ptr::null(), 0);
        assert_eq!(ret, 1);

        let ctail =
            core::sync::atomic::AtomicU32::from_ptr(at(p.cq_off.tail)).load(core::sync::atomic::Ordering::Acquire);
        let chead = *at(p.cq_off.head);
        assert_eq!(ctail.wrapping_sub(chead), 1);
        let mask = *at(p.cq_off.ring_mask);
        let cqe = &*((ring as *mut u8).add(p.cq_off.cqes as usize) as *const io_uring_cqe).add((chead & mask) as usize);
        assert_eq!(cqe.user_data, 0xfeed_f00d);
        assert_eq!(cqe.res, 0);

        assert_eq!(munmap(sqes, sqes_sz), 0);
        assert_eq!(munmap(ring, ring_sz), 0);
    }
}

#[test]
fn register_probe_and_bad_opcode() {
    let r = Ring::new(4, 0).expect("io_uring_setup");
    const N: usize = 256;
    #[repr(C)]
    struct Probe {
        hdr: io_uring_probe,
        ops: [io_uring_probe_op; N],
    }
    let mut probe = Probe { hdr: Default::default(), ops: [Default::default(); N] };
    // SAFETY: probe has room for N ops after the header.
    let ret =
        unsafe { io_uring_register(r.fd, IORING_REGISTER_PROBE, &mut probe as *mut Probe as *const c_void, N as u32) };
    assert_eq!(ret, 0);
    assert!(probe.hdr.last_op >= IORING_OP_SEND_ZC, "kernel 6.x knows at least SEND_ZC");
    assert!(probe.ops[IORING_OP_NOP as usize].flags & IO_URING_OP_SUPPORTED != 0);
    assert_eq!(probe.ops[IORING_OP_READ as usize].op, IORING_OP_READ);

    // SAFETY: the kernel rejects the opcode before looking at arg.
    let ret = unsafe { io_uring_register(r.fd, 9999, ptr::null(), 0) };
    assert_eq!(ret, -libc::EINVAL);
    // SAFETY: as above. fd -1 means "no ring", valid only for a few opcodes.
    let ret = unsafe { io_uring_register(-1, IORING_REGISTER_PROBE, ptr::null(), 0) };
    assert_eq!(ret, -libc::EINVAL);
    // SAFETY: as above; an fd far above any rlimit is never open.
    let ret = unsafe { io_uring_register(0x7fff_fff0, IORING_REGISTER_PROBE, ptr::null(), 0) };
    assert_eq!(ret, -libc::EBADF);
}

#[test]
fn enter_on_bad_fd_and_small_wrappers() {
    // SAFETY: no memory is passed.
    assert_eq!(unsafe { io_uring_enter(-1, 0, 0, 0, ptr::null(), 0) }, -libc::EBADF);
    // SAFETY: -1 is never an open fd.
    assert_eq!(unsafe { close(-1) }, -libc::EBADF);
    // SAFETY: a zero-length anonymous mapping is refused before any effect.
    let r = unsafe { mmap(ptr::null_mut(), 0, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    assert_eq!(r, Err(-libc::EINVAL));
    let (cur, max) = getrlimit(libc::RLIMIT_NOFILE).expect("prlimit64");
    // SAFETY: getrlimit only writes the struct we pass.
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) }, 0);
    assert_eq!((cur, max), (rl.rlim_cur, rl.rlim_max));
}

/// Run the C compiler on `src`, returning stdout of the built program (or of
/// the preprocessor when `preprocess` is set).
fn run_c(src: &str, tag: &str, preprocess: bool) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = std::env::temp_dir().join(format!("liburing-rs-sys-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("t.c");
    std::fs::write(&c, src).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let exe = dir.join("t");
    let mut cmd = std::process::Command::new(&cc);
    cmd.arg("-std=gnu11").arg("-Wall").arg("-Werror").arg(format!("-I{root}/include"));
    if preprocess {
        cmd.arg("-E").arg("-P").arg(&c);
    } else {
        cmd.arg(&c).arg("-o").arg(&exe);
    }
    let out = cmd.output().expect("run C compiler");
    assert!(out.status.success(), "{cc} failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = if preprocess {
        out.stdout
    } else {
        let run = std::process::Command::new(&exe).output().expect("run C program");
        assert!(run.status.success());
        run.stdout
    };
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(text).unwrap()
}

const UAPI_INCLUDES: &str = "#include <liburing/io_uring.h>\n\
                             #include <liburing/io_uring/query.h>\n\
                             #include <liburing/io_uring/bpf_filter.h>\n";

/// Every Rust constant has the value the C header gives it, and every
/// macro and enumerator of the C headers has a Rust constant.
#[test]
fn constants_match_c_headers() {
    // Values: print each Rust-known name from C, compare modulo 2^64.
    let mut src = format!("#include <stdio.h>\n{UAPI_INCLUDES}int main(void) {{\n");
    for (name, _) in consts::ALL {
        src += &format!("    printf(\"%s %llu\\n\", \"{name}\", (unsigned long long)({name}));\n");
    }
    src += "    return 0;\n}\n";
    let out = run_c(&src, "vals", false);
    let mut seen = 0;
    for (line, (name, v)) in out.lines().zip(consts::ALL) {
        let (cname, cval) = line.split_once(' ').unwrap();
        assert_eq!(cname, *name);
        assert_eq!(cval.parse::<u64>().unwrap(), *v as u64, "{name}: C and Rust disagree");
        seen += 1;
    }
    assert_eq!(seen, consts::ALL.len());

    // Completeness: macros the headers add beyond their own includes, plus
    // enumerators, must all exist in Rust.
    let rust: HashSet<&str> = consts::ALL.iter().map(|(n, _)| *n).collect();
    let macro_names = |src: &str, tag: &str| -> HashSet<String> {
        let root = env!("CARGO_MANIFEST_DIR");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let dir = std::env::temp_dir().join(format!("liburing-rs-sys-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = dir.join("m.c");
        std::fs::write(&c, src).unwrap();
        let out = std::process::Command::new(&cc)
            .args(["-dM", "-E"])
            .arg(format!("-I{root}/include"))
            .arg(&c)
            .output()
            .expect("run C preprocessor");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("#define "))
            .map(|l| l.split([' ', '(']).next().unwrap().to_string())
            .collect()
    };
    let sys_macros =
        macro_names("#include <linux/fs.h>\n#include <linux/types.h>\n#include <linux/time_types.h>\n", "mbase");
    let ours = macro_names(UAPI_INCLUDES, "mours");
    let mut missing: Vec<String> = ours
        .difference(&sys_macros)
        .filter(|m| !m.ends_with("_H")) // include guards
        .filter(|m| !rust.contains(m.as_str()))
        .cloned()
        .collect();

    // Enumerators: one per line inside each `enum ... {` block of our own
    // header sources (preprocessed output would drag in <linux/fs.h>'s).
    let root = env!("CARGO_MANIFEST_DIR");
    let mut enumerators = 0;
    for h in ["io_uring.h", "io_uring/query.h", "io_uring/bpf_filter.h"] {
        let text = std::fs::read_to_string(format!("{root}/include/liburing/{h}")).unwrap();
        let mut in_enum = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("enum") && t.ends_with('{') {
                in_enum = true;
            } else if in_enum && t.starts_with('}') {
                in_enum = false;
            } else if in_enum && !t.is_empty() && !t.starts_with("/*") && !t.starts_with("//") {
                let name = t.split([' ', ',', '=']).next().unwrap();
                enumerators += 1;
                if !rust.contains(name) {
                    missing.push(name.to_string());
                }
            }
        }
    }
    assert!(enumerators > 140, "only {enumerators} enumerators found: parser out of step with header");
    missing.sort();
    assert!(missing.is_empty(), "C names without a Rust constant: {missing:?}");
}
