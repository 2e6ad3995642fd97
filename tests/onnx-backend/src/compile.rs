//! Compiling the generated suite (attributing rustc errors to the test whose module caused
//! them, then rebuilding without it) and running it, surviving crashes of single tests.

use crate::cases::Case;
use crate::expectations::Outcome;
use crate::suite::{Backend, Suite};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Case modules a rustc diagnostic points into (primary spans, then any span or child).
fn cases_of(message: &serde_json::Value) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut visit = |m: &serde_json::Value| {
        for span in m["spans"].as_array().into_iter().flatten() {
            if let Some(file) = span["file_name"].as_str() {
                if let Some(case) = file.strip_prefix("src/cases/").and_then(|f| f.strip_suffix(".rs")) {
                    found.insert(case.to_string());
                }
            }
        }
    };
    visit(message);
    for child in message["children"].as_array().into_iter().flatten() {
        visit(child);
    }
    found
}

/// The build's errors: per case module, the first error in it; and the rendered text of the
/// errors no case owns, spanless ones included (the linker's, a full disk's: the reason a build
/// failed when no test is to blame).
fn build_errors(messages: &[serde_json::Value]) -> (BTreeMap<String, String>, Vec<String>) {
    let mut failing: BTreeMap<String, String> = BTreeMap::new();
    let mut unattributed = vec![];
    for msg in messages {
        if msg["reason"] != "compiler-message" || msg["message"]["level"] != "error" {
            continue;
        }
        let message = &msg["message"];
        let text = message["message"].as_str().unwrap_or("").to_string();
        let owners = cases_of(message);
        if owners.is_empty() {
            unattributed.push(message["rendered"].as_str().unwrap_or(&text).to_string());
        }
        for case in owners {
            failing.entry(case).or_insert_with(|| text.clone());
        }
    }
    (failing, unattributed)
}

/// Builds the suite; cases that fail to compile get a `compile-error` outcome and are dropped
/// until the rest builds. Returns the compiled cases.
pub fn compile<'a>(
    suite: &Suite,
    target: &Path,
    mut cases: Vec<(&'a Case, String)>,
    outcomes: &mut BTreeMap<String, Outcome>,
) -> Result<Vec<(&'a Case, String)>, String> {
    loop {
        let modules: Vec<(String, String)> = cases.iter().map(|(c, m)| (c.name.clone(), m.clone())).collect();
        suite.write_main(&modules)?;
        let build = suite.scratch(target).build()?;
        if build.success {
            return Ok(cases);
        }
        let messages = build.messages;
        let (failing, unattributed) = build_errors(&messages);
        if failing.is_empty() {
            return Err(format!(
                "the suite failed to build with errors not attributable to a test:\n{}",
                unattributed.join("\n")
            ));
        }
        eprintln!("{} test(s) failed to compile; rebuilding without them", failing.len());
        for (case, module) in &cases {
            if let Some(error) = failing.get(module) {
                outcomes.insert(case.name.clone(), Outcome::new("compile-error", error));
            }
        }
        cases.retain(|(_, m)| !failing.contains_key(m));
    }
}

/// Runs every compiled case on its data sets (in order, in one call). A case that crashes the
/// process (abort, stack overflow) is recorded as a runtime error and the run resumes after it.
pub fn run_suite(
    suite: &Suite,
    target: &Path,
    cases: &[(&Case, String)],
    outcomes: &mut BTreeMap<String, Outcome>,
) -> Result<(), String> {
    let binary = suite.binary(target);
    let mut lines = vec![];
    for (case, _) in cases {
        if case.data_sets.is_empty() {
            outcomes.insert(case.name.clone(), Outcome::new("runtime-error", "the test has no test_data_set folder"));
        } else {
            lines.push(
                std::iter::once(case.name.clone())
                    .chain(case.data_sets.iter().map(|d| d.display().to_string()))
                    .collect::<Vec<_>>()
                    .join("\t"),
            );
        }
    }
    // `--backend remote`: the suite binary itself serves a flex device on the loopback address,
    // in its own process, for every run below; stopped (stdin closed) once they are done.
    let server = match suite.backend {
        Backend::Remote => Some(RemoteServer::start(&binary)?),
        _ => None,
    };
    let manifest = suite.dir.join("manifest.tsv");
    std::fs::write(&manifest, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).map_err(|e| e.to_string())?;
    let mut skip = 0;
    while skip < lines.len() {
        let mut command = Command::new(&binary);
        if suite.int64 {
            command.env("ONNX_BACKEND_INT64", "1");
        }
        if let Some(server) = &server {
            command.env("BURN_REMOTE_ADDRESS", &server.url);
        }
        let mut child = command
            .env("BURN_DEVICE", suite.backend.device_name())
            .arg(&manifest)
            .arg(skip.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut in_progress: Option<String> = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[..] {
                ["START", name] => in_progress = Some(name.to_string()),
                ["NOTE", text] => println!("{text}"),
                ["RESULT", name, status, detail, forward_ms] => {
                    let passed = status == "pass";
                    let mut outcome = Outcome::new(status, if passed { "" } else { detail });
                    outcome.max_diff = detail.parse().ok().filter(|_| passed);
                    outcome.forward_ms = forward_ms.parse().ok();
                    outcomes.insert(name.to_string(), outcome);
                    in_progress = None;
                    skip += 1;
                }
                _ => {}
            }
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        if let Some(name) = in_progress {
            outcomes.insert(name, Outcome::new("runtime-error", &format!("the test crashed the process ({status})")));
            skip += 1;
        } else if !status.success() && skip < lines.len() {
            return Err(format!("the suite exited with {status} before running every test"));
        }
    }
    server.map_or(Ok(()), RemoteServer::stop)
}

/// The suite binary's `--serve` process: a Burn remote server on 127.0.0.1.
struct RemoteServer {
    child: std::process::Child,
    url: String,
}

impl RemoteServer {
    fn start(binary: &Path) -> Result<Self, String> {
        let mut child = Command::new(binary)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the remote server {}: {e}", binary.display()))?;
        let mut url = String::new();
        if let Some(stdout) = child.stdout.take() {
            BufReader::new(stdout).read_line(&mut url).map_err(|e| e.to_string())?;
        }
        let url = url.trim().to_string();
        if !url.starts_with("ws://127.0.0.1:") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the remote server printed {url:?}, not its loopback address"));
        }
        eprintln!("remote server (a flex device, its own process) on {url}");
        Ok(Self { child, url })
    }

    /// Closes its stdin and waits for it to exit; a server that does not stop is killed.
    fn stop(mut self) -> Result<(), String> {
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self.child.try_wait().map_err(|e| e.to_string())? {
                Some(status) if status.success() => return Ok(()),
                Some(status) => return Err(format!("the remote server exited with {status}")),
                None if std::time::Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err("the remote server did not stop within 10 s".into());
                }
                None => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }
}

impl Drop for RemoteServer {
    /// A run that fails before `stop` leaves no server behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::build_errors;
    use serde_json::json;

    fn error(message: &str, files: &[&str]) -> serde_json::Value {
        let spans: Vec<_> = files.iter().map(|f| json!({ "file_name": f })).collect();
        json!({
            "reason": "compiler-message",
            "message": { "level": "error", "message": message, "rendered": format!("error: {message}"), "spans": spans, "children": [] }
        })
    }

    #[test]
    fn errors_go_to_their_case_and_the_rest_are_kept_with_their_text() {
        let messages = vec![
            error("mismatched types", &["src/cases/test_a.rs"]),
            error("second error in a", &["src/cases/test_a.rs"]),
            error("linking with `cc` failed: No space left on device", &[]),
            error("in main", &["src/main.rs"]),
            json!({ "reason": "compiler-message", "message": { "level": "warning", "message": "unused", "spans": [] } }),
        ];
        let (failing, unattributed) = build_errors(&messages);
        assert_eq!(failing.len(), 1);
        assert_eq!(failing["test_a"], "mismatched types");
        assert_eq!(unattributed, ["error: linking with `cc` failed: No space left on device", "error: in main"]);
    }
}
