//! `onnx2burn check` as a user runs it, on `tests/check/planted.onnx` (made by
//! scripts/make_check_fixture.py with ONNX Runtime's outputs): six exactly rounded ops, whose one
//! Sub the tests route to `tests/check/hooks.rs`'s `off_by_one_ulp` (one element one ulp off).
//!
//! The checks build the generated code in a throwaway crate under the target folder, against
//! the build of burn that `cargo test` made (seconds once that build exists). The comparisons with
//! ONNX Runtime need the test venv's Python (scripts/setup-python.sh); without it they are
//! skipped, saying so, and the file-based checks still run. The README's fast loop leaves that
//! test out (`--skip with_a_build`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check").join(file).display().to_string()
}

/// Runs `onnx2burn check ARGS`: exit code, stdout, stderr.
fn check(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_onnx2burn")).arg("check").args(args).output().expect("onnx2burn runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The test venv's Python with onnxruntime, as scripts/test.sh sets it up.
fn venv_python() -> Option<PathBuf> {
    let cache = std::env::var_os("BURN_ONNX_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/burn-onnx")))?;
    Some(cache.join("venv/bin/python")).filter(|p| p.is_file())
}

/// The planted model with its Sub routed to the off-by-one-ulp hook.
fn planted(extra: &[&str]) -> Vec<String> {
    let hooks = fixture("hooks.rs");
    let mut args =
        vec![fixture("planted.onnx"), "--hooks".into(), hooks, "--custom-op".into(), "Sub=off_by_one_ulp".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> (i32, String, String) {
    check(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn with_a_build_the_planted_difference_is_found_and_named() {
    let started = std::time::Instant::now();
    let (input, expected) = (format!("x={}", fixture("input.npy")), format!("y={}", fixture("expected.npy")));
    // Files given: no Python needed. One ulp is within the default tolerance, not within 0.
    let files = ["--input", &input, "--expected", &expected, "--python", "/nonexistent/python"];
    let (code, stdout, stderr) = run(&planted(&files));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("PASS: outputs against the expected values, rtol 0.0001, atol 0.0001"), "{stdout}");
    let strict = [&files[..], &["--rtol", "0", "--atol", "0"]].concat();
    let (code, stdout, stderr) = run(&planted(&strict));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("FAIL (1 of 6 elements)") && stdout.contains("DIFFER"), "{stdout}");
    eprintln!("the checks against files took {:.1}s", started.elapsed().as_secs_f64());

    let Some(python) = venv_python() else {
        eprintln!("skipped the comparisons with ONNX Runtime: no test venv (scripts/setup-python.sh)");
        return;
    };
    let python = python.display().to_string();
    // Without the hook, the generated code equals ONNX Runtime bit for bit on seeded inputs.
    let (code, stdout, stderr) =
        check(&[&fixture("planted.onnx"), "--python", &python, "--seed", "3", "--rtol", "0", "--atol", "0"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("inputs: x seeded random (seed 3") && stdout.contains("PASS"), "{stdout}");
    assert!(stdout.contains("on Burn's flex device"), "{stdout}");
    // With it, --bisect names the Sub, whose input matches.
    let (code, stdout, stderr) = run(&planted(&["--python", &python, "--rtol", "0", "--atol", "0", "--bisect"]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let first = "first difference: node `offset` (Sub), output `offset_out`: max abs diff";
    assert!(stdout.contains(first), "{stdout}");
    assert!(stdout.contains("input `rectified`: matches (max abs diff 0)"), "{stdout}");
    assert!(stdout.contains("the difference starts, or grows past tolerance, here"), "{stdout}");
    assert!(stdout.contains("5 of 5 intermediate values compared"), "{stdout}");
    eprintln!("all checks took {:.1}s", started.elapsed().as_secs_f64());
}

#[test]
fn bad_inputs_are_errors_with_exit_code_2() {
    let dir = std::env::temp_dir().join(format!("onnx2burn-check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let garbage = dir.join("garbage.npy");
    std::fs::write(&garbage, b"hello, world").expect("written");
    let model = fixture("planted.onnx");
    // Nothing is built: a target folder of its own, so that the work folder of the planted
    // model is not the one the other test uses at the same time.
    let target = format!("--target-dir={}", dir.join("target").display());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![format!("x={}", dir.join("missing.npy").display())], "cannot read"),
        (vec![format!("x={}", garbage.display())], "not an .npy file"),
        (vec![format!("x={}", fixture("expected.npy")), "--expected".into(), "z=e.npy".into()], "no output `z`"),
        (vec![format!("nope={}", fixture("input.npy"))], "the model has no input `nope`"),
        (vec![format!("x={model}")], "a tensor file is .npy or .pb"),
    ];
    for (inputs, message) in cases {
        let mut args = vec![model.clone(), target.clone(), "--input".into()];
        args.extend(inputs);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("onnx2burn check: ") && stderr.contains(message), "{args:?}: {stderr}");
    }
    // No expected values and no ONNX Runtime: an error that says what to do.
    let (code, _, stderr) = check(&[&model, &target, "--python", "/nonexistent/python"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--python PATH") && stderr.contains("pip install onnxruntime"), "{stderr}");
    let unsupported = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui-tests/models/unsupported_ops.onnx");
    let (code, _, stderr) = check(&[&unsupported.display().to_string(), &target]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("example.custom::ScaleBias") && stderr.contains("--hooks FILE.rs"), "{stderr}");
    let (code, _, stderr) = check(&[&dir.join("missing.onnx").display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_lists_the_options_and_the_main_help_points_to_check() {
    let (code, stdout, stderr) = check(&["--help"]);
    assert_eq!(code, 0, "{stderr}");
    for option in ["--input", "--expected", "--seed", "--bisect", "--rtol", "--hooks", "--custom-op", "--python"] {
        assert!(stdout.contains(option), "{option}: {stdout}");
    }
    let main = Command::new(env!("CARGO_BIN_EXE_onnx2burn")).arg("--help").output().expect("onnx2burn runs");
    assert!(String::from_utf8_lossy(&main.stdout).contains("onnx2burn check MODEL"));
    let (code, _, stderr) = check(&["model.onnx", "--input", "no-equals-sign"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not NAME=FILE"), "{stderr}");
}
