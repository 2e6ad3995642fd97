//! The first forward keeps glibc's malloc from handing freed tensors back to the system, so
//! tensors of a few MiB freed by one op are reused by the next rather than faulted in afresh
//! (a test binary of its own: malloc's settings are the process's).
#![cfg(all(target_os = "linux", target_env = "gnu", feature = "std"))]

/// This thread's minor page faults so far (`minflt`, field 10 of `/proc/thread-self/stat`).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("/proc/thread-self/stat");
    // The fields after the command name's closing parenthesis start at field 3.
    let field = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(7));
    field.and_then(|f| f.parse().ok()).expect("minflt")
}

#[test]
fn freed_tensors_are_reused_without_page_faults() {
    burn_onnx::ops::on_pool(|| ());
    // Three 4 MiB tensors alive at once, then freed: by default glibc gives the top of its heap
    // back once twice the largest freed block lies free, and each round faults them in again.
    let round = || {
        let live: Vec<Vec<f32>> = (0..3).map(|i| vec![i as f32 + 1.0; 1 << 20]).collect();
        std::hint::black_box(&live);
    };
    round();
    let before = minor_faults();
    for _ in 0..20 {
        round();
    }
    let faults = minor_faults() - before;
    assert!(faults < 300, "{faults} page faults over 20 rounds of three 4 MiB tensors (3,072 pages a round)");
}
