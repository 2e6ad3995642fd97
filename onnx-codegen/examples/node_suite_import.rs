//! Imports every ONNX backend node test of a folder (`<test>/model.onnx`, or `.onnx` files
//! directly) without building burn, and prints `name ok` or `name error: message`, one line
//! each, sorted by name: import coverage measured in seconds.

fn main() {
    let dir = std::env::args().nth(1).expect("usage: node_suite_import <node folder>");
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    cases.sort();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let file = if case.is_dir() { case.join("model.onnx") } else { case.clone() };
        let Ok(bytes) = std::fs::read(file) else { continue };
        let outcome = std::panic::catch_unwind(|| -> Result<(), String> {
            let graph = onnx_ir::import(&bytes, onnx_ir::ImportOptions { simplify: true, ..Default::default() })
                .map_err(|e| e.to_string())?;
            onnx_codegen::model::lower_with(&graph, &[], Some(onnx_codegen::partition::PART_NODES))
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        match outcome {
            Ok(Ok(())) => println!("{name} ok"),
            Ok(Err(e)) => println!("{name} error: {}", e.replace('\n', " ")),
            Err(_) => println!("{name} error: panic"),
        }
    }
}
