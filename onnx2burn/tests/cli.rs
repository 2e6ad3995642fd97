//! The CLI as a user runs it: `--version`, a bad `--name` is an error, not a panic, and errors
//! say what a CLI user can do.

use std::path::Path;
use std::process::{Command, Output};

fn onnx2burn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx2burn")).args(args).output().expect("onnx2burn runs")
}

fn digits() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/digits/model/digits.onnx").display().to_string()
}

fn model(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui-tests/models").join(file).display().to_string()
}

#[test]
fn version_names_the_package_version() {
    let out = onnx2burn(&["--version"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("onnx2burn {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_name_that_is_no_rust_type_is_an_error() {
    let dir = std::env::temp_dir().join(format!("onnx2burn-cli-{}", std::process::id()));
    for name in ["my-model", "fn", "1st", ""] {
        let out = onnx2burn(&[&digits(), &dir.display().to_string(), "--name", name]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(&format!("`{name}` is not a Rust type name")), "{name}: {stderr}");
    }
    assert!(!dir.exists(), "nothing is written for a bad name");
}

#[test]
fn an_unknown_option_is_a_usage_error() {
    let out = onnx2burn(&[&digits(), "out", "--embed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--embed'"));
}

#[test]
fn a_model_with_external_data_writes_code_and_weights() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../onnx-ir/tests/models/external_data");
    let dir = std::env::temp_dir().join(format!("onnx2burn-cli-external-{}", std::process::id()));
    let run = |model: &str, out: &str| {
        let out = onnx2burn(&[&models.join(model).display().to_string(), &dir.join(out).display().to_string()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run("model.onnx", "external");
    run("embedded.onnx", "embedded");
    let read = |path: &str| std::fs::read(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let weights = read("external/model.bpk");
    let same_weights = weights == read("embedded/embedded.bpk");
    let code = String::from_utf8(read("external/model.rs")).expect("utf-8");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(code.contains("pub struct Model"), "{code}");
    assert!(same_weights, "the side file's weights differ from the embedded model's");
}

#[test]
fn unsupported_ops_point_a_cli_user_to_the_macro() {
    let dir = std::env::temp_dir().join(format!("onnx2burn-cli-unsupported-{}", std::process::id()));
    let out = onnx2burn(&[&model("unsupported_ops.onnx"), &dir.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let list = "model contains 2 op(s) with no implementation: example.custom::ChannelScale (1 node), \
                example.custom::ScaleBias (1 node); onnx2burn cannot call user code for them: import the model with \
                #[onnx_model(";
    assert!(stderr.contains(list), "{stderr}");
    assert!(stderr.contains("report the missing ops to burn-onnx"), "{stderr}");
    assert!(!dir.exists(), "nothing is written for a model that cannot be imported");
}

#[test]
fn an_input_without_shape_is_declared_with_input_shape() {
    let dir = std::env::temp_dir().join(format!("onnx2burn-cli-shape-{}", std::process::id()));
    let out_dir = dir.display().to_string();
    let refused = onnx2burn(&[&model("graph_input_no_shape.onnx"), &out_dir, "--no-development"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("graph input `x`: the model gives it no shape") && stderr.contains("--input-shape 'x="));
    let bad = onnx2burn(&[&model("graph_input_no_shape.onnx"), &out_dir, "--input-shape", "x=3"]);
    assert_eq!(bad.status.code(), Some(2), "a declaration that does not parse is a usage error");
    let declared = ["--no-development", "--input-shape", "x=[batch, 3]"];
    let out = onnx2burn(&[&[model("graph_input_no_shape.onnx").as_str(), &out_dir][..], &declared].concat());
    let code = std::fs::read_to_string(dir.join("graph_input_no_shape.rs"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let code = code.expect("the code is written");
    assert!(code.contains("pub fn forward(&self, x: Tensor<2>) -> Tensor<2>"), "{code}");
}

/// `--dim NAME=SIZE` fixes a dim the model names (here `DynamicDimension.0`, with a `.`):
/// `forward` checks it; a name the model does not use is refused.
#[test]
fn dim_sizes_by_name() {
    let dir = std::env::temp_dir().join(format!("onnx2burn-dims-{}", std::process::id()));
    let out_dir = dir.display().to_string();
    let args = [model("named_dims.onnx"), out_dir.clone(), "--no-development".into()];
    let unknown = onnx2burn(
        &[&args[..], &["--dim".into(), "height=3".into()]].concat().iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no graph input has a dim of that name"));
    let bad =
        onnx2burn(&[&args[..], &["--dim".into(), "H".into()]].concat().iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(bad.status.code(), Some(2), "a declaration that does not parse is a usage error");
    let fixed = ["--dim", "DynamicDimension.0=2", "--dim", "W=4"];
    let out = onnx2burn(&[&args.iter().map(String::as_str).collect::<Vec<_>>()[..], &fixed].concat());
    let code = std::fs::read_to_string(dir.join("named_dims.rs"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let code = code.expect("the code is written");
    assert!(code.contains(r#"check_dim(&x.dims(), "x", 0, "DynamicDimension.0", 2);"#), "{code}");
    assert!(code.contains(r#"check_dim(&bias.dims(), "bias", 0, "W", 4);"#), "{code}");
}
