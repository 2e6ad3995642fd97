//! Runs the `#![no_std]` digits library on the test split of examples/digits and compares its
//! logits with ONNX Runtime's (written there by `train.py`), as examples/digits's own test does
//! for the std build: max |ours - ORT| <= 1e-4 and the same top-1 classes. Exits 1 otherwise.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../digits/data");
    let (image_dims, pixels) = read_tensor(&data.join("test_images.pb"));
    let (logit_dims, expected) = read_tensor(&data.join("ort_logits.pb"));
    let images = image_dims[0];
    assert_eq!(image_dims, [images, 1, 8, 8], "test_images.pb: [N, 1, 8, 8] images");
    assert_eq!(logit_dims, [images, 10], "ort_logits.pb: [N, 10] logits");

    let model = digits_no_std::model();
    let ours = digits_no_std::logits(&model, &pixels);
    let max_diff = ours.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    let ort_classes: Vec<u8> = expected.chunks(10).map(top1).collect();
    let classes = digits_no_std::classify(&model, &pixels);
    let same = classes.iter().zip(&ort_classes).filter(|(a, b)| a == b).count();
    println!(
        "no_std digits: {images} images, max |ours - ORT| = {max_diff:e}, top-1 class as ORT's for {same}/{images}"
    );
    if ours.len() != expected.len() || max_diff > 1e-4 || same != images {
        eprintln!("the no_std library differs from ONNX Runtime (tolerance 1e-4, every top-1 class)");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The first index of the largest value.
fn top1(row: &[f32]) -> u8 {
    (0..row.len()).fold(0, |best, i| if row[i] > row[best] { i } else { best }) as u8
}

/// The dims and float values of an ONNX `TensorProto` file as `numpy_helper.from_array` writes
/// it (float32 in `raw_data`, or in `float_data`). Read by hand: a protobuf library here would
/// share the workspace's features with the no_std library (see Cargo.toml).
fn read_tensor(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut reader = Reader { bytes: &bytes, at: 0, path };
    let (mut dims, mut values, mut data_type) = (vec![], vec![], 1);
    while reader.at < bytes.len() {
        let key = reader.varint();
        match (key >> 3, key & 7) {
            (1, 0) => dims.push(reader.varint() as usize),
            (1, 2) => {
                let packed = reader.bytes();
                let mut inner = Reader { bytes: packed, at: 0, path };
                while inner.at < packed.len() {
                    dims.push(inner.varint() as usize);
                }
            }
            (2, 0) => data_type = reader.varint(),
            (4, 2) | (9, 2) => {
                values = reader.bytes().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
            }
            (_, wire) => reader.skip(wire),
        }
    }
    assert_eq!(data_type, 1, "{}: float32 (ONNX data type 1) expected", path.display());
    assert_eq!(values.len(), dims.iter().product::<usize>(), "{}: values for its dims", path.display());
    (dims, values)
}

/// Protobuf wire-format fields, in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        let byte = *self.bytes.get(self.at).unwrap_or_else(|| panic!("{}: truncated", self.path.display()));
        self.at += 1;
        byte
    }

    fn varint(&mut self) -> u64 {
        let mut value = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.byte();
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return value;
            }
        }
        panic!("{}: varint longer than 10 bytes", self.path.display())
    }

    fn bytes(&mut self) -> &'a [u8] {
        let len = self.varint() as usize;
        let end = self.at.checked_add(len).filter(|&end| end <= self.bytes.len());
        let end = end.unwrap_or_else(|| panic!("{}: truncated", self.path.display()));
        let field = &self.bytes[self.at..end];
        self.at = end;
        field
    }

    /// Steps over a field of another number (name, doc string, ...).
    fn skip(&mut self, wire: u64) {
        match wire {
            0 => {
                self.varint();
            }
            1 => self.at += 8,
            2 => {
                self.bytes();
            }
            5 => self.at += 4,
            _ => panic!("{}: wire type {wire} not in ONNX tensors", self.path.display()),
        }
    }
}
