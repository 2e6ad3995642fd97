//! A throwaway crate that builds generated Burn code against this workspace's runtime crate
//! (`runtime-support`, the crate users depend on, `burn_onnx`) and the test helpers (`tests/`, the
//! `onnx-tests` crate: inputs read from `.pb` files, outputs compared), into the workspace's
//! target folder so that burn is compiled once for the workspace and every such crate.
//!
//! Two users: the backend-test runner (`tests/onnx-backend`, one crate holding a whole suite)
//! and `onnx2burn check` (one model, and with `--bisect` the same model with its intermediate
//! values exposed). Both write the crate's `src/` themselves; this crate writes its manifest,
//! runs cargo and finds the executable.
#![forbid(unsafe_code)]

pub mod check;
pub mod npy;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The burn features of the crate: the README's recommended configuration.
pub const BURN_FEATURES: &str = r#""std", "flex", "simd", "rayon", "x86-v4""#;

/// Burn features the workspace's other members turn on (onnx-tests: `ndarray` and `wgpu` for
/// `--backend`, `autodiff` for `--grad-check`; the digits example: `optim`; the exporter
/// (burn-onnx-export): `capture`; the remote example: `remote-websocket` and `remote-server`, which
/// `--backend remote` uses too),
/// asked for here too so that the crate reuses the workspace's build of burn instead of
/// compiling its dispatch layer and everything above it a second time.
const SHARED_FEATURES: &str =
    r#""ndarray", "wgpu", "autodiff", "optim", "capture", "remote-websocket", "remote-server""#;

/// Crates of burn's dependency tree with the features `cargo test --workspace` resolves for them
/// (other members and dev-dependencies ask for more than burn does: the runner's toml_edit turns
/// on indexmap's `std`, which naga, pliron and wgpu-core use; prettyplease 0.3 and syn 3, which
/// cubecl's macros use, the workspace builds with the dev profile's debug info, and a crate that
/// has them as build-side crates only would build them, and all of burn above, without). Cargo
/// hashes features and profiles into every dependent's build, so without these the crate
/// compiles burn and the wgpu stack a second time, ~10 minutes on two cores. [`Build`] tells when
/// that happened ([`ScratchCrate::check_burn_reused`]): a new dependency of the workspace can add
/// one more crate here. To find it, compare the unit graphs
/// (`cargo +nightly build --unit-graph -Z unstable-options`) of the workspace and the crate.
const WORKSPACE_FEATURES: &str = r#"aho-corasick = "1"
bytes = "1"
fastrand = "2"
indexmap = "2"
once_cell = "1"
prettyplease = "0.3"
prost = "0.14"
regex = { version = "1", default-features = false, features = ["std", "perf", "unicode"] }
regex-automata = { version = "0.4", default-features = false, features = ["nfa", "perf"] }
strsim = "0.11"
syn = { version = "3", features = ["full"] }
toml_datetime = "1"
toml_parser = "1"
toml_writer = "1"
winnow = "1""#;

/// The same for the build-dependency side (proc macros and their dependencies are resolved
/// apart): without `once_cell`'s `std` there, `const-random-macro` and everything above it
/// (burn-ndarray, burn-dispatch, ...) differ from the workspace's build; prost, fastrand and
/// indexmap as onnx-ir's and the cubecl macros' build side has them.
const WORKSPACE_HOST_FEATURES: &str = r#"fastrand = "2"
indexmap = { version = "2", default-features = false, features = ["std"] }
once_cell = "1"
prost = "0.14""#;

/// The throwaway crate: a binary package `name` in `dir`, built into `target`.
pub struct ScratchCrate {
    /// The crate's folder (its `Cargo.toml`, `Cargo.lock` and `src/`).
    pub dir: PathBuf,
    /// The package name, which is also the executable's.
    pub name: String,
    /// This workspace's root: the crate depends on its `runtime-support` and `tests` by path.
    pub repo: PathBuf,
    /// The cargo target folder (the workspace's, so that burn is built once).
    pub target: PathBuf,
    /// Build with `--release` rather than the dev profile.
    pub release: bool,
    /// `cargo check` instead of `cargo build`.
    pub check_only: bool,
    /// Burn's `cuda` feature too (a build of burn apart from the workspace's).
    pub cuda: bool,
}

/// What one cargo run of the crate said.
pub struct Build {
    pub success: bool,
    /// Cargo's JSON messages (`--message-format=json`), one per line of its output.
    pub messages: Vec<serde_json::Value>,
}

impl Build {
    /// The rendered text of every error rustc reported.
    pub fn errors(&self) -> Vec<String> {
        self.messages
            .iter()
            .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
            .map(|m| {
                let message = &m["message"];
                message["rendered"].as_str().or(message["message"].as_str()).unwrap_or("").to_string()
            })
            .collect()
    }
}

/// The workspace root: `BURN_ONNX_REPO` when set, else `default` (a binary's compile-time
/// `CARGO_MANIFEST_DIR/..`), checked to be this workspace (it has `runtime-support/` and
/// `tests/Cargo.toml`).
pub fn workspace_root(default: &Path) -> Result<PathBuf, String> {
    let (root, from_env) = match std::env::var_os("BURN_ONNX_REPO") {
        Some(dir) => (PathBuf::from(dir), true),
        None => (default.to_path_buf(), false),
    };
    let ok = root.join("runtime-support/Cargo.toml").is_file() && root.join("tests/Cargo.toml").is_file();
    if !ok {
        let origin = if from_env { "BURN_ONNX_REPO" } else { "the path this program was built from" };
        return Err(format!(
            "{} ({origin}) is not the burn-onnx repository (no runtime-support/ and tests/ there): the generated code \
             is built against the repository's runtime crate; set BURN_ONNX_REPO to a checkout",
            root.display()
        ));
    }
    root.canonicalize().map_err(|e| format!("{}: {e}", root.display()))
}

/// The target folder cargo uses for this workspace: `CARGO_TARGET_DIR`, else `<repo>/target`.
pub fn default_target(repo: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("target"))
}

/// Cargo, without the variables a cargo that runs this process (`cargo test`, `cargo run`) sets
/// for its package: some build scripts of burn's tree watch them (ring's build script reruns
/// when `CARGO_MANIFEST_DIR` changes), and a value the crate's own cargo would see as changed
/// rebuilds burn and all above it.
fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let exact = ["CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_MANIFEST_LINKS", "CARGO_CRATE_NAME"];
    let more = ["CARGO_BIN_NAME", "CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"];
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let package = name.starts_with("CARGO_PKG_") || name.starts_with("CARGO_BIN_EXE_");
        if package || exact.contains(&name) || more.contains(&name) {
            command.env_remove(name);
        }
    }
    command
}

impl ScratchCrate {
    /// Writes the manifest (the workspace's dev profile and dependency features, so its build of
    /// burn is reused) and a copy of the workspace's lock file, each only if changed; makes
    /// `src/`. What `src/` holds is the caller's.
    pub fn init(&self) -> Result<(), String> {
        let src = self.dir.join("src");
        std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
        let dev_profile = workspace_dev_profile(&self.repo)?;
        let repo = self.repo.display();
        let name = &self.name;
        // CUDA only where asked (a GPU machine): the workspace's build of burn has no `cuda`.
        let cuda = if self.cuda { r#", "cuda""# } else { "" };
        let manifest = format!(
            r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
burn = {{ version = "=0.22.1", default-features = false, features = [{BURN_FEATURES}, {SHARED_FEATURES}{cuda}] }}
onnx-burn = {{ path = "{repo}/runtime-support" }}
burn-onnx-export = {{ path = "{repo}/onnx-export" }}
onnx-tests = {{ path = "{repo}/tests" }}
{WORKSPACE_FEATURES}

[build-dependencies]
{WORKSPACE_HOST_FEATURES}

# Same profile as the main workspace, so the dependencies built there are reused.
{dev_profile}

# The benchmark: symbols kept for `perf`, and the macro (a build dependency) optimised in release
# builds too, as the README tells users.
[profile.release]
debug = "line-tables-only"

[profile.release.build-override]
opt-level = 3
"#
        );
        write_if_changed(&self.dir.join("Cargo.toml"), manifest.as_bytes())?;
        let lock = std::fs::read(self.repo.join("Cargo.lock")).map_err(|e| e.to_string())?;
        write_if_changed(&self.dir.join("Cargo.lock"), &lock)
    }

    /// Runs `cargo build` (or `check`) on the crate; cargo's progress goes to this process's
    /// stderr. An `Err` only when cargo cannot run or burn was rebuilt where it must not be (see
    /// [`Self::check_burn_reused`]); a failed build is `Build { success: false, .. }`.
    pub fn build(&self) -> Result<Build, String> {
        self.build_with(Stdio::inherit())
    }

    /// [`Self::build`] with cargo's stderr (progress, rendered errors) sent to `stderr`.
    pub fn build_with(&self, stderr: Stdio) -> Result<Build, String> {
        let output = cargo()
            .arg(if self.check_only { "check" } else { "build" })
            .args(["--message-format=json", "--manifest-path"])
            .arg(self.dir.join("Cargo.toml"))
            .args(self.release.then_some("--release"))
            .env("CARGO_TARGET_DIR", &self.target)
            .stderr(stderr)
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        // Cargo's JSON messages, one per line (build-script output and the like skipped).
        let messages: Vec<serde_json::Value> =
            output.stdout.split(|&b| b == b'\n').filter_map(|line| serde_json::from_slice(line).ok()).collect();
        self.check_burn_reused(&messages)?;
        Ok(Build { success: output.status.success(), messages })
    }

    /// The built executable.
    pub fn binary(&self) -> PathBuf {
        self.target.join(if self.release { "release" } else { "debug" }).join(&self.name)
    }

    /// In the dev profile the crate should reuse the workspace's build of burn; a compiled
    /// `burn-flex` or `burn-dispatch` means their dependency features drifted apart (see
    /// `WORKSPACE_FEATURES`). Harmless when the crate is built before anything else was, so a
    /// note; an error under `ONNX_BACKEND_REUSE_BURN=1` (the test command, after `cargo test
    /// --workspace`), where the second build would cost CI ten minutes unnoticed.
    fn check_burn_reused(&self, messages: &[serde_json::Value]) -> Result<(), String> {
        // Release, `cargo check` and CUDA builds have a burn of their own.
        if self.release || self.check_only || self.cuda {
            return Ok(());
        }
        let rebuilt = messages.iter().any(|msg| {
            let name = &msg["target"]["name"];
            msg["reason"] == "compiler-artifact"
                && msg["fresh"] == false
                && (name == "burn_flex" || name == "burn_dispatch")
        });
        if !rebuilt {
            return Ok(());
        }
        let why = "burn was compiled for the throwaway crate: if `cargo test --workspace` built it before, their \
                   dependency features differ (onnx-harness: WORKSPACE_FEATURES, SHARED_FEATURES)";
        if std::env::var_os("ONNX_BACKEND_REUSE_BURN").is_some_and(|v| v == "1") {
            return Err(why.to_string());
        }
        eprintln!("note: {why}");
        Ok(())
    }
}

/// Writes `bytes` unless the file already holds them (its time stamp then tells cargo nothing
/// changed).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|existing| existing == bytes) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The main workspace's `[profile.dev]` (its per-package optimisation levels included), as TOML:
/// a crate built with another profile would build burn's crates a second time.
fn workspace_dev_profile(repo: &Path) -> Result<String, String> {
    let path = repo.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let workspace: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let dev = workspace.get("profile").and_then(|p| p.get("dev")).cloned();
    let dev = dev.ok_or_else(|| format!("{} has no [profile.dev]", path.display()))?;
    let mut profile = toml_edit::Table::new();
    profile.set_implicit(true);
    profile.insert("dev", dev);
    let mut doc = toml_edit::DocumentMut::new();
    doc.insert("profile", toml_edit::Item::Table(profile));
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_the_package_and_the_workspace_crates() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("the workspace");
        let dir = std::env::temp_dir().join(format!("onnx-harness-test-{}", std::process::id()));
        let scratch = ScratchCrate {
            dir: dir.clone(),
            name: "some-check".into(),
            repo: repo.clone(),
            target: dir.join("target"),
            release: false,
            check_only: false,
            cuda: false,
        };
        scratch.init().expect("writes");
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(manifest.contains("name = \"some-check\""), "{manifest}");
        assert!(manifest.contains(&format!("path = \"{}/runtime-support\"", repo.display())), "{manifest}");
        assert!(manifest.contains("[profile.dev.package.onnx-macro]"), "{manifest}");
        assert_eq!(scratch.binary(), dir.join("target/debug/some-check"));
    }

    #[test]
    fn a_folder_that_is_not_the_workspace_is_refused() {
        if std::env::var_os("BURN_ONNX_REPO").is_some() {
            return;
        }
        let error = workspace_root(&std::env::temp_dir()).expect_err("not the workspace");
        assert!(error.contains("BURN_ONNX_REPO"), "{error}");
    }
}
