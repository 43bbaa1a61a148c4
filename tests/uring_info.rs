//! uring-info against the kernel: its report must say what the kernel says
//! when asked directly (the io-uring crate's probe, raw io_uring_setup
//! calls, IORING_REGISTER_QUERY), its JSON must parse and carry exactly the
//! fields docs/uring-info.md documents, and its arguments must behave.
//! The run under a seccomp filter is in scripts/check-uring-info.sh, which
//! has the helper program.

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uring-info")).args(args).output().expect("cannot run uring-info")
}

fn report() -> Value {
    let out = run(&["--json"]);
    assert!(out.status.success(), "uring-info --json failed: {out:?}");
    serde_json::from_slice(&out.stdout).expect("uring-info --json is not valid JSON")
}

/// io_uring_setup(2) straight from libc; returns (fd or -errno, params as
/// the 30 u32 words of struct io_uring_params).
fn raw_setup(entries: u32, flags: u32, cq_entries: u32) -> (i64, [u32; 30]) {
    let mut p = [0u32; 30];
    p[1] = cq_entries;
    p[2] = flags;
    // SAFETY: p is a writable 120-byte io_uring_params.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, entries, p.as_mut_ptr()) };
    if fd < 0 {
        return (-(std::io::Error::last_os_error().raw_os_error().unwrap() as i64), p);
    }
    // SAFETY: our own ring fd.
    unsafe { libc::close(fd as i32) };
    (fd, p)
}

/// The documented field paths: the first column of the schema table.
fn documented_fields() -> BTreeSet<String> {
    let doc = include_str!("../docs/uring-info.md");
    let table = doc.split("## JSON schema").nth(1).expect("docs/uring-info.md has no JSON schema section");
    table.lines().filter_map(|l| l.strip_prefix("| `")).map(|l| l.split('`').next().unwrap().to_string()).collect()
}

/// The path of every leaf in `v` (null counts as a leaf), with `[]` for the
/// elements of arrays of objects.
fn leaves(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(v, &p, out);
            }
        }
        Value::Array(a) if a.iter().any(Value::is_object) => {
            for e in a {
                leaves(e, &format!("{prefix}[]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

#[test]
fn json_carries_exactly_the_documented_fields() {
    let j = report();
    assert_eq!(j["schema"], 1);
    let mut found = BTreeSet::new();
    leaves(&j, "", &mut found);
    let documented = documented_fields();
    let undocumented: Vec<_> = found.difference(&documented).collect();
    assert!(undocumented.is_empty(), "fields missing from docs/uring-info.md: {undocumented:?}");
    // An object documented as a whole (query, largest_ring) is present when
    // it is null or has members.
    let present = |d: &String| found.iter().any(|f| f == d || f.starts_with(&format!("{d}.")));
    let absent: Vec<_> =
        documented.iter().filter(|d| !(present(d) || d.starts_with("query.") && j["query"].is_null())).collect();
    assert!(absent.is_empty(), "documented fields missing from the JSON: {absent:?}");
}

#[test]
fn opcodes_match_a_direct_probe() {
    let j = report();
    assert_eq!(j["io_uring"]["available"], true, "io_uring is not available here: {}", j["io_uring"]["cause"]);
    let ring = io_uring::IoUring::new(4).unwrap();
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe).unwrap();
    let ops = j["opcodes"].as_array().unwrap();
    assert!(ops.len() >= 63, "only {} opcodes listed", ops.len());
    for op in ops {
        let value = op["value"].as_u64().unwrap() as u8;
        assert_eq!(op["supported"], probe.is_supported(value), "opcode {}", op["name"]);
    }
    assert!(probe.is_supported(0) && ops[0]["name"] == "NOP");
}

#[test]
fn features_and_largest_ring_match_raw_setup() {
    let j = report();
    let (fd, p) = raw_setup(4, 0, 0);
    assert!(fd >= 0, "io_uring_setup: {fd}");
    assert_eq!(j["features"]["mask"], p[5]);
    let names = j["features"]["names"].as_array().unwrap();
    assert!(names.contains(&Value::from("FEAT_NODROP")) == (p[5] & 2 != 0));

    const CQSIZE: u32 = 1 << 3;
    const CLAMP: u32 = 1 << 4;
    let (fd, p) = raw_setup(u32::MAX, CLAMP | CQSIZE, u32::MAX);
    assert!(fd >= 0, "io_uring_setup with CLAMP: {fd}");
    assert_eq!(j["largest_ring"]["sq_entries"], p[0]);
    assert_eq!(j["largest_ring"]["cq_entries"], p[1]);
}

#[test]
fn setup_flags_and_register_opcodes_match_the_query() {
    let j = report();
    let q = &j["query"];
    if q.is_null() {
        eprintln!("skipped: this kernel has no IORING_REGISTER_QUERY");
        return;
    }
    let known_flags = q["setup_flags"].as_u64().unwrap();
    for f in j["setup_flags"].as_array().unwrap() {
        let v = f["value"].as_u64().unwrap();
        if known_flags & v != 0 {
            assert_eq!(f["accepted"], true, "known flag refused: {f}");
        } else {
            assert_eq!(f["error"], "EINVAL", "unknown flag not refused with EINVAL: {f}");
        }
    }
    let nr = q["register_opcodes"].as_u64().unwrap();
    for r in j["register_opcodes"].as_array().unwrap() {
        let known = r["value"].as_u64().unwrap() < nr;
        assert_eq!(r["known"], known, "register opcode {r}");
    }
    assert_eq!(j["probe_last_op"].as_u64().unwrap() + 1, q["request_opcodes"].as_u64().unwrap());
}

#[test]
fn policy_facts_match_proc() {
    let j = report();
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().parse::<i64>().unwrap());
    assert_eq!(j["sysctl"]["io_uring_disabled"].as_i64(), read("/proc/sys/kernel/io_uring_disabled"));
    assert_eq!(j["sysctl"]["io_uring_group"].as_i64(), read("/proc/sys/kernel/io_uring_group"));
    // The child inherits the test's seccomp state.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mode = status.lines().find_map(|l| l.strip_prefix("Seccomp:")).unwrap().trim();
    assert_eq!(j["process"]["seccomp_mode"].to_string(), mode);
    // SAFETY: getuid has no preconditions.
    assert_eq!(j["process"]["uid"], unsafe { libc::getuid() });
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(j["kernel"]["release"], release.trim());
    assert_eq!(j["engine"]["selected"], "kernel");
}

#[test]
fn text_report_has_every_section_and_agrees_with_json() {
    let j = report();
    let out = run(&[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for section in [
        "\nKernel\n",
        "\nio_uring\n",
        "\nPolicy\n",
        "\nFeatures (",
        "\nSetup flags (",
        "\nOpcodes (",
        "\nRegister opcodes (",
        "\nLimits\n",
        "\nEngine\n",
    ] {
        assert!(text.contains(section), "no section {section:?} in:\n{text}");
    }
    for op in j["opcodes"].as_array().unwrap() {
        let want = if op["supported"] == true { "yes" } else { "no" };
        let name = op["name"].as_str().unwrap();
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap();
        assert_eq!(line.split_whitespace().nth(1), Some(want), "{line}");
    }
}

#[test]
fn check_answers_with_its_exit_status() {
    let j = report();
    let code = |args: &[&str]| run(args).status.code().unwrap();
    assert_eq!(code(&["--check", "NOP", "IORING_OP_READ", "single_issuer", "FEAT_NODROP", "REGISTER_PROBE"]), 0);
    let missing = j["opcodes"].as_array().unwrap().iter().find(|o| o["supported"] == false);
    if let Some(op) = missing {
        let name = op["name"].as_str().unwrap();
        let out = run(&["--check", "NOP", name]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("not available: {name}")));
    }
    let out = run(&["--check", "NOP", "NO_SUCH_THING"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown feature name 'NO_SUCH_THING'"));
}

#[test]
fn bad_arguments_get_usage_and_exit_2() {
    for args in [&["--check"][..], &["--bogus"], &["--json", "extra"], &["report"]] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("usage: uring-info"), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage: uring-info"));
}
