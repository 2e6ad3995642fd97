//! The runner's command line on inputs that never reach the suite build. Being an integration
//! test also makes `cargo test --workspace` build the runner itself, which the test command then
//! calls directly: one build, with the same dependency features as every other test.

use std::process::Command;

fn runner(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_onnx-backend")).args(args).output().expect("the runner starts");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_unknown_suite_is_refused_with_the_known_ones() {
    let (code, stderr) = runner(&["--data", ".", "--suite", "nodes"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("'nodes'") && stderr.contains("pytorch-converted"), "{stderr}");
}

#[test]
fn a_missing_data_folder_is_named() {
    let missing = std::env::temp_dir().join("onnx-backend-cli-test-missing");
    let (code, stderr) = runner(&["--data", missing.to_str().unwrap(), "--suite", "light"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("onnx-backend: cannot list") && stderr.contains("onnx-backend-cli-test-missing"),
        "{stderr}"
    );
}

#[test]
fn a_folder_without_tests_is_an_error_not_an_empty_pass() {
    let empty = std::env::temp_dir().join(format!("onnx-backend-cli-test-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let (code, stderr) = runner(&["--dir", empty.to_str().unwrap()]);
    std::fs::remove_dir_all(&empty).unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no tests in"), "{stderr}");
}

#[test]
fn a_report_file_without_its_markers_is_refused_before_the_suite_runs() {
    let chapter = std::env::temp_dir().join(format!("onnx-backend-cli-test-chapter-{}.md", std::process::id()));
    std::fs::write(&chapter, "# A chapter\n\n<!-- onnx-backend report: start -->\n<!-- onnx-backend report: end -->\n")
        .unwrap();
    let missing = std::env::temp_dir().join("onnx-backend-cli-test-no-such-folder");
    // The plain markers are there; the zoo table's and the benchmark's are not. The folder of
    // tests does not exist: the refusal comes first.
    let chapter_arg = chapter.to_str().unwrap();
    let zoo = ["--dir", missing.to_str().unwrap(), "--report", chapter_arg, "--report-name", "zoo"];
    let bench = ["--dir", missing.to_str().unwrap(), "--bench", "--bench-report", chapter_arg];
    let refusals = [runner(&zoo), runner(&bench)];
    let unchanged = std::fs::read_to_string(&chapter).unwrap();
    std::fs::remove_file(&chapter).unwrap();
    for (code, stderr) in refusals {
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("has no `<!-- onnx-backend") && stderr.contains("add them where the table belongs"),
            "{stderr}"
        );
    }
    assert!(unchanged.ends_with("<!-- onnx-backend report: end -->\n"));
}
